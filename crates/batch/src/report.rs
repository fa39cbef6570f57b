//! What became of a batch: every record's [`Outcome`] (a retry with its
//! [`RetryCause`]), the retried ids, and the partial batch response Lambda
//! reads ([`BatchReport::response`]).

use aws_lambda_events::sqs::SqsBatchResponse;

use std::collections::HashSet;

use crate::backoff::VisibilityChange;
pub use crate::outcome::{Outcome, RetryCause};
use crate::record::{SourceQueue, SqsRecord};

/// Why a batch fails as a whole (on Lambda, the invocation: Lambda then retries
/// the whole batch).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BatchError {
    /// The Lambda payload is not an SQS event (`errorType` `InvalidEvent`).
    #[error("{0}")]
    InvalidEvent(String),
    /// A record without a messageId cannot be listed in `batchItemFailures`.
    #[error(
        "record {position} of the batch has no usable messageId, so it cannot be reported on its own; \
         failing the invocation so that the whole batch is retried"
    )]
    MissingMessageId {
        /// The record's position in the batch, from 0.
        position: usize,
    },
}

/// One record and what became of it.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordOutcome<'r> {
    /// The record, as it came in.
    pub record: &'r SqsRecord,
    /// Its messageId (checked non-empty).
    pub message_id: &'r str,
    /// Its one final outcome.
    pub outcome: Outcome,
}

/// The outcome of every record, in the order of the batch.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct BatchReport<'r> {
    /// One per record, in batch order, each with its record.
    pub outcomes: Vec<RecordOutcome<'r>>,
    /// The messageIds for `batchItemFailures`: each retried message once.
    pub batch_item_failures: Vec<String>,
    /// The queue the batch came from, when the records name it.
    pub(crate) source: Option<SourceQueue>,
    /// The visibility changes SQS confirmed for the retried messages (the
    /// backoff on standard queues; on FIFO queues only when the processor
    /// returns them at once). One refused or cut off is not listed: that
    /// message returns on the queue's own timeout.
    pub(crate) visibility_changes: Vec<VisibilityChange>,
    /// Idempotency store calls that failed or ran out of time in this batch
    /// (pre-check, claims, completions, releases); 0 without a store.
    pub idempotency_store_errors: usize,
}

impl BatchReport<'_> {
    /// The partial batch response Lambda reads: the retried messages' ids.
    pub fn response(&self) -> SqsBatchResponse {
        let mut response = SqsBatchResponse::default();
        for id in &self.batch_item_failures {
            response.add_failure(id.clone());
        }
        response
    }
}

/// The retried ids, each once, in batch order.
pub(crate) fn batch_item_failures(outcomes: &[RecordOutcome<'_>]) -> Vec<String> {
    let mut listed = HashSet::new();
    outcomes
        .iter()
        .filter(|o| o.outcome.is_retry() && listed.insert(o.message_id))
        .map(|o| o.message_id.to_owned())
        .collect()
}
