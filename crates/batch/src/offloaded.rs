//! [`OffloadedPayloads`]: messages the SQS (or SNS) Extended Client sent as
//! a pointer to an object in S3, read before they are decoded.

use std::time::Duration;

use aws_sdk_s3::Client;
use aws_sdk_s3::error::ProvideErrorMetadata;
use backpressure_core::envelope::S3Pointer;
use backpressure_core::error::error_chain;
use futures::{StreamExt, stream};
use tokio::time::{Instant, timeout_at};

use crate::body::ContractViolation;
use crate::engine::open::Unopened;
use crate::outcome::ErrorCode;

/// The largest payload read by default: 32 MiB, held in memory while its message is in work.
pub const DEFAULT_MAX_PAYLOAD_BYTES: u64 = 32 * 1024 * 1024;

/// How long an object's first bytes may take by default, from the request on.
pub(crate) const DEFAULT_FIRST_BYTE_TIMEOUT: Duration = Duration::from_secs(5);

/// How long reading a whole object may take by default, from the request on:
/// 32 MiB at a little over 1 MB/s.
pub(crate) const DEFAULT_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// One object's read limits: the first byte by one instant, the whole object
/// by another, each with what a retry says when it was missed.
struct ReadLimits {
    first_byte_by: Instant,
    no_first_byte: String,
    whole_by: Instant,
    not_whole: String,
}

/// Reads the payloads an Extended Client offloaded to S3: a body (or an SNS
/// `Message`) that is its pointer is replaced by the object's text before
/// the body is decoded. The quarantine record keeps the pointer, and the
/// object, so a replay reads it again.
///
/// - A missing object (`NoSuchKey`, `NoSuchBucket`), one larger than
///   [`OffloadedPayloads::max_bytes`] or one that is not UTF-8 is quarantined,
///   its detail naming the bucket and key.
/// - Any other failure (`AccessDenied`, throttling, a 5xx, no first bytes
///   within [`OffloadedPayloads::first_byte_timeout`], not read whole within
///   [`OffloadedPayloads::read_timeout`], no answer before the deadline)
///   retries that message alone: it may pass.
///
/// Each object is read when its message's turn comes, so the messages
/// beside it are worked on while it is read, and a read that stalls holds
/// only its own message (and, on a FIFO queue, the rest of its group). S3 answers `AccessDenied` for a
///   missing key when the role may not `s3:ListBucket` the bucket, so grant
///   it for a missing object to be told apart.
#[derive(Debug, Clone)]
pub struct OffloadedPayloads {
    client: Client,
    max_bytes: u64,
    first_byte_timeout: Duration,
    read_timeout: Duration,
    delete_when_processed: bool,
}

impl OffloadedPayloads {
    /// Reads objects with `client`, up to [`DEFAULT_MAX_PAYLOAD_BYTES`], and keeps them.
    pub fn new(client: Client) -> Self {
        Self {
            client,
            max_bytes: DEFAULT_MAX_PAYLOAD_BYTES,
            first_byte_timeout: DEFAULT_FIRST_BYTE_TIMEOUT,
            read_timeout: DEFAULT_READ_TIMEOUT,
            delete_when_processed: false,
        }
    }

    /// How long an object's first bytes may take, from the request on
    /// (5 s unless set); past it, the message is retried.
    pub fn first_byte_timeout(mut self, timeout: Duration) -> Self {
        self.first_byte_timeout = timeout;
        self
    }

    /// How long reading a whole object may take, from the request on
    /// (30 s unless set); past it, the message is retried.
    pub fn read_timeout(mut self, timeout: Duration) -> Self {
        self.read_timeout = timeout;
        self
    }

    /// The largest object read; a larger one is quarantined unread.
    pub fn max_bytes(mut self, bytes: u64) -> Self {
        self.max_bytes = bytes;
        self
    }

    /// Deletes an object once its message was processed (or was a duplicate),
    /// as the Extended Client's `cleanupS3Payload` does; never one whose
    /// message was quarantined or retried. On Lambda, the event source
    /// mapping deletes the message after the invocation: if that delete
    /// fails, the message comes back without its object and is quarantined
    /// as `offloaded_payload_missing`.
    pub fn delete_when_processed(mut self) -> Self {
        self.delete_when_processed = true;
        self
    }

    /// When the first byte and the whole object must have come, from now,
    /// and what the retry says of each when it did not.
    fn limits(&self, uri: &str, deadline: Instant) -> ReadLimits {
        let started = Instant::now();
        let limit = |timeout: Duration, what: &str| -> (Instant, String) {
            let by = started + timeout;
            if by < deadline {
                (by, format!("{uri} {what} within {} ms", timeout.as_millis()))
            } else {
                (deadline, format!("{uri} {what} before the deadline"))
            }
        };
        let (first_byte_by, no_first_byte) = limit(self.first_byte_timeout, "sent no first byte");
        let (whole_by, not_whole) = limit(self.read_timeout, "was not read whole");
        // Until the first bytes, whichever limit comes first applies.
        let (first_byte_by, no_first_byte) = if whole_by < first_byte_by {
            (whole_by, not_whole.clone())
        } else {
            (first_byte_by, no_first_byte)
        };
        ReadLimits { first_byte_by, no_first_byte, whole_by, not_whole }
    }

    /// The text of the object `pointer` names, or why the message has none:
    /// read within the first-byte and whole-read timeouts, none past `deadline`.
    pub(crate) async fn fetch(
        &self,
        pointer: &S3Pointer,
        deadline: Instant,
    ) -> Result<String, Unopened> {
        let uri = pointer.uri();
        let quarantine =
            |code, detail: String| Unopened::Quarantine(ContractViolation::new(code, detail));
        let ReadLimits { first_byte_by, no_first_byte, whole_by, not_whole } =
            self.limits(&uri, deadline);
        let call = self.client.get_object().bucket(&pointer.bucket).key(&pointer.key).send();
        let object = match timeout_at(first_byte_by, call).await {
            Err(_) => return Err(Unopened::Retry(no_first_byte)),
            Ok(Err(error)) => {
                let detail = format!("{uri} could not be read: {}", error_chain(&error));
                let missing = error.as_service_error().is_some_and(|e| e.is_no_such_key())
                    || matches!(error.code(), Some("NoSuchKey" | "NoSuchBucket"));
                return Err(if missing {
                    quarantine(ErrorCode::OffloadedPayloadMissing, detail)
                } else {
                    Unopened::Retry(detail)
                });
            }
            Ok(Ok(object)) => object,
        };
        let too_large = |bytes: String| {
            quarantine(
                ErrorCode::OffloadedPayloadTooLarge,
                format!("{uri} is {bytes} bytes, above the {} this consumer reads", self.max_bytes),
            )
        };
        let declared = object.content_length().and_then(|n| u64::try_from(n).ok());
        if let Some(bytes) = declared.filter(|&bytes| bytes > self.max_bytes) {
            return Err(too_large(bytes.to_string()));
        }
        let mut body = object.body;
        let mut bytes = Vec::with_capacity(declared.unwrap_or_default().try_into().unwrap_or(0));
        let mut first = true;
        loop {
            // An empty object's end is its first byte.
            let by = if first { first_byte_by } else { whole_by };
            let failure = if first { &no_first_byte } else { &not_whole };
            first = false;
            match timeout_at(by, body.next()).await {
                Err(_) => return Err(Unopened::Retry(failure.clone())),
                Ok(None) => break,
                Ok(Some(Err(error))) => {
                    let detail = format!("{uri} could not be read: {}", error_chain(&error));
                    return Err(Unopened::Retry(detail));
                }
                Ok(Some(Ok(chunk))) => {
                    bytes.extend_from_slice(&chunk);
                    if bytes.len() as u64 > self.max_bytes {
                        return Err(too_large(format!("more than {}", self.max_bytes)));
                    }
                }
            }
        }
        String::from_utf8(bytes).map_err(|error| {
            quarantine(
                ErrorCode::OffloadedPayloadNotText,
                format!("{uri} is not UTF-8 text: {error}"),
            )
        })
    }

    /// Deletes the objects of `processed` messages when so set; a failed
    /// delete leaves the object (and says so), never fails the message.
    pub(crate) async fn delete_processed(&self, processed: Vec<S3Pointer>, deadline: Instant) {
        if !self.delete_when_processed {
            return;
        }
        let deletes = stream::iter(processed).for_each_concurrent(8, |pointer| async move {
            let call = self.client.delete_object().bucket(&pointer.bucket).key(&pointer.key).send();
            let failure = match timeout_at(deadline, call).await {
                Ok(Ok(_)) => return,
                Ok(Err(error)) => error_chain(&error),
                Err(_) => "no answer before the deadline".to_owned(),
            };
            tracing::warn!(object = %pointer.uri(), error = %failure,
                           "the processed message's offloaded payload was not deleted; it stays in S3");
        });
        deletes.await;
    }
}
