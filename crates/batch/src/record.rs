//! One message as the engine reads it ([`SqsRecord`]), whatever delivered it:
//! a record of the SQS event Lambda passes, or a `ReceiveMessage` message
//! ([`from_message`], feature `sqs`). Decoded so that nothing in one record
//! can fail the batch: every field is optional and bodies stay text until the
//! engine parses them one by one. The `with_*` setters build records in
//! tests. The producer's trace travels with it ([`TraceContext`]).

pub(crate) use crate::source::SourceQueue;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

#[cfg(feature = "sqs")]
#[cfg_attr(docsrs, doc(cfg(feature = "sqs")))]
pub use crate::sqs::record_from_message as from_message;
pub use crate::trace::TraceContext;

/// One record of an SQS event. Attributes are kept as delivered, because a
/// quarantine record carries them unchanged.
///
/// Decoded leniently, field by field, rather than with `aws_lambda_events`'
/// `SqsMessage`: there a field of the wrong type (say `"attributes": null`
/// or a numeric `body`) fails the whole event, and with it every message of
/// the batch. Here such a field reads as absent, and only its own record
/// suffers (a record without a usable `messageId` still fails the batch, as
/// it must: it cannot be reported on its own).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct SqsRecord {
    /// `messageId`: how the record is reported in `batchItemFailures`.
    #[serde(deserialize_with = "lenient")]
    pub message_id: Option<String>,
    /// `receiptHandle`: what visibility changes act on.
    #[serde(deserialize_with = "lenient")]
    pub receipt_handle: Option<String>,
    /// `body`, as sent.
    #[serde(deserialize_with = "lenient")]
    pub body: Option<String>,
    /// System attributes (`ApproximateReceiveCount`, `MessageGroupId`, `AWSTraceHeader`, …), as strings.
    #[serde(deserialize_with = "lenient")]
    pub attributes: Map<String, Value>,
    /// Message attributes, as `{"stringValue"|"binaryValue", "dataType"}`.
    #[serde(deserialize_with = "lenient")]
    pub message_attributes: Map<String, Value>,
    /// `md5OfBody`.
    #[serde(rename = "md5OfBody", deserialize_with = "lenient")]
    pub md5_of_body: Option<String>,
    /// `eventSource`: `aws:sqs`.
    #[serde(deserialize_with = "lenient")]
    pub event_source: Option<String>,
    /// `eventSourceARN`: the source queue (its `.fifo` suffix turns on FIFO order).
    #[serde(rename = "eventSourceARN", deserialize_with = "lenient")]
    pub event_source_arn: Option<String>,
    /// `awsRegion`.
    #[serde(deserialize_with = "lenient")]
    pub aws_region: Option<String>,
}

/// Any JSON value; one of the wrong type reads as the field's default.
fn lenient<'de, D: Deserializer<'de>, T: serde::de::DeserializeOwned + Default>(
    deserializer: D,
) -> Result<T, D::Error> {
    let value = Value::deserialize(deserializer)?;
    Ok(serde_json::from_value(value).unwrap_or_default())
}

impl SqsRecord {
    /// A record with this `messageId` and nothing else, for a converter or a
    /// test to fill in with the `with_` methods (the fields are public too).
    pub fn new(message_id: impl Into<String>) -> Self {
        Self { message_id: Some(message_id.into()), ..Self::default() }
    }

    /// With this body.
    pub fn with_body(mut self, body: impl Into<String>) -> Self {
        self.body = Some(body.into());
        self
    }

    /// With this receipt handle.
    pub fn with_receipt_handle(mut self, receipt_handle: impl Into<String>) -> Self {
        self.receipt_handle = Some(receipt_handle.into());
        self
    }

    /// From this queue (`arn:aws:sqs:{region}:{account}:{name}`; a `.fifo` name keeps group order).
    pub fn with_source_arn(mut self, arn: impl Into<String>) -> Self {
        self.event_source_arn = Some(arn.into());
        self
    }

    /// With this system attribute (`MessageGroupId`, `ApproximateReceiveCount`, …).
    pub fn with_attribute(mut self, name: &str, value: impl Into<String>) -> Self {
        self.attributes.insert(name.to_owned(), Value::String(value.into()));
        self
    }

    fn attribute(&self, name: &str) -> Option<&str> {
        self.attributes.get(name).and_then(Value::as_str)
    }

    /// `ApproximateReceiveCount`: 1 on the first delivery.
    pub fn receive_count(&self) -> Option<u32> {
        self.attribute("ApproximateReceiveCount")?.parse().ok()
    }

    /// `SentTimestamp`, in milliseconds since the epoch.
    pub(crate) fn sent_timestamp_ms(&self) -> Option<u64> {
        self.attribute("SentTimestamp")?.parse().ok()
    }

    /// `ApproximateFirstReceiveTimestamp`, in milliseconds since the epoch.
    pub(crate) fn first_receive_timestamp_ms(&self) -> Option<u64> {
        self.attribute("ApproximateFirstReceiveTimestamp")?.parse().ok()
    }

    /// `MessageGroupId` (FIFO queues).
    pub fn message_group_id(&self) -> Option<&str> {
        self.attribute("MessageGroupId")
    }

    /// The messageId, if it can identify the record in `batchItemFailures`.
    pub fn reportable_message_id(&self) -> Option<&str> {
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

/// An SQS event: `{"Records": [...]}`. Anything else is refused with a
/// message that says what arrived instead.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(try_from = "Value")]
// The engine's input on Lambda, public for the benchmarks and the fuzzer that
// feed it events; a handler never names it.
#[doc(hidden)]
pub struct SqsEvent {
    /// Every record of the batch, in order.
    #[serde(rename = "Records")]
    pub records: Vec<SqsRecord>,
}

/// Any JSON: an SQS event, or an error that says what arrived instead.
impl TryFrom<Value> for SqsEvent {
    type Error = String;

    fn try_from(value: Value) -> Result<Self, String> {
        match IncomingEvent::from(value) {
            IncomingEvent::Sqs(event) => Ok(event),
            IncomingEvent::NotSqs(what) => Err(what),
        }
    }
}

const NOT_SQS: &str = "the event is not an SQS event: expected an object with a \"Records\" array \
                       (is the function invoked by something other than its SQS event source mapping?)";

/// What a Lambda function subscribed to SQS may be invoked with: an SQS event,
/// or anything else (a test invoke with the wrong payload, another trigger).
/// Any JSON decodes, so the function can answer with an error type of its
/// own (`InvalidEvent`) instead of the runtime's deserializer error. A member
/// repeated in the JSON keeps its last value, as in a `serde_json::Map`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(from = "Value")]
pub(crate) enum IncomingEvent {
    /// An SQS event.
    Sqs(SqsEvent),
    /// Not an SQS event; says what arrived instead.
    NotSqs(String),
}

impl From<Value> for IncomingEvent {
    fn from(value: Value) -> Self {
        let records = match value {
            Value::Object(mut event) => match event.remove("Records") {
                Some(Value::Array(records)) => records,
                Some(other) => return records_are(&format!("{}, not an array", kind(&other))),
                None => return not_sqs("an object without Records"),
            },
            other => return not_sqs(kind(&other)),
        };
        let mut decoded = Vec::with_capacity(records.len());
        for (index, record) in records.into_iter().enumerate() {
            let Value::Object(fields) = record else {
                return records_are(&format!("record {index} is {}", kind(&record)));
            };
            // Every field is lenient and defaulted, so an object always decodes.
            match serde_json::from_value(Value::Object(fields)) {
                Ok(record) => decoded.push(record),
                Err(error) => return records_are(&format!("record {index}: {error}")),
            }
        }
        IncomingEvent::Sqs(SqsEvent { records: decoded })
    }
}

fn not_sqs(what: &str) -> IncomingEvent {
    IncomingEvent::NotSqs(format!("{NOT_SQS}; got {what}"))
}

fn records_are(what: &str) -> IncomingEvent {
    IncomingEvent::NotSqs(format!("the event's Records are not SQS records: {what}"))
}

/// What a JSON value is, in the words of a message to a person.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
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
        assert_eq!(record.reportable_message_id(), Some("059f36b4-87a3-44ab-83d2-661975830a7d"));
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
        assert_eq!(event.records[0].reportable_message_id(), None);
        assert_eq!(event.records[1].reportable_message_id(), None);
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
        assert_eq!((a.reportable_message_id(), a.body.as_deref()), (Some("a"), None));
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
        let last: SqsEvent = serde_json::from_str(r#"{"Records": 1, "Records": []}"#).unwrap();
        assert!(last.records.is_empty(), "the last Records counts, as in a serde_json::Map");
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
            (r#"{"Records": [], "Records": 1}"#, "a number, not an array"),
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
