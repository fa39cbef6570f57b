//! Poison messages, quarantined: where records are written
//! ([`QuarantineStore`]: the quarantine queue [`SqsQuarantine`], with bodies
//! too large for it in S3 ([`S3Overflow`]), or [`NoQuarantine`]), the record
//! itself ([`QuarantineRecord`], the format the operator's CLI reads), and
//! why a write failed ([`QuarantineError`]).

#[cfg(feature = "s3-overflow")]
mod overflow;
mod record;
#[cfg(feature = "sqs")]
mod sqs_queue;
mod store;

pub use backpressure_core::quarantine::QuarantineRecord;
#[cfg(feature = "sqs")]
#[cfg_attr(docsrs, doc(cfg(feature = "sqs")))]
pub use backpressure_core::queue::QueueRef;
// Builds a record as the engine does, for the tests, benchmarks and fuzzer
// that need one without running a batch; a store only receives records.
#[doc(hidden)]
pub use record::record_for;
pub use store::{NoQuarantine, QuarantineError, QuarantineStore};

#[cfg(feature = "s3-overflow")]
#[cfg_attr(docsrs, doc(cfg(feature = "s3-overflow")))]
pub use overflow::S3Overflow;
#[cfg(feature = "sqs")]
#[cfg_attr(docsrs, doc(cfg(feature = "sqs")))]
pub use sqs_queue::SqsQuarantine;
