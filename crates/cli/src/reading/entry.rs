//! One message read from a quarantine queue or a dead-letter queue, with what
//! an operator filters, counts and replays by — whichever of the two it came from.

use std::collections::BTreeMap;

use aws_sdk_sqs::types::{Message, MessageSystemAttributeName};
use backpressure_core::envelope::Envelope;
use backpressure_core::quarantine::{BodyObject, QuarantineRecord};
use jiff::Timestamp;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::reading::attribute::Attribute;
use crate::reading::fields::{Fields, Inside, Labels, Original};
use crate::reading::origin::Origin;
use crate::reading::received::Received;

/// Where a message's fields come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum Kind {
    /// A record the consumer or the worker wrote: the diagnosis and the original inside.
    Quarantine,
    /// A message SQS moved to a dead-letter queue, unchanged.
    Raw,
}

/// A message on the queue, classified.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// Its id on this queue: the first one, also after `--rotate-groups` moved it.
    pub(crate) queue_message_id: String,
    /// The id SQS gave the copy received (differs from `queue_message_id` once moved).
    pub(crate) received_id: String,
    pub(crate) receipt_handle: String,
    pub(crate) kind: Kind,
    /// The envelope the original body is in (`--envelope`, or detected).
    pub(crate) envelope: Option<Envelope>,
    /// What that envelope holds; `None` when the body is not in it.
    pub(crate) inside: Option<Inside>,
    /// The id of the message that failed: the record's `messageId`, or the
    /// dead-lettered message's own id (SQS keeps it when it moves a message).
    pub(crate) original_message_id: String,
    pub(crate) error_code: Option<String>,
    pub(crate) error_detail: Option<String>,
    pub(crate) tenant_id: Option<String>,
    pub(crate) operation: Option<String>,
    /// The original message's idempotency key, where `--key-from` says.
    pub(crate) idempotency_key: Option<String>,
    /// The queue the original message came from, when known.
    pub(crate) source_queue_arn: Option<String>,
    pub(crate) group_id: Option<String>,
    /// When it was quarantined (records) or first sent (raw messages).
    pub(crate) at: Option<Timestamp>,
    /// The original message's body, exactly; for a body kept in S3, once
    /// read and checked ([`crate::reading::objects::Objects::fetch`]).
    pub(crate) body: Option<String>,
    /// The S3 object that holds the body, when the record was too large for its queue.
    pub(crate) body_object: Option<BodyObject>,
    /// Why the body in S3 could not be had: missing, altered, unreadable.
    pub(crate) body_problem: Option<String>,
    /// The original message's attributes.
    pub(crate) message_attributes: BTreeMap<String, Attribute>,
    /// This queue's message as received: its body, system attributes and
    /// message attributes (without the origin attribute).
    pub(crate) queue_body: String,
    pub(crate) queue_attributes: BTreeMap<String, String>,
    pub(crate) queue_message_attributes: BTreeMap<String, Attribute>,
    /// Its first identity on this queue.
    pub(crate) origin: Origin,
}

/// A quarantine record, read with the type the consumer and the worker write
/// it with; `None` for a body that is not one, or whose message attributes
/// are not SQS's.
fn quarantine_record(body: &str) -> Option<(QuarantineRecord, BTreeMap<String, Attribute>)> {
    let mut record: QuarantineRecord = serde_json::from_str(body).ok()?;
    let attributes = std::mem::take(&mut record.message_attributes);
    let attributes = serde_json::from_value(Value::Object(attributes)).ok()?;
    Some((record, attributes))
}

impl Entry {
    /// Classifies a received message: a quarantine record when its body is
    /// one (unless `raw`), a raw dead-lettered message otherwise, its labels
    /// where `fields` say. `None` for a message without id or receipt handle,
    /// which SQS never returns.
    pub(crate) fn from_message(message: &Message, raw: bool, fields: &Fields) -> Option<Self> {
        let received = Received::of(message)?;
        let record = if raw { None } else { quarantine_record(&received.queue_body) };
        Some(match record {
            Some((record, message_attributes)) => {
                Self::of_record(received, record, message_attributes, fields)
            }
            None => Self::of_raw(received, fields),
        })
    }

    /// A quarantine record: the diagnosis, and the original message inside.
    fn of_record(
        received: Received,
        record: QuarantineRecord,
        message_attributes: BTreeMap<String, Attribute>,
        fields: &Fields,
    ) -> Self {
        let (envelope, inside) = fields.envelope.open(record.body.as_deref());
        let original = Original {
            message_id: &record.message_id,
            body: record.body.as_deref(),
            attributes: &message_attributes,
            envelope,
            inside: inside.as_ref(),
        };
        let written = Labels {
            tenant_id: record.tenant_id.clone(),
            operation: record.operation.clone(),
            idempotency_key: None,
        };
        let labels = fields.of_record(&original, written);
        Self {
            envelope,
            inside,
            queue_message_id: received.queue_message_id,
            received_id: received.received_id,
            receipt_handle: received.receipt_handle,
            kind: Kind::Quarantine,
            original_message_id: record.message_id,
            error_code: Some(record.error_code),
            error_detail: Some(record.error_detail).filter(|detail| !detail.is_empty()),
            tenant_id: labels.tenant_id,
            operation: labels.operation,
            idempotency_key: labels.idempotency_key,
            source_queue_arn: record.source_queue_arn,
            group_id: record.message_group_id,
            at: record.last_seen.parse().ok(),
            body: record.body,
            body_object: record.body_object,
            body_problem: None,
            message_attributes,
            queue_body: received.queue_body,
            queue_attributes: received.queue_attributes,
            queue_message_attributes: received.queue_message_attributes,
            origin: received.origin,
        }
    }

    /// A message SQS moved here unchanged: it is its own original.
    fn of_raw(received: Received, fields: &Fields) -> Self {
        let Received { queue_message_id, queue_body, queue_attributes, .. } = &received;
        let (envelope, inside) = fields.envelope.open(Some(queue_body));
        let original = Original {
            message_id: queue_message_id,
            body: Some(queue_body),
            attributes: &received.queue_message_attributes,
            envelope,
            inside: inside.as_ref(),
        };
        let labels = fields.of_raw(&original);
        let group_id =
            queue_attributes.get(MessageSystemAttributeName::MessageGroupId.as_str()).cloned();
        let origin = &received.origin;
        let at = origin
            .sent_timestamp
            .as_deref()
            .and_then(|ms| ms.parse::<i64>().ok())
            .and_then(|ms| Timestamp::from_millisecond(ms).ok());
        Self {
            envelope,
            inside,
            original_message_id: received.queue_message_id.clone(),
            kind: Kind::Raw,
            error_code: None,
            error_detail: None,
            tenant_id: labels.tenant_id,
            operation: labels.operation,
            idempotency_key: labels.idempotency_key,
            source_queue_arn: origin.dead_letter_queue_source_arn.clone(),
            group_id,
            at,
            body: Some(received.queue_body.clone()),
            body_object: None,
            body_problem: None,
            message_attributes: received.queue_message_attributes.clone(),
            queue_message_id: received.queue_message_id,
            received_id: received.received_id,
            receipt_handle: received.receipt_handle,
            queue_body: received.queue_body,
            queue_attributes: received.queue_attributes,
            queue_message_attributes: received.queue_message_attributes,
            origin: received.origin,
        }
    }

    /// Which source message this is a record of: its source queue, its id
    /// and its body's SHA-256. A quarantine write whose answer was lost and
    /// which the SDK retried leaves two records with one key; a standard
    /// queue cannot deduplicate them, so a replay does.
    pub(crate) fn source_key(&self) -> String {
        let sha256 = match &self.body_object {
            Some(object) => object.sha256.clone(),
            None => backpressure_core::quarantine::body_hash(self.body.as_deref().unwrap_or("")),
        };
        format!(
            "{} {} {sha256}",
            self.source_queue_arn.as_deref().unwrap_or("-"),
            self.original_message_id
        )
    }

    /// The body kept in S3, read and checked: the entry's body now, and
    /// opened when it has an envelope.
    pub(crate) fn read_from_s3(&mut self, body: String) {
        self.inside = self.envelope.and_then(|envelope| Some(envelope.open(&body).ok()?.into()));
        self.body = Some(body);
    }

    /// The message that failed, for a selector to read.
    pub(crate) fn original(&self) -> Original<'_> {
        Original {
            message_id: &self.original_message_id,
            body: self.body.as_deref(),
            attributes: &self.message_attributes,
            envelope: self.envelope,
            inside: self.inside.as_ref(),
        }
    }

    /// The message group this queue holds the message in (FIFO, or a fair queue's tenant).
    pub(crate) fn queue_group(&self) -> Option<&str> {
        self.queue_attributes
            .get(MessageSystemAttributeName::MessageGroupId.as_str())
            .map(String::as_str)
    }

    /// The entry as one JSON document: what `list --json`, `show` and `export` print.
    pub(crate) fn to_json(&self) -> Value {
        let mut json = Map::new();
        json.insert("queueMessageId".into(), self.queue_message_id.clone().into());
        json.insert("kind".into(), serde_json::to_value(self.kind).unwrap_or(Value::Null));
        json.insert("originalMessageId".into(), self.original_message_id.clone().into());
        json.insert("errorCode".into(), self.error_code.clone().into());
        json.insert("errorDetail".into(), self.error_detail.clone().into());
        json.insert("tenantId".into(), self.tenant_id.clone().into());
        json.insert("operation".into(), self.operation.clone().into());
        json.insert("idempotencyKey".into(), self.idempotency_key.clone().into());
        json.insert("sourceQueueArn".into(), self.source_queue_arn.clone().into());
        json.insert("messageGroupId".into(), self.group_id.clone().into());
        json.insert("at".into(), self.at.map(|t| t.to_string()).into());
        json.insert("body".into(), self.body.clone().into());
        if let Some(envelope) = self.envelope {
            json.insert("envelope".into(), envelope.name().into());
            if let Some(inside) = &self.inside {
                json.insert("envelopeId".into(), inside.envelope_id.clone().into());
                json.insert("payload".into(), inside.payload.clone().into());
            }
        }
        if let Some(object) = &self.body_object {
            json.insert("bodyObject".into(), serde_json::to_value(object).unwrap_or(Value::Null));
        }
        if let Some(problem) = &self.body_problem {
            json.insert("bodyProblem".into(), problem.clone().into());
        }
        json.insert(
            "messageAttributes".into(),
            serde_json::to_value(&self.message_attributes).unwrap_or(Value::Null),
        );
        json.insert("queueBody".into(), self.queue_body.clone().into());
        json.insert(
            "queueAttributes".into(),
            serde_json::to_value(&self.queue_attributes).unwrap_or(Value::Null),
        );
        if self.origin.moved_by.is_some() {
            json.insert("origin".into(), serde_json::to_value(&self.origin).unwrap_or(Value::Null));
        }
        Value::Object(json)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use aws_sdk_sqs::types::MessageAttributeValue;
    use aws_smithy_types::Blob;

    use super::*;
    use crate::reading::fields::EnvelopeChoice;

    fn message(body: &str) -> Message {
        Message::builder()
            .message_id("q-1")
            .receipt_handle("rh")
            .body(body)
            .attributes(MessageSystemAttributeName::SentTimestamp, "1545082649183")
            .attributes(MessageSystemAttributeName::MessageGroupId, "g-raw")
            .message_attributes(
                "bin",
                MessageAttributeValue::builder()
                    .data_type("Binary")
                    .binary_value(Blob::new(vec![0, 1, 255]))
                    .build()
                    .unwrap(),
            )
            .build()
    }

    #[test]
    fn a_quarantine_record_gives_the_original_and_the_diagnosis() {
        let record = serde_json::json!({
            "messageId": "m-1", "sourceQueueArn": "arn:aws:sqs:us-east-1:1:work.fifo",
            "errorCode": "invalid_json", "errorDetail": "not JSON", "tenantId": "t-1",
            "operation": "charge", "lastSeen": "2026-11-30T12:00:00.000Z",
            "remediationStatus": "new", "messageGroupId": "g-1", "body": "{\"a\":\u{0}",
            "attributes": {}, "messageAttributes": {"trace": {"dataType": "String", "stringValue": "x"}}
        });
        let entry =
            Entry::from_message(&message(&record.to_string()), false, &Fields::default()).unwrap();
        assert_eq!(entry.kind, Kind::Quarantine);
        assert_eq!(entry.original_message_id, "m-1");
        assert_eq!(entry.error_code.as_deref(), Some("invalid_json"));
        assert_eq!(entry.tenant_id.as_deref(), Some("t-1"));
        assert_eq!(entry.group_id.as_deref(), Some("g-1"));
        assert_eq!(entry.body.as_deref(), Some("{\"a\":\u{0}"));
        assert_eq!(entry.at.unwrap().to_string(), "2026-11-30T12:00:00Z");
        assert_eq!(entry.message_attributes["trace"].string_value.as_deref(), Some("x"));

        let raw =
            Entry::from_message(&message(&record.to_string()), true, &Fields::default()).unwrap();
        assert_eq!(raw.kind, Kind::Raw, "--raw wins");
    }

    #[test]
    fn anything_else_is_a_raw_message() {
        for body in ["not json", "{\"messageId\":\"x\",\"errorCode\":\"e\"}", "[]", ""] {
            let entry = Entry::from_message(&message(body), false, &Fields::default()).unwrap();
            assert_eq!(entry.kind, Kind::Raw, "{body}");
            assert_eq!(entry.original_message_id, "q-1");
            assert_eq!(entry.body.as_deref(), Some(body));
            assert_eq!(entry.group_id.as_deref(), Some("g-raw"));
            assert_eq!(entry.at.unwrap().as_millisecond(), 1_545_082_649_183);
            assert_eq!(entry.message_attributes["bin"].binary_value.as_deref(), Some("AAH/"));
        }
        let entry = Entry::from_message(
            &message(r#"{"tenantId":"t-2","operation":7}"#),
            false,
            &Fields::default(),
        )
        .unwrap();
        assert_eq!(entry.tenant_id.as_deref(), Some("t-2"));
        assert_eq!(
            entry.operation.as_deref(),
            Some("7"),
            "a number as its JSON text, as the forwarder reads it"
        );
    }

    #[test]
    fn an_envelope_is_opened_once_and_again_for_a_body_read_from_s3() {
        let sns = r#"{"Type":"Notification","MessageId":"sns-1","TopicArn":"arn:aws:sns:eu-west-1:1:t","Message":"{\"tenantId\":\"t-in\"}"}"#;
        let detect = Fields::default();
        let entry = Entry::from_message(&message(sns), false, &detect).unwrap();
        assert_eq!(entry.envelope, Some(Envelope::Sns));
        assert_eq!(entry.tenant_id.as_deref(), Some("t-in"));
        let inside = entry.inside.clone().unwrap();
        assert_eq!(
            (inside.payload.as_str(), inside.envelope_id.as_deref()),
            (r#"{"tenantId":"t-in"}"#, Some("sns-1"))
        );
        assert_eq!(entry.to_json()["envelopeId"], "sns-1");

        let in_s3 = serde_json::json!({
            "messageId": "m-1", "errorCode": "e", "errorDetail": "", "lastSeen": "2026-11-30T12:00:00.000Z",
            "remediationStatus": "new", "attributes": {}, "messageAttributes": {},
            "bodyObject": {"bucket": "b", "key": "k", "bytes": 10, "sha256": "00"}
        });
        let given = Fields { envelope: EnvelopeChoice::Given(Envelope::Sns), ..Fields::default() };
        let mut entry = Entry::from_message(&message(&in_s3.to_string()), false, &given).unwrap();
        assert!(entry.body.is_none() && entry.inside.is_none(), "not read yet");
        entry.read_from_s3(sns.to_owned());
        assert_eq!(
            entry.inside.map(|inside| inside.payload).as_deref(),
            Some(r#"{"tenantId":"t-in"}"#)
        );
    }
}
