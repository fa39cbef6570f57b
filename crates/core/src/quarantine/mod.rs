//! The quarantine record: everything an operator needs to understand, fix
//! and redrive a poison message, as one JSON document. The library writes it
//! (`backpressure_batch`'s quarantine), the operator's CLI reads it back; this
//! is the format both hold to.

use std::borrow::Cow;
use std::io;

use serde::{Deserialize, Serialize};
use serde_json::ser::Formatter;
use serde_json::{Map, Value};

use crate::sqs_limits::{sqs_accepts, sqs_safe};

mod object;
#[cfg(test)]
mod tests;

pub use object::{BodyObject, body_hash};

/// One poison message, as written to the quarantine queue and as the
/// operator's CLI reads it back. Field names are the JSON's, in camelCase.
/// Reading, only `messageId`, `errorCode` and `remediationStatus` are
/// required: a record written by an older version, or edited by hand, reads
/// with the rest empty.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QuarantineRecord {
    /// The poison message's `messageId`.
    pub message_id: String,
    /// The queue it came from.
    #[serde(default)]
    pub source_queue_arn: Option<String>,
    /// Why it failed: a stable code.
    pub error_code: String,
    /// Why it failed: for a person.
    #[serde(default, deserialize_with = "null_as_default")]
    pub error_detail: String,
    /// Its `schemaVersion`, when readable.
    #[serde(default)]
    pub schema_version: Option<String>,
    /// What it asked for: the envelope's `operation`, or what a body of
    /// its own names.
    #[serde(default)]
    pub operation: Option<String>,
    /// Whose it is: the envelope's `tenantId`, or what a body of its own
    /// names.
    #[serde(default)]
    pub tenant_id: Option<String>,
    /// How many times SQS had delivered it.
    #[serde(default)]
    pub receive_count: Option<u32>,
    /// When SQS accepted the message (`SentTimestamp`), RFC 3339.
    #[serde(default)]
    pub first_seen: Option<String>,
    /// When this handler gave up on it, RFC 3339.
    #[serde(default, deserialize_with = "null_as_default")]
    pub last_seen: String,
    /// Which code gave up on it.
    #[serde(default, deserialize_with = "null_as_default")]
    pub handler_version: String,
    /// `new` until an operator handles it; present in every record (a JSON
    /// body without it is somebody else's message).
    pub remediation_status: String,
    /// Its FIFO message group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_group_id: Option<String>,
    /// The body exactly as sent, for a replay; `None` when it is in
    /// [`QuarantineRecord::body_object`] instead.
    #[serde(default)]
    pub body: Option<String>,
    /// Where the body is when the record with it would not fit the quarantine
    /// queue: an S3 object, with the size and SHA-256 to check it by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_object: Option<BodyObject>,
    /// Its system attributes, unchanged.
    #[serde(default, deserialize_with = "null_as_default")]
    pub attributes: Map<String, Value>,
    /// Its message attributes, unchanged.
    #[serde(default, deserialize_with = "null_as_default")]
    pub message_attributes: Map<String, Value>,
}

/// A field written as `null` (by hand) reads as empty, as a missing one does.
fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

impl QuarantineRecord {
    /// The SQS message attributes to filter quarantined messages by, with
    /// every character SQS refuses replaced by U+FFFD: a filter value needs
    /// no exact copy (the record body has that), but it must be accepted.
    pub fn message_attributes(&self) -> Vec<(&'static str, Cow<'_, str>)> {
        let mut attributes = vec![("errorCode", sqs_safe(&self.error_code))];
        if let Some(tenant) = self.tenant_id.as_deref().filter(|t| !t.is_empty()) {
            attributes.push(("tenantId", sqs_safe(tenant)));
        }
        attributes
    }

    /// The record as the quarantine message's body: JSON in which every
    /// character SQS refuses is written as a `\uXXXX` escape, so SQS accepts
    /// it whatever the poison message's fields decoded to, and a JSON parser
    /// gives back the original text byte for byte.
    pub fn to_sqs_json(&self) -> Result<String, serde_json::Error> {
        let mut out = Vec::with_capacity(self.body.as_ref().map_or(0, String::len) + 512);
        let mut serializer = serde_json::Serializer::with_formatter(&mut out, SqsSafeFormatter);
        self.serialize(&mut serializer)?;
        // serde_json writes only valid UTF-8, and the formatter only ASCII escapes.
        String::from_utf8(out).map_err(|e| serde_json::Error::io(std::io::Error::other(e)))
    }

    /// The size SQS counts against its limits: the body plus each message
    /// attribute's name, data type and value.
    pub fn sqs_size(&self, body: &str) -> usize {
        body.len()
            + self
                .message_attributes()
                .iter()
                .map(|(name, value)| name.len() + "String".len() + value.len())
                .sum::<usize>()
    }
}

/// serde_json's compact output, with characters SQS refuses escaped.
/// serde_json already escapes the control characters below U+0020; this adds
/// the non-characters U+FFFE and U+FFFF (and anything else outside SQS's set).
struct SqsSafeFormatter;

impl Formatter for SqsSafeFormatter {
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut rest = fragment;
        while let Some(at) = rest.find(|c: char| !sqs_accepts(c)) {
            writer.write_all(&rest.as_bytes()[..at])?;
            let c = rest[at..].chars().next().unwrap_or('\u{FFFD}');
            let mut units = [0_u16; 2];
            for unit in c.encode_utf16(&mut units) {
                write!(writer, "\\u{unit:04x}")?;
            }
            rest = &rest[at + c.len_utf8()..];
        }
        writer.write_all(rest.as_bytes())
    }
}
