//! Where poison messages are written: the [`QuarantineStore`] port, and
//! [`NoQuarantine`] for a processor built without one.

use std::future::Future;
use std::sync::Arc;

use backpressure_core::error::{ApiError, error_chain};

use backpressure_core::quarantine::QuarantineRecord;

/// Why a quarantine write is not confirmed; the message is then retried.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum QuarantineError {
    #[error(
        "the quarantine record is {size} bytes, above the {limit}-byte message limit{}",
        if *.overflow { " even with its body in S3" } else { " (an S3 overflow bucket would keep the body)" }
    )]
    /// The record is larger than the quarantine queue accepts.
    TooLarge {
        /// The record's size as SQS counts it (without its body when `overflow`).
        size: usize,
        /// The quarantine queue's `MaximumMessageSize`, read or as given.
        limit: usize,
        /// Whether the body was already counted out, as an S3 object.
        overflow: bool,
    },
    /// The body, too large for the quarantine queue, was not confirmed by S3.
    #[error("the body could not be written to {uri}")]
    Overflow {
        /// `s3://bucket/key`.
        uri: String,
        /// The `PutObject` call's failure.
        #[source]
        source: Arc<ApiError>,
    },
    /// The quarantine queue's `MaximumMessageSize` could not be read: the
    /// cause first, then what to change.
    #[error("the quarantine queue's MaximumMessageSize could not be read: {}", cause_then_hint(.0))]
    Limit(#[source] Arc<ApiError>),
    #[error("SQS did not accept the entry ({code}: {message})")]
    /// SQS refused the entry.
    Rejected {
        /// SQS's error code for the entry.
        code: String,
        /// SQS's message for the entry.
        message: String,
    },
    /// The whole `SendMessageBatch` call failed.
    #[error("the SendMessageBatch call failed")]
    Call(#[source] Arc<ApiError>),
    /// The record could not be encoded as JSON.
    #[error("the quarantine record could not be encoded")]
    Encode(#[source] Arc<serde_json::Error>),
    /// The SDK refused to build the entry.
    #[error("the entry could not be built: {0}")]
    Invalid(String),
    /// SQS reported neither success nor failure for the entry.
    #[error("no result was reported for the entry")]
    Unreported,
    /// No quarantine was configured ([`NoQuarantine`]).
    #[error("no quarantine is configured: the message is left to the queue's redrive policy")]
    NotConfigured,
    /// The write was cut by the invocation's deadline.
    #[error("the write did not finish before the invocation's deadline")]
    Deadline,
}

/// Why the limit could not be read, then the fix for that cause: no
/// credentials is not a missing permission.
fn cause_then_hint(error: &ApiError) -> String {
    let cause = error_chain(error);
    let hint = if cause.to_ascii_lowercase().contains("credential") {
        "no AWS credentials were found: give the process a role, AWS_PROFILE, or \
         AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
    } else {
        "allow sqs:GetQueueAttributes on the quarantine queue, or give the queue's MaximumMessageSize"
    };
    format!("{cause} ({hint})")
}

/// Durable storage for poison messages.
pub trait QuarantineStore: Send + Sync {
    /// Writes every record; returns one result per record, in order, `Ok`
    /// only when the write is confirmed.
    fn store(
        &self,
        records: &[QuarantineRecord],
    ) -> impl Future<Output = Vec<Result<(), QuarantineError>>> + Send;
}

/// No quarantine: every permanent failure is reported as a batch item
/// failure (`QuarantineError::NotConfigured`), and the queue's redrive
/// policy moves the message to its dead-letter queue after `maxReceiveCount`.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoQuarantine;

impl QuarantineStore for NoQuarantine {
    async fn store(&self, records: &[QuarantineRecord]) -> Vec<Result<(), QuarantineError>> {
        records.iter().map(|_| Err(QuarantineError::NotConfigured)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limits_cause_comes_before_the_hint_that_fits_it() {
        let no_credentials = QuarantineError::Limit(Arc::new(ApiError::new(
            "GetQueueAttributes",
            std::io::Error::other("the credential provider was not enabled: no providers in chain"),
        )));
        let said = error_chain(&no_credentials);
        let cause = said.find("GetQueueAttributes failed").unwrap_or(usize::MAX);
        let hint = said.find("no AWS credentials were found").unwrap_or(0);
        assert!(cause < hint, "{said}");
        assert!(!said.contains("allow sqs:GetQueueAttributes"), "{said}");
        let denied = QuarantineError::Limit(Arc::new(ApiError::new(
            "GetQueueAttributes",
            std::io::Error::other("AccessDenied: not authorized"),
        )));
        let said = error_chain(&denied);
        assert!(said.ends_with("(allow sqs:GetQueueAttributes on the quarantine queue, or give the queue's MaximumMessageSize)"), "{said}");
        assert!(said.contains("AccessDenied: not authorized"), "{said}");
    }
}
