//! Poison messages, quarantined: the record an operator reads ([`QuarantineRecord`]),
//! where records are written ([`QuarantineStore`]), and a body kept in S3 when
//! its record would not fit the queue ([`BodyObject`]).

mod object;
mod record;
mod store;

pub use object::BodyObject;
#[cfg(feature = "s3-overflow")]
pub(crate) use object::overflow_key;
pub use record::*;
pub use store::{NoQuarantine, QuarantineError, QuarantineStore};
