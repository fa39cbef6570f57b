//! The SQS event as Lambda delivers it, decoded so that nothing in one
//! record can fail the batch: every field is optional and bodies stay text
//! until the engine parses them one by one.

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::trace::TraceContext;

/// One record of an SQS event. Attributes are kept as delivered, because a
/// quarantine record carries them unchanged.
///
/// Decoded leniently, field by field, rather than with `aws_lambda_events`'
/// `SqsMessage`: there a field of the wrong type (say `"attributes": null`
/// or a numeric `body`) fails the whole event, and with it every message of
/// the batch. Here such a field reads as absent, and only its own record
/// suffers (a record without a usable `messageId` still fails the batch, as
/// it must: it cannot be reported on its own).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SqsRecord {
    /// `messageId`: how the record is reported in `batchItemFailures`.
    pub message_id: Option<String>,
    /// `receiptHandle`: what visibility changes act on.
    pub receipt_handle: Option<String>,
    /// `body`, as sent.
    pub body: Option<String>,
    /// System attributes (`ApproximateReceiveCount`, `MessageGroupId`, `AWSTraceHeader`, …), as strings.
    pub attributes: Map<String, Value>,
    /// Message attributes, as `{"stringValue"|"binaryValue", "dataType"}`.
    pub message_attributes: Map<String, Value>,
    /// `md5OfBody`.
    #[serde(rename = "md5OfBody")]
    pub md5_of_body: Option<String>,
    /// `eventSource`: `aws:sqs`.
    pub event_source: Option<String>,
    /// `eventSourceARN`: the source queue (its `.fifo` suffix turns on FIFO order).
    #[serde(rename = "eventSourceARN")]
    pub event_source_arn: Option<String>,
    /// `awsRegion`.
    pub aws_region: Option<String>,
}

/// Any JSON value; one of the wrong type reads as the field's default.
struct Lenient<T>(T);

impl<'de, T: serde::de::DeserializeOwned + Default> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Ok(Self(serde_json::from_value(value).unwrap_or_default()))
    }
}

/// Field by field, unknown members skipped; a repeated member keeps its last
/// value, as a `serde_json::Map` would (a derived decoder refuses it, which
/// would fail the whole event).
impl<'de> Deserialize<'de> for SqsRecord {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct RecordVisitor;

        impl<'de> Visitor<'de> for RecordVisitor {
            type Value = SqsRecord;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an SQS record object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<SqsRecord, A::Error> {
                let mut record = SqsRecord::default();
                while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    match key.as_ref() {
                        "messageId" => record.message_id = map.next_value::<Lenient<_>>()?.0,
                        "receiptHandle" => {
                            record.receipt_handle = map.next_value::<Lenient<_>>()?.0;
                        }
                        "body" => record.body = map.next_value::<Lenient<_>>()?.0,
                        "attributes" => record.attributes = map.next_value::<Lenient<_>>()?.0,
                        "messageAttributes" => {
                            record.message_attributes = map.next_value::<Lenient<_>>()?.0;
                        }
                        "md5OfBody" => record.md5_of_body = map.next_value::<Lenient<_>>()?.0,
                        "eventSource" => record.event_source = map.next_value::<Lenient<_>>()?.0,
                        "eventSourceARN" => {
                            record.event_source_arn = map.next_value::<Lenient<_>>()?.0;
                        }
                        "awsRegion" => record.aws_region = map.next_value::<Lenient<_>>()?.0,
                        _ => {
                            map.next_value::<de::IgnoredAny>()?;
                        }
                    }
                }
                Ok(record)
            }
        }

        deserializer.deserialize_map(RecordVisitor)
    }
}

impl SqsRecord {
    fn attribute(&self, name: &str) -> Option<&str> {
        self.attributes.get(name).and_then(Value::as_str)
    }

    /// `ApproximateReceiveCount`: 1 on the first delivery.
    pub fn receive_count(&self) -> Option<u32> {
        self.attribute("ApproximateReceiveCount")?.parse().ok()
    }

    /// `SentTimestamp`, in milliseconds since the epoch.
    pub fn sent_timestamp_ms(&self) -> Option<u64> {
        self.attribute("SentTimestamp")?.parse().ok()
    }

    /// `ApproximateFirstReceiveTimestamp`, in milliseconds since the epoch.
    pub fn first_receive_timestamp_ms(&self) -> Option<u64> {
        self.attribute("ApproximateFirstReceiveTimestamp")?.parse().ok()
    }

    /// `MessageGroupId` (FIFO queues).
    pub fn message_group_id(&self) -> Option<&str> {
        self.attribute("MessageGroupId")
    }

    /// The messageId, if it can identify the record in `batchItemFailures`.
    pub fn usable_message_id(&self) -> Option<&str> {
        self.message_id.as_deref().filter(|id| !id.trim().is_empty())
    }

    /// A message attribute's string value (`{"stringValue": ..., "dataType": "String"}`).
    pub fn message_attribute(&self, name: &str) -> Option<&str> {
        self.message_attributes.get(name)?.get("stringValue")?.as_str()
    }

    /// The producer's trace, from the `AWSTraceHeader` system attribute.
    pub fn trace_context(&self) -> Option<TraceContext> {
        TraceContext::from_aws_trace_header(self.attribute("AWSTraceHeader")?)
    }
}

impl AsRef<[SqsRecord]> for SqsEvent {
    fn as_ref(&self) -> &[SqsRecord] {
        &self.records
    }
}

/// An SQS event: `{"Records": [...]}`. Anything else is rejected with a
/// message that says what arrived instead.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct SqsEvent {
    /// Every record of the batch, in order.
    #[serde(rename = "Records")]
    pub records: Vec<SqsRecord>,
}

const NOT_SQS: &str = "the event is not an SQS event: expected an object with a \"Records\" array \
                       (is the function invoked by something other than its SQS event source mapping?)";

impl<'de> Deserialize<'de> for SqsEvent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EventVisitor;

        impl<'de> Visitor<'de> for EventVisitor {
            type Value = SqsEvent;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(NOT_SQS)
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<SqsEvent, A::Error> {
                let mut records = None;
                while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    if key == "Records" {
                        let value: Vec<SqsRecord> = map.next_value().map_err(|e| {
                            de::Error::custom(format!(
                                "the event's Records are not SQS records: {e}"
                            ))
                        })?;
                        records = Some(value);
                    } else {
                        map.next_value::<de::IgnoredAny>()?;
                    }
                }
                records
                    .map(|records| SqsEvent { records })
                    .ok_or_else(|| de::Error::custom(NOT_SQS))
            }
        }

        deserializer.deserialize_any(EventVisitor)
    }
}

/// The `visit_*` methods for a JSON scalar where an object or an array was
/// expected: each names what it found (`what`) and answers with `answer`.
macro_rules! answer_other_kinds {
    (|$what:ident| $answer:expr) => {
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            let $what = "a boolean";
            $answer
        }

        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            let $what = "a number";
            $answer
        }

        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            let $what = "a number";
            $answer
        }

        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            let $what = "a number";
            $answer
        }

        fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
            let $what = "a string";
            $answer
        }

        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            let $what = "null";
            $answer
        }
    };
}

/// What a Lambda function subscribed to SQS may be invoked with: an SQS event,
/// or anything else (a test invoke with the wrong payload, another trigger).
/// Decoding never fails, so the function can answer with an error type of its
/// own (`InvalidEvent`) instead of the runtime's deserializer error; it reads
/// the payload in one streaming pass, as [`SqsEvent`] does.
#[derive(Debug, Clone, PartialEq)]
pub enum IncomingEvent {
    /// An SQS event.
    Sqs(SqsEvent),
    /// Not an SQS event; says what arrived instead.
    NotSqs(String),
}

impl<'de> Deserialize<'de> for IncomingEvent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(IncomingVisitor)
    }
}

struct IncomingVisitor;

fn not_sqs<E>(what: &str) -> Result<IncomingEvent, E> {
    Ok(IncomingEvent::NotSqs(format!("{NOT_SQS}; got {what}")))
}

impl<'de> Visitor<'de> for IncomingVisitor {
    type Value = IncomingEvent;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<IncomingEvent, A::Error> {
        let mut records: Option<Result<Vec<SqsRecord>, String>> = None;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if key == "Records" {
                let value = map.next_value::<LenientRecords>()?.0;
                // As for [`SqsEvent`], where the first unusable `Records` is final.
                if !matches!(records, Some(Err(_))) {
                    records = Some(value);
                }
            } else {
                map.next_value::<de::IgnoredAny>()?;
            }
        }
        match records {
            Some(Ok(records)) => Ok(IncomingEvent::Sqs(SqsEvent { records })),
            Some(Err(what)) => Ok(IncomingEvent::NotSqs(format!(
                "the event's Records are not SQS records: {what}"
            ))),
            None => not_sqs("an object without Records"),
        }
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<IncomingEvent, A::Error> {
        while seq.next_element::<de::IgnoredAny>()?.is_some() {}
        not_sqs("an array")
    }

    answer_other_kinds!(|what| not_sqs(what));
}

/// One element of `Records`: a record (decoded straight from the stream), or
/// what it is instead.
struct RecordOrOther(Result<SqsRecord, &'static str>);

impl<'de> Deserialize<'de> for RecordOrOther {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ElementVisitor;

        impl<'de> Visitor<'de> for ElementVisitor {
            type Value = RecordOrOther;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an SQS record")
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                SqsRecord::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(|record| RecordOrOther(Ok(record)))
            }

            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<de::IgnoredAny>()?.is_some() {}
                Ok(RecordOrOther(Err("an array")))
            }

            answer_other_kinds!(|what| Ok(RecordOrOther(Err(what))));
        }

        deserializer.deserialize_any(ElementVisitor)
    }
}

/// `Records`: an array of objects, or a description of what it is instead.
struct LenientRecords(Result<Vec<SqsRecord>, String>);

impl<'de> Deserialize<'de> for LenientRecords {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct RecordsVisitor;

        impl<'de> Visitor<'de> for RecordsVisitor {
            type Value = LenientRecords;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an array of SQS records")
            }

            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut records = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                let mut bad = None;
                while let Some(item) = seq.next_element::<RecordOrOther>()? {
                    match item.0 {
                        Ok(record) if bad.is_none() => records.push(record),
                        Ok(_) => {}
                        Err(what) => {
                            bad.get_or_insert(format!("record {} is {what}", records.len()));
                        }
                    }
                }
                Ok(LenientRecords(bad.map_or(Ok(records), Err)))
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<de::IgnoredAny, de::IgnoredAny>()?.is_some() {}
                Ok(LenientRecords(Err("an object, not an array".to_owned())))
            }

            answer_other_kinds!(|what| Ok(LenientRecords(Err(format!("{what}, not an array")))));
        }

        deserializer.deserialize_any(RecordsVisitor)
    }
}

/// The source queue, from a record's `eventSourceARN`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceQueue {
    /// The ARN as given.
    pub arn: String,
    /// The queue's region.
    pub region: String,
    /// The owning account.
    pub account: String,
    /// The queue's name.
    pub name: String,
    partition: String,
}

impl SourceQueue {
    /// `arn:{partition}:sqs:{region}:{account}:{name}`, or `None`.
    pub fn from_arn(arn: &str) -> Option<Self> {
        let fields: Vec<&str> = arn.split(':').collect();
        let ["arn", partition, "sqs", region, account, name] = fields[..] else {
            return None;
        };
        if [partition, region, account, name].iter().any(|f| f.is_empty()) {
            return None;
        }
        Some(Self {
            arn: arn.to_owned(),
            region: region.to_owned(),
            account: account.to_owned(),
            name: name.to_owned(),
            partition: partition.to_owned(),
        })
    }

    /// A `.fifo` queue keeps message group order.
    pub fn is_fifo(&self) -> bool {
        self.name.ends_with(".fifo")
    }

    /// The queue URL for API calls on it (such as `ChangeMessageVisibilityBatch`).
    pub fn url(&self) -> String {
        let domain = match self.partition.as_str() {
            "aws-cn" => "amazonaws.com.cn",
            _ => "amazonaws.com",
        };
        format!("https://sqs.{}.{domain}/{}/{}", self.region, self.account, self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_the_documented_sample_and_keeps_attributes() {
        let event: SqsEvent = serde_json::from_str(
            r#"{"Records":[{"messageId":"059f36b4-87a3-44ab-83d2-661975830a7d",
              "receiptHandle":"AQEBwJnKyrHigUMZj6rYigCgxlaS3SLy0a",
              "body":"{\"a\":1}",
              "attributes":{"ApproximateReceiveCount":"3","SentTimestamp":"1545082649183",
                            "SenderId":"AIDAIENQZJOLO23YVJ4VO","ApproximateFirstReceiveTimestamp":"1545082649185"},
              "messageAttributes":{"tenantId":{"stringValue":"t-1","dataType":"String"}},
              "md5OfBody":"e4e68fb7bd0e697a0ae8f1bb342846b3","eventSource":"aws:sqs",
              "eventSourceARN":"arn:aws:sqs:us-east-2:123456789012:my-queue","awsRegion":"us-east-2"}]}"#,
        )
        .unwrap();
        let record = &event.records[0];
        assert_eq!(record.usable_message_id(), Some("059f36b4-87a3-44ab-83d2-661975830a7d"));
        assert_eq!(record.receive_count(), Some(3));
        assert_eq!(record.sent_timestamp_ms(), Some(1_545_082_649_183));
        assert_eq!(record.message_attribute("tenantId"), Some("t-1"));
        assert_eq!(record.body.as_deref(), Some(r#"{"a":1}"#));
    }

    #[test]
    fn a_record_missing_fields_still_decodes() {
        let event: SqsEvent =
            serde_json::from_str(r#"{"Records":[{}, {"messageId":" "}]}"#).unwrap();
        assert_eq!(event.records.len(), 2);
        assert_eq!(event.records[0].usable_message_id(), None);
        assert_eq!(event.records[1].usable_message_id(), None);
    }

    #[test]
    fn a_wrongly_typed_field_reads_as_absent_and_spares_the_other_records() {
        let event: SqsEvent = serde_json::from_str(
            r#"{"Records":[
                {"messageId":"a","body":42,"attributes":null,"messageAttributes":"x","eventSourceARN":7},
                {"messageId":"b","body":"{}","attributes":{"ApproximateReceiveCount":5},"messageAttributes":[]},
                {"messageId":"c","body":"ok","attributes":{"ApproximateReceiveCount":"2"}}
            ]}"#,
        )
        .unwrap();
        let [a, b, c] = &event.records[..] else { panic!("{event:?}") };
        assert_eq!((a.usable_message_id(), a.body.as_deref()), (Some("a"), None));
        assert!(a.attributes.is_empty() && a.message_attributes.is_empty());
        assert_eq!(a.event_source_arn, None);
        assert_eq!(b.receive_count(), None, "a number where SQS sends a string");
        assert_eq!(c.receive_count(), Some(2));
    }

    #[test]
    fn a_repeated_member_keeps_its_last_value_instead_of_failing_the_event() {
        let text = r#"{"Records":[{"messageId":"a","body":42,"body":"x","attributes":{},"attributes":null},
                                   {"messageId":"b","body":"y"}]}"#;
        let event: SqsEvent = serde_json::from_str(text).unwrap();
        assert_eq!(event.records[0].body.as_deref(), Some("x"));
        assert!(event.records[0].attributes.is_empty());
        assert_eq!(event.records[1].body.as_deref(), Some("y"));
        assert!(matches!(serde_json::from_str(text).unwrap(), IncomingEvent::Sqs(_)));
    }

    #[test]
    fn what_is_not_an_sqs_event_says_so() {
        for text in [r#"{"detail-type":"Scheduled Event"}"#, "[]", "42", r#"{"Records": 5}"#] {
            let error = serde_json::from_str::<SqsEvent>(text).unwrap_err().to_string();
            assert!(
                error.contains("not an SQS event") || error.contains("not SQS records"),
                "{text}: {error}"
            );
        }
    }

    #[test]
    fn an_incoming_event_is_sqs_or_says_what_it_is() {
        let sqs: IncomingEvent =
            serde_json::from_str(r#"{"Records":[{"messageId":"a"}],"x":1}"#).unwrap();
        assert!(matches!(sqs, IncomingEvent::Sqs(e) if e.records.len() == 1));
        for (text, says) in [
            (r#"{"detail-type":"Scheduled Event"}"#, "without Records"),
            ("[1,2]", "an array"),
            ("42", "a number"),
            ("null", "null"),
            (r#"{"Records": 5}"#, "a number, not an array"),
            (r#"{"Records": {"a":[1]}}"#, "an object, not an array"),
            (r#"{"Records": [{"messageId":"a"}, 7]}"#, "record 1 is a number"),
            (r#"{"Records": [null]}"#, "record 0 is null"),
            (r#"{"Records": 1, "Records": []}"#, "a number, not an array"),
        ] {
            match serde_json::from_str::<IncomingEvent>(text).unwrap() {
                IncomingEvent::NotSqs(what) => assert!(what.contains(says), "{text}: {what}"),
                other => panic!("{text}: {other:?}"),
            }
        }
        assert!(serde_json::from_str::<IncomingEvent>("{not json").is_err());
    }

    #[test]
    fn source_queue_from_the_arn() {
        let queue =
            SourceQueue::from_arn("arn:aws:sqs:eu-west-1:123456789012:orders.fifo").unwrap();
        assert!(queue.is_fifo());
        assert_eq!(queue.url(), "https://sqs.eu-west-1.amazonaws.com/123456789012/orders.fifo");
        let china = SourceQueue::from_arn("arn:aws-cn:sqs:cn-north-1:123456789012:q").unwrap();
        assert_eq!(china.url(), "https://sqs.cn-north-1.amazonaws.com.cn/123456789012/q");
        assert!(!china.is_fifo());
        assert_eq!(SourceQueue::from_arn("arn:aws:sns:eu-west-1:1:topic"), None);
        assert_eq!(SourceQueue::from_arn("not an arn"), None);
    }
}
