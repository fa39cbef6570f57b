//! Poison messages, quarantined: a message as its record ([`record_for`]),
//! the record itself ([`QuarantineRecord`], the format the operator's CLI
//! reads), and where records are written ([`QuarantineStore`]).

mod record;
mod store;

pub use backpressure_core::quarantine::QuarantineRecord;
pub use record::record_for;
pub use store::{NoQuarantine, QuarantineError, QuarantineStore};
