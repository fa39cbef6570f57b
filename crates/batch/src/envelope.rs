//! Messages as other AWS services deliver them to a queue. Set the envelope
//! on the builder ([`crate::Builder::envelope`]) and the processor works on
//! the message inside, of its own type, as on a plain queue:
//!
//! | the queue is fed by | [`Envelope`] | the body type decodes | [`Delivery`] has |
//! |---|---|---|---|
//! | an SNS subscription | `Sns` | SNS's `Message` | `MessageId`, topic, subject, attributes |
//! | one with raw message delivery | `SnsRaw` | the body | the message attributes |
//! | an EventBridge rule | `EventBridge` | the event's `detail` | `id`, `source`, `detail-type` |
//! | S3 event notifications | `S3` | the notification ([`S3Notification`]) | whether it is S3's test event |
//!
//! A payload an SQS or SNS Extended Client offloaded to S3 is read first
//! when the builder has [`OffloadedPayloads`] (feature `offloaded-payloads`).

use serde::Deserialize;

pub use backpressure_core::envelope::{Delivery, Envelope};

#[cfg(feature = "offloaded-payloads")]
#[cfg_attr(docsrs, doc(cfg(feature = "offloaded-payloads")))]
pub use crate::offloaded::{DEFAULT_MAX_PAYLOAD_BYTES, OffloadedPayloads};

use crate::body::JsonBody;

/// An S3 event notification: the objects it is about. S3's test event never
/// reaches a processor ([`crate::report::Outcome::Skipped`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct S3Notification {
    /// One per object event; S3 sends one record per notification.
    pub records: Vec<S3ObjectEvent>,
}

/// One object's event in an [`S3Notification`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct S3ObjectEvent {
    /// `eventName`, such as `ObjectCreated:Put`.
    pub event_name: String,
    /// `eventTime`, as S3 wrote it.
    pub event_time: String,
    /// The bucket's name.
    pub bucket: String,
    /// The object's key, decoded: S3 writes it URL-encoded (`a+b%2Fc` is `a b/c`).
    pub key: String,
    /// The object's size in bytes; S3 gives none for a deletion.
    pub size: Option<u64>,
    /// The object's version, in a versioned bucket.
    pub version_id: Option<String>,
    /// Orders the events of one key: a greater sequencer is a later event.
    pub sequencer: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct NotificationShape {
    records: Vec<RecordShape>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RecordShape {
    event_name: String,
    event_time: String,
    s3: S3Shape,
}

#[derive(Deserialize)]
struct S3Shape {
    bucket: BucketShape,
    object: ObjectShape,
}

#[derive(Deserialize)]
struct BucketShape {
    name: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ObjectShape {
    key: String,
    size: Option<u64>,
    version_id: Option<String>,
    sequencer: Option<String>,
}

impl<'de> Deserialize<'de> for S3Notification {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let shape = NotificationShape::deserialize(deserializer)?;
        let records = shape
            .records
            .into_iter()
            .map(|record| S3ObjectEvent {
                event_name: record.event_name,
                event_time: record.event_time,
                bucket: record.s3.bucket.name,
                key: decoded_key(&record.s3.object.key),
                size: record.s3.object.size,
                version_id: record.s3.object.version_id,
                sequencer: record.s3.object.sequencer,
            })
            .collect();
        Ok(Self { records })
    }
}

impl JsonBody for S3Notification {}

/// A key as S3 writes it in a notification: form-encoded, `+` a space.
fn decoded_key(key: &str) -> String {
    let spaced = key.replace('+', " ");
    percent_encoding::percent_decode_str(&spaced).decode_utf8_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::Body;

    #[test]
    fn an_s3_notification_gives_each_object_with_its_key_decoded() {
        let text = r#"{"Records":[{"eventVersion":"2.1","eventName":"ObjectCreated:Put",
          "eventTime":"2026-12-07T10:00:00.000Z","s3":{"bucket":{"name":"uploads"},
          "object":{"key":"reports/q4+summary%C3%A9.pdf","size":1024,"sequencer":"0A"}}},
          {"eventName":"ObjectRemoved:Delete","eventTime":"2026-12-07T10:00:01.000Z",
          "s3":{"bucket":{"name":"uploads"},"object":{"key":"old.txt"}}}]}"#;
        let notification = S3Notification::decode(text).unwrap();
        let keys: Vec<_> = notification.records.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(keys, ["reports/q4 summaryé.pdf", "old.txt"]);
        assert_eq!(notification.records[0].size, Some(1024));
        assert_eq!(notification.records[1].size, None, "a deletion has no size");
        assert_eq!(notification.records[1].event_name, "ObjectRemoved:Delete");
        let wrong = S3Notification::decode(r#"{"Records":[{"eventName":"x"}]}"#).unwrap_err();
        assert_eq!(wrong.code, crate::ErrorCode::SchemaViolation);
    }
}
