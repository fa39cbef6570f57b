//! A quarantined body kept in S3 when the record with it would not fit the
//! quarantine queue: what the record says of the object.

use sha2::Digest;

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
    pub fn of(bucket: &str, key: String, body: &str) -> Self {
        Self { bucket: bucket.to_owned(), key, bytes: body.len(), sha256: body_hash(body) }
    }

    /// `s3://bucket/key`, as the audit trail and the logs name it.
    pub fn uri(&self) -> String {
        format!("s3://{}/{}", self.bucket, self.key)
    }

    /// Whether `bytes` are the body this object stands for; `Err` says how they differ.
    pub fn check(&self, bytes: &[u8]) -> Result<(), String> {
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

/// The lowercase hex SHA-256 of `text`: a body object's `sha256`, and the
/// idempotency record's `validation` of a body.
pub fn body_hash(text: &str) -> String {
    hex::encode(sha2::Sha256::digest(text.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_object_checks_size_and_hash() {
        let object = BodyObject::of("b", "k".into(), "hello");
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
