//! The quarantine record: everything an operator needs to understand, fix
//! and redrive a poison message, as one JSON document.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use std::borrow::Cow;
use std::io;

use serde::{Deserialize, Serialize};
use serde_json::ser::Formatter;
use serde_json::{Map, Value};

use super::object::BodyObject;
use crate::body::PartialRequest;
use crate::event::SqsRecord;
use crate::outcome::ErrorCode;
use backpressure_core::sqs_limits::{sqs_accepts, sqs_safe};
use backpressure_core::time::{checked_rfc3339, rfc3339};

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
    /// its own names ([`crate::Validate::operation`]).
    #[serde(default)]
    pub operation: Option<String>,
    /// Whose it is: the envelope's `tenantId`, or what a body of its own
    /// names ([`crate::Validate::tenant_id`]).
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

/// What the engine knows when it quarantines a message.
#[derive(Debug, Clone, Copy)]
pub struct Failure<'a> {
    /// The failure's code.
    pub code: &'a ErrorCode,
    /// The failure's detail.
    pub detail: &'a str,
    /// The contract fields that were readable.
    pub request: &'a PartialRequest,
}

impl QuarantineRecord {
    /// The record for `record`, given up on at `now`.
    pub fn new(
        record: &SqsRecord,
        failure: Failure<'_>,
        handler_version: &str,
        now: SystemTime,
    ) -> Self {
        Self {
            message_id: record.message_id.clone().unwrap_or_default(),
            source_queue_arn: record.event_source_arn.clone(),
            error_code: failure.code.as_str().to_owned(),
            error_detail: failure.detail.to_owned(),
            schema_version: failure.request.schema_version.clone(),
            operation: failure.request.operation.clone(),
            tenant_id: failure.request.tenant_id.clone(),
            receive_count: record.receive_count(),
            first_seen: record
                .sent_timestamp_ms()
                .and_then(|ms| checked_rfc3339(UNIX_EPOCH + Duration::from_millis(ms))),
            last_seen: rfc3339(now),
            handler_version: handler_version.to_owned(),
            remediation_status: "new".to_owned(),
            message_group_id: record.message_group_id().map(str::to_owned),
            body: record.body.clone(),
            body_object: None,
            attributes: record.attributes.clone(),
            message_attributes: record.message_attributes.clone(),
        }
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_carries_the_original_and_the_diagnosis() {
        let record: SqsRecord = serde_json::from_value(serde_json::json!({
            "messageId": "m-1",
            "body": "not json",
            "attributes": {"ApproximateReceiveCount": "2", "SentTimestamp": "1545082649183", "MessageGroupId": "g"},
            "messageAttributes": {"trace": {"stringValue": "x", "dataType": "String"}},
            "eventSourceARN": "arn:aws:sqs:us-east-1:1:q.fifo"
        }))
        .unwrap();
        let partial = PartialRequest { tenant_id: Some("t-9".into()), ..Default::default() };
        let failure = Failure {
            code: &ErrorCode::InvalidJson,
            detail: "the body is not JSON",
            request: &partial,
        };
        let quarantined =
            QuarantineRecord::new(&record, failure, "your-consumer/0.1.0", UNIX_EPOCH);
        let json = serde_json::to_value(&quarantined).unwrap();
        assert_eq!(json["messageId"], "m-1");
        assert_eq!(json["sourceQueueArn"], "arn:aws:sqs:us-east-1:1:q.fifo");
        assert_eq!(json["errorCode"], "invalid_json");
        assert_eq!(json["errorDetail"], "the body is not JSON");
        assert_eq!(json["tenantId"], "t-9");
        assert_eq!(json["receiveCount"], 2);
        assert_eq!(json["firstSeen"], "2018-12-17T21:37:29.183Z");
        assert_eq!(json["lastSeen"], "1970-01-01T00:00:00.000Z");
        assert_eq!(json["remediationStatus"], "new");
        assert_eq!(json["messageGroupId"], "g");
        assert_eq!(json["body"], "not json");
        assert_eq!(json["messageAttributes"]["trace"]["stringValue"], "x");
        let attributes = quarantined.message_attributes();
        let attributes: Vec<(&str, &str)> =
            attributes.iter().map(|(n, v)| (*n, v.as_ref())).collect();
        assert_eq!(attributes, [("errorCode", "invalid_json"), ("tenantId", "t-9")]);
    }

    #[test]
    fn a_record_reads_back_as_written_and_a_hand_edited_one_reads_with_its_gaps_empty() {
        let written = poisoned("{\"tenantId\":\"\u{0}\"}", "t\u{fffe}");
        let back: QuarantineRecord = serde_json::from_str(&written.to_sqs_json().unwrap()).unwrap();
        assert_eq!(back, written);
        let edited = r#"{"messageId":"m","errorCode":"e","remediationStatus":"new",
            "errorDetail":null,"lastSeen":null,"attributes":null,"tenantId":null}"#;
        let edited: QuarantineRecord = serde_json::from_str(edited).unwrap();
        assert_eq!((edited.error_detail.as_str(), edited.tenant_id), ("", None));
        let not_a_record = r#"{"messageId":"m","errorCode":"e"}"#;
        assert!(serde_json::from_str::<QuarantineRecord>(not_a_record).is_err());
    }

    fn poisoned(body: &str, tenant: &str) -> QuarantineRecord {
        let record: SqsRecord = serde_json::from_value(serde_json::json!({
            "messageId": "m-1", "body": body, "attributes": {}, "messageAttributes": {}
        }))
        .unwrap();
        let partial = PartialRequest { tenant_id: Some(tenant.into()), ..Default::default() };
        let failure = Failure {
            code: &ErrorCode::SchemaViolation,
            detail: &format!("tenantId {tenant:?} is odd"),
            request: &partial,
        };
        QuarantineRecord::new(&record, failure, "v", UNIX_EPOCH)
    }

    #[test]
    fn records_are_acceptable_to_sqs_whatever_the_message_held() {
        let nasty =
            "a\u{0}b\u{1}\u{B}\u{C}\u{1F}\u{7F}\u{FFFE}\u{FFFF}\u{D7FF}\u{E000}😀\u{10FFFF}";
        let record = poisoned(r#"{"tenantId":"\u0000\uffff"}"#, nasty);
        let json = record.to_sqs_json().unwrap();
        assert!(json.chars().all(sqs_accepts), "{json:?}");
        let back: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(back["tenantId"], nasty, "the decoded field survives the escape");
        assert_eq!(back["body"], r#"{"tenantId":"\u0000\uffff"}"#, "the body byte for byte");
        for (_, value) in record.message_attributes() {
            assert!(value.chars().all(sqs_accepts), "{value:?}");
        }
        assert_eq!(
            record.message_attributes()[1].1,
            "a\u{FFFD}b\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}\u{7F}\u{FFFD}\u{FFFD}\u{D7FF}\u{E000}😀\u{10FFFF}"
        );
    }

    #[test]
    fn plain_records_encode_as_serde_json_does() {
        let record = poisoned("not json", "tenant-a");
        assert_eq!(record.to_sqs_json().unwrap(), serde_json::to_string(&record).unwrap());
    }
}
