//! What a processor says about one message, and what finally becomes of it.

use std::borrow::Cow;
use std::fmt;
use std::time::Duration;

/// A stable, machine-readable code for a permanent failure. It is the
/// quarantine record's `errorCode` and a filterable message attribute.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorCode {
    /// The body is not JSON.
    InvalidJson,
    /// The body is JSON but breaks the queue contract.
    SchemaViolation,
    /// `schemaVersion` has a major version this handler does not accept.
    UnsupportedSchemaVersion,
    /// The downstream answered with a 4xx that retrying cannot fix.
    DownstreamRejected,
    /// A code of the user's own processor.
    Custom(Cow<'static, str>),
}

impl ErrorCode {
    pub fn as_str(&self) -> &str {
        match self {
            Self::InvalidJson => "invalid_json",
            Self::SchemaViolation => "schema_violation",
            Self::UnsupportedSchemaVersion => "unsupported_schema_version",
            Self::DownstreamRejected => "downstream_rejected",
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
pub enum Verdict {
    /// Processed: the message is acknowledged.
    Done,
    /// Can never succeed: quarantined, then acknowledged.
    Permanent { code: ErrorCode, detail: String },
    /// May succeed later: returned in `batchItemFailures`, optionally not
    /// before `retry_after`.
    Retry { detail: String, retry_after: Option<Duration> },
}

impl Verdict {
    pub fn permanent(code: ErrorCode, detail: impl Into<String>) -> Self {
        Self::Permanent { code, detail: detail.into() }
    }

    pub fn retry(detail: impl Into<String>) -> Self {
        Self::Retry { detail: detail.into(), retry_after: None }
    }
}

/// Why a message is retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RetryCause {
    /// The processor asked for a retry.
    Processor,
    /// The processor panicked on this message.
    Panicked,
    /// The deadline came before the message finished (or started).
    Deadline,
    /// FIFO: an earlier message of the same group failed, so this one was not processed.
    GroupBlocked,
}

impl RetryCause {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Processor => "processor",
            Self::Panicked => "panicked",
            Self::Deadline => "deadline",
            Self::GroupBlocked => "group_blocked",
        }
    }
}

/// The one final outcome of a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Done,
    Quarantined {
        code: ErrorCode,
    },
    Retry {
        cause: RetryCause,
        detail: String,
        retry_after: Option<Duration>,
    },
    /// A permanent failure whose quarantine record was not confirmed: retried,
    /// so the message is not lost, and still counted as a permanent failure.
    QuarantineFailed {
        code: ErrorCode,
        detail: String,
    },
}

impl Outcome {
    pub fn retry(cause: RetryCause, detail: impl Into<String>) -> Self {
        Self::Retry { cause, detail: detail.into(), retry_after: None }
    }

    pub fn is_retry(&self) -> bool {
        matches!(self, Self::Retry { .. } | Self::QuarantineFailed { .. })
    }
}
