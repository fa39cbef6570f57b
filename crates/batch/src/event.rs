//! The SQS event as Lambda delivers it, decoded so that nothing in one
//! record can fail the batch: every field is optional and bodies stay text
//! until the engine parses them one by one.

pub use crate::source::SourceQueue;
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
#[non_exhaustive]
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

#[cfg(test)]
#[path = "event_tests.rs"]
mod tests;
