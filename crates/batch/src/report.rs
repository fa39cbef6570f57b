//! What became of a batch: every record's outcome, the retried ids, and the
//! partial batch response Lambda reads.

pub use crate::engine::{BatchError, BatchReport, RecordOutcome};
pub use aws_lambda_events::sqs::SqsBatchResponse;
