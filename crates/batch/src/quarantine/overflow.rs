//! [`S3Overflow`]: the bucket a quarantine record's body goes to when the
//! record with it would not fit the quarantine queue.

use aws_sdk_s3::Client;
use aws_sdk_s3::primitives::ByteStream;
use aws_smithy_types::base64;
use backpressure_core::error::ApiError;

use std::sync::Arc;

use backpressure_core::quarantine::BodyObject;

use super::{QuarantineError, QuarantineRecord};

/// The bucket and key prefix bodies are written to.
#[derive(Debug, Clone)]
pub struct S3Overflow {
    client: Client,
    bucket: String,
    prefix: String,
}

impl S3Overflow {
    /// Bodies go to `bucket` under `prefix` (`""` for none, else ending in `/`).
    pub fn new(client: Client, bucket: impl Into<String>, prefix: impl Into<String>) -> Self {
        Self { client, bucket: bucket.into(), prefix: prefix.into() }
    }

    /// The object `record`'s body goes to: the same for every retry of one message.
    // Public for the overflow benchmark, which writes records as the engine does.
    #[doc(hidden)]
    pub fn object_for(&self, record: &QuarantineRecord) -> BodyObject {
        let body = record.body.as_deref().unwrap_or_default();
        let key =
            overflow_key(&self.prefix, record.source_queue_arn.as_deref(), &record.message_id);
        BodyObject::of(&self.bucket, key, body)
    }

    /// Writes `body` to `object` ([`S3Overflow::object_for`]). The object is
    /// the body's bytes exactly; S3 checks them against the SHA-256 sent with
    /// them, so a confirmed write is the body.
    pub(crate) async fn put(&self, object: &BodyObject, body: &str) -> Result<(), QuarantineError> {
        use sha2::Digest;
        let checksum = base64::encode(sha2::Sha256::digest(body.as_bytes()));
        let written = self
            .client
            .put_object()
            .bucket(&self.bucket)
            .key(&object.key)
            .content_type("text/plain; charset=utf-8")
            .checksum_sha256(checksum)
            .body(ByteStream::from(body.as_bytes().to_vec()))
            .send()
            .await;
        match written {
            Ok(_) => {
                tracing::info!(object = %object.uri(), bytes = object.bytes,
                               "the quarantine record's body is kept in S3: too large for the queue");
                Ok(())
            }
            Err(error) => Err(QuarantineError::Overflow {
                uri: object.uri(),
                source: Arc::new(ApiError::new("PutObject", error)),
            }),
        }
    }
}

/// The S3 key of a quarantined body: `prefix`, the source queue's name, and
/// the message id, each character outside `A–Z a–z 0–9 - _ .` percent-encoded
/// (so a key is the same for every retry of one message, and safe in any tool).
fn overflow_key(prefix: &str, source_queue_arn: Option<&str>, message_id: &str) -> String {
    fn encoded(part: &str, out: &mut String) {
        for byte in part.bytes() {
            if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.') {
                out.push(char::from(byte));
            } else {
                out.push_str(&format!("%{byte:02X}"));
            }
        }
    }
    let queue = source_queue_arn.and_then(|arn| arn.rsplit(':').next()).filter(|q| !q.is_empty());
    let mut key = prefix.to_owned();
    encoded(queue.unwrap_or("unknown-queue"), &mut key);
    key.push('/');
    match message_id {
        "" | "." | ".." => key.push_str("no-message-id"),
        id => encoded(id, &mut key),
    }
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overflow_keys_are_stable_and_safe() {
        let arn = Some("arn:aws:sqs:us-east-1:1:orders.fifo");
        assert_eq!(overflow_key("quarantine/", arn, "0b6a-4d"), "quarantine/orders.fifo/0b6a-4d");
        assert_eq!(overflow_key("", arn, "a b/é"), "orders.fifo/a%20b%2F%C3%A9");
        assert_eq!(overflow_key("p/", None, ""), "p/unknown-queue/no-message-id");
        assert_eq!(overflow_key("p/", Some("arn:x:"), ".."), "p/unknown-queue/no-message-id");
    }
}
