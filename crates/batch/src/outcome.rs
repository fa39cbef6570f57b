//! What a processor says about one message, and what finally becomes of it.

use std::borrow::Cow;
use std::fmt;
use std::time::Duration;

/// A stable, machine-readable code for a permanent failure. It is the
/// quarantine record's `errorCode` and a filterable message attribute.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ErrorCode {
    /// The body is not JSON.
    InvalidJson,
    /// The body is JSON but breaks the queue contract.
    SchemaViolation,
    /// `schemaVersion` has a major version this handler does not accept.
    UnsupportedSchemaVersion,
    /// The downstream answered with a 4xx that retrying cannot fix.
    DownstreamRejected,
    /// The idempotency key was claimed by a message with another body.
    IdempotencyKeyReused,
    /// The message has no idempotency key, and the store requires one.
    MissingIdempotencyKey,
    /// The body is not the envelope the consumer was set up for (an SNS
    /// notification, an EventBridge event, an S3 notification).
    InvalidEnvelope,
    /// The object an SQS Extended Client pointer names is not in S3.
    OffloadedPayloadMissing,
    /// The object an SQS Extended Client pointer names is larger than the
    /// consumer reads.
    OffloadedPayloadTooLarge,
    /// The object an SQS Extended Client pointer names is not UTF-8 text.
    OffloadedPayloadNotText,
    /// A code of the user's own processor.
    Custom(Cow<'static, str>),
}

impl ErrorCode {
    /// The code as written into quarantine records and metrics.
    pub fn as_str(&self) -> &str {
        match self {
            Self::InvalidJson => "invalid_json",
            Self::SchemaViolation => "schema_violation",
            Self::UnsupportedSchemaVersion => "unsupported_schema_version",
            Self::DownstreamRejected => "downstream_rejected",
            Self::IdempotencyKeyReused => "idempotency_key_reused",
            Self::MissingIdempotencyKey => "missing_idempotency_key",
            Self::InvalidEnvelope => "invalid_envelope",
            Self::OffloadedPayloadMissing => "offloaded_payload_missing",
            Self::OffloadedPayloadTooLarge => "offloaded_payload_too_large",
            Self::OffloadedPayloadNotText => "offloaded_payload_not_text",
            Self::Custom(code) => code,
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A processor's answer for one message.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Verdict {
    /// Processed: the message is acknowledged.
    Done,
    /// Processed, with a result the idempotency store keeps for duplicates
    /// ([`Outcome::Duplicate`]); without a store, the same as `Done`.
    DoneWith {
        /// What the processing produced (a receipt, an id), as text.
        result: String,
    },
    /// Can never succeed: quarantined, then acknowledged.
    Permanent {
        /// The quarantine record's `errorCode`.
        code: ErrorCode,
        /// What is wrong, for an operator.
        detail: String,
    },
    /// May succeed later: returned in `batchItemFailures`, optionally not
    /// before `retry_after`.
    Retry {
        /// What happened, for the logs.
        detail: String,
        /// Not before this long (a downstream's `Retry-After`).
        retry_after: Option<Duration>,
    },
}

impl Verdict {
    /// A permanent failure with this code.
    pub fn permanent(code: ErrorCode, detail: impl Into<String>) -> Self {
        Self::Permanent { code, detail: detail.into() }
    }

    /// Processed, with a result kept for the key's duplicates.
    pub fn done_with(result: impl Into<String>) -> Self {
        Self::DoneWith { result: result.into() }
    }

    /// A retry, after the queue's (or the backoff's) delay.
    pub fn retry(detail: impl Into<String>) -> Self {
        Self::Retry { detail: detail.into(), retry_after: None }
    }
}

/// Why a message is retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum RetryCause {
    /// The processor asked for a retry.
    Processor,
    /// The processor panicked on this message.
    Panicked,
    /// The deadline came before the message finished (or started).
    Deadline,
    /// FIFO: an earlier message of the same group failed, so this one was not processed.
    GroupBlocked,
    /// Another consumer holds the message's idempotency key; not visible
    /// again before its lease ends.
    ClaimContended,
    /// The idempotency store did not answer the claim: not processed.
    IdempotencyStore,
    /// The payload offloaded to S3 could not be read now (denied, throttled,
    /// unanswered): not processed.
    OffloadedPayload,
}

impl RetryCause {
    /// The cause as written into logs and metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Processor => "processor",
            Self::Panicked => "panicked",
            Self::Deadline => "deadline",
            Self::GroupBlocked => "group_blocked",
            Self::ClaimContended => "claim_contended",
            Self::IdempotencyStore => "idempotency_store",
            Self::OffloadedPayload => "offloaded_payload",
        }
    }
}

/// The one final outcome of a record.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// Processed: deleted from the queue.
    Done,
    /// Nothing in it to process (S3's test event): deleted without processing.
    Skipped,
    /// Its idempotency key was already completed: deleted without processing.
    Duplicate {
        /// What the first processing returned ([`Verdict::DoneWith`]).
        result: Option<String>,
    },
    /// Permanently failed, and its quarantine record confirmed written: deleted.
    Quarantined {
        /// Why it failed.
        code: ErrorCode,
    },
    /// Returned to the queue through `batchItemFailures`.
    Retry {
        /// Why.
        cause: RetryCause,
        /// What happened, for the logs.
        detail: String,
        /// The earliest the downstream asked to be tried again.
        retry_after: Option<Duration>,
    },
    /// A permanent failure whose quarantine record was not confirmed: retried,
    /// so the message is not lost, and still counted as a permanent failure.
    QuarantineFailed {
        /// Why it failed.
        code: ErrorCode,
        /// The processor's detail of the failure, then why its quarantine
        /// write was not confirmed.
        detail: String,
    },
}

impl Outcome {
    /// A retry for `cause`.
    pub(crate) fn retry(cause: RetryCause, detail: impl Into<String>) -> Self {
        Self::Retry { cause, detail: detail.into(), retry_after: None }
    }

    /// Whether the message goes back to the queue.
    pub(crate) fn is_retry(&self) -> bool {
        matches!(self, Self::Retry { .. } | Self::QuarantineFailed { .. })
    }
}

/// What a processor may return: a [`Verdict`], or a `Result` whose error
/// says which verdict it is (`Ok(())` is [`Verdict::Done`]), so `?` works in
/// a processor.
pub trait IntoVerdict {
    /// The verdict this value stands for.
    fn into_verdict(self) -> Verdict;
}

impl IntoVerdict for Verdict {
    fn into_verdict(self) -> Verdict {
        self
    }
}

impl<E: Into<Verdict>> IntoVerdict for Result<(), E> {
    fn into_verdict(self) -> Verdict {
        self.map_or_else(Into::into, |()| Verdict::Done)
    }
}
