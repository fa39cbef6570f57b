//! A quarantined body kept in S3 when the record with it would not fit the
//! quarantine queue: what the record says of the object, and its key.

use serde::{Deserialize, Serialize};

/// A quarantined body kept in S3 (the claim-check pattern): the record names
/// the object and says what its bytes must be.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BodyObject {
    /// The bucket.
    pub bucket: String,
    /// The object's key: the prefix, the source queue's name and the message id.
    pub key: String,
    /// The body's length in bytes.
    pub bytes: usize,
    /// The body's SHA-256, lowercase hex.
    pub sha256: String,
}

impl BodyObject {
    /// The object for `body` at `bucket`/`key`.
    pub(crate) fn describe(bucket: &str, key: String, body: &str) -> Self {
        use sha2::Digest;
        Self {
            bucket: bucket.to_owned(),
            key,
            bytes: body.len(),
            sha256: hex::encode(sha2::Sha256::digest(body.as_bytes())),
        }
    }

    /// `s3://bucket/key`, as the audit trail and the logs name it.
    pub fn uri(&self) -> String {
        format!("s3://{}/{}", self.bucket, self.key)
    }

    /// Whether `bytes` are the body this object stands for; `Err` says how they differ.
    pub fn check(&self, bytes: &[u8]) -> Result<(), String> {
        use sha2::Digest;
        if bytes.len() != self.bytes {
            return Err(format!(
                "{} holds {} bytes, the record says {}",
                self.uri(),
                bytes.len(),
                self.bytes
            ));
        }
        let sha256 = hex::encode(sha2::Sha256::digest(bytes));
        if sha256 != self.sha256 {
            return Err(format!(
                "{} has SHA-256 {sha256}, the record says {}",
                self.uri(),
                self.sha256
            ));
        }
        Ok(())
    }
}

/// The S3 key of a quarantined body: `prefix`, the source queue's name, and
/// the message id, each character outside `A–Z a–z 0–9 - _ .` percent-encoded
/// (so a key is the same for every retry of one message, and safe in any tool).
pub(crate) fn overflow_key(
    prefix: &str,
    source_queue_arn: Option<&str>,
    message_id: &str,
) -> String {
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

    #[test]
    fn a_body_object_checks_size_and_hash() {
        let object = BodyObject::describe("b", "k".into(), "hello");
        assert_eq!(object.bytes, 5);
        assert_eq!(
            object.sha256,
            "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
        );
        assert_eq!(object.check(b"hello"), Ok(()));
        assert!(object.check(b"hell").unwrap_err().contains("holds 4 bytes"));
        assert!(object.check(b"jello").unwrap_err().contains("SHA-256"));
        assert_eq!(object.uri(), "s3://b/k");
    }
}
