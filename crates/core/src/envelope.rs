//! Messages as other AWS services deliver them to a queue: the wrapper
//! around the message its producer published, and what is inside it.
//!
//! - SNS: `{"Type":"Notification","MessageId":…,"TopicArn":…,"Message":"<the
//!   published text>",…}`; with raw message delivery, the published text itself.
//! - EventBridge: `{"id":…,"detail-type":…,"source":…,"detail":{…},…}`.
//! - S3 event notifications: `{"Records":[{"eventName":…,"s3":{…}}]}`, and
//!   the one `s3:TestEvent` S3 sends when a notification is set up.
//! - The SQS Extended Client's pointer to a payload kept in S3
//!   ([`S3Pointer`]), which may be the body or the message inside an envelope.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::value::RawValue;

/// Which service's wrapper a queue's bodies come in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Envelope {
    /// An SNS notification (the subscription's raw message delivery off).
    Sns,
    /// An SNS message with raw message delivery on: the body is the
    /// published text, SNS's message attributes are the message's own.
    SnsRaw,
    /// An event an EventBridge rule sent to the queue: its `detail` is the message.
    EventBridge,
    /// An S3 event notification: the notification is the message, and S3's
    /// test event has nothing to process.
    S3,
}

/// What [`Envelope::parse`] takes, for an error that says what to give.
pub const ENVELOPE_FORMS: &str = "give none, sns, sns-raw, eventbridge or s3";

/// Why a body is not the envelope it was said to be: an operator's sentence.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct EnvelopeError(String);

/// A body with its envelope opened: the message as it was published, and
/// what the envelope said about its delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Opened<'a> {
    /// The published message: SNS's `Message`, EventBridge's `detail` (its
    /// JSON text as the envelope has it), an S3 notification whole.
    pub payload: Cow<'a, str>,
    /// What the envelope says of the message's delivery.
    pub delivery: Delivery,
}

/// What an envelope says of the message inside it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Delivery {
    /// Published to an SNS topic.
    Sns {
        /// SNS's `MessageId`, the same on SNS's own redeliveries; `None`
        /// with raw message delivery, which does not pass it on.
        message_id: Option<String>,
        /// The topic's ARN; `None` with raw message delivery.
        topic_arn: Option<String>,
        /// The `Subject` the publisher gave, if any.
        subject: Option<String>,
        /// When SNS accepted the message (`Timestamp`).
        timestamp: Option<String>,
        /// The message attributes' values by name (a binary one base64, as SNS writes it).
        attributes: BTreeMap<String, String>,
    },
    /// Sent by an EventBridge rule.
    EventBridge {
        /// The event's `id`.
        id: String,
        /// `source`, such as `com.example.orders`.
        source: String,
        /// `detail-type`, such as `Order Placed`.
        detail_type: String,
        /// `time`, as the event has it.
        time: Option<String>,
    },
    /// An S3 event notification.
    S3 {
        /// S3's `s3:TestEvent`, sent once when the notification is set up.
        test_event: bool,
    },
}

impl Delivery {
    /// The envelope's own id for the message (SNS's `MessageId`,
    /// EventBridge's `id`): what `envelope-id` selects.
    pub fn id(&self) -> Option<&str> {
        match self {
            Self::Sns { message_id, .. } => message_id.as_deref(),
            Self::EventBridge { id, .. } => Some(id),
            Self::S3 { .. } => None,
        }
    }

    /// Whether there is nothing to process (S3's test event).
    pub fn is_test_event(&self) -> bool {
        matches!(self, Self::S3 { test_event: true })
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct SnsNotification<'a> {
    #[serde(rename = "Type")]
    kind: Cow<'a, str>,
    message_id: String,
    topic_arn: String,
    subject: Option<String>,
    #[serde(borrow)]
    message: Cow<'a, str>,
    timestamp: Option<String>,
    #[serde(default)]
    message_attributes: BTreeMap<String, SnsAttribute>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct SnsAttribute {
    value: String,
}

#[derive(Deserialize)]
struct EventBridgeEvent<'a> {
    id: String,
    source: String,
    #[serde(rename = "detail-type")]
    detail_type: String,
    time: Option<String>,
    #[serde(borrow)]
    detail: &'a RawValue,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct S3Shape<'a> {
    #[serde(default, borrow)]
    records: Option<&'a RawValue>,
    #[serde(default)]
    event: Option<String>,
}

impl Envelope {
    /// `none` (`Ok(None)`), `sns`, `sns-raw`, `eventbridge` or `s3`.
    pub fn parse(text: &str) -> Result<Option<Self>, String> {
        match text.trim() {
            "" | "none" => Ok(None),
            "sns" => Ok(Some(Self::Sns)),
            "sns-raw" => Ok(Some(Self::SnsRaw)),
            "eventbridge" => Ok(Some(Self::EventBridge)),
            "s3" => Ok(Some(Self::S3)),
            _ => Err(ENVELOPE_FORMS.to_owned()),
        }
    }

    /// The name [`Envelope::parse`] takes.
    pub fn name(self) -> &'static str {
        match self {
            Self::Sns => "sns",
            Self::SnsRaw => "sns-raw",
            Self::EventBridge => "eventbridge",
            Self::S3 => "s3",
        }
    }

    /// The envelope `body` is in, when it is one this module knows (raw SNS
    /// delivery has none to see).
    pub fn detect(body: &str) -> Option<Self> {
        Self::detect_and_open(body).map(|(envelope, _)| envelope)
    }

    /// [`Envelope::detect`] and [`Envelope::open`] in one reading of `body`.
    pub fn detect_and_open(body: &str) -> Option<(Self, Opened<'_>)> {
        [Self::Sns, Self::EventBridge, Self::S3]
            .into_iter()
            .filter(|envelope| envelope.may_hold(body))
            .find_map(|envelope| Some((envelope, envelope.open(body).ok()?)))
    }

    /// Whether `body` names the key this envelope cannot be without: a scan
    /// that spares a full parse of every body that is not one.
    fn may_hold(self, body: &str) -> bool {
        match self {
            Self::Sns | Self::SnsRaw => body.contains("\"TopicArn\""),
            Self::EventBridge => body.contains("\"detail-type\""),
            Self::S3 => body.contains("\"Records\"") || body.contains("\"Event\""),
        }
    }

    /// Opens `body`: the message inside, and what the envelope says of it.
    /// A body that is not this envelope is an error saying what is missing.
    pub fn open(self, body: &str) -> Result<Opened<'_>, EnvelopeError> {
        let not = |what: &str, error: serde_json::Error| {
            EnvelopeError(format!("the body is not {what}: {error}"))
        };
        match self {
            Self::Sns => {
                let sns: SnsNotification<'_> = serde_json::from_str(body).map_err(|e| {
                    EnvelopeError(format!(
                        "the body is not an SNS notification ({e}); with raw message \
                         delivery on, the envelope is sns-raw"
                    ))
                })?;
                if sns.kind != "Notification" {
                    return Err(EnvelopeError(format!(
                        "the body is an SNS {:?} message, not a Notification",
                        sns.kind
                    )));
                }
                let attributes =
                    sns.message_attributes.into_iter().map(|(k, v)| (k, v.value)).collect();
                Ok(Opened {
                    payload: sns.message,
                    delivery: Delivery::Sns {
                        message_id: Some(sns.message_id),
                        topic_arn: Some(sns.topic_arn),
                        subject: sns.subject,
                        timestamp: sns.timestamp,
                        attributes,
                    },
                })
            }
            Self::SnsRaw => Ok(Opened {
                payload: Cow::Borrowed(body),
                delivery: Delivery::Sns {
                    message_id: None,
                    topic_arn: None,
                    subject: None,
                    timestamp: None,
                    attributes: BTreeMap::new(),
                },
            }),
            Self::EventBridge => {
                let event: EventBridgeEvent<'_> =
                    serde_json::from_str(body).map_err(|e| not("an EventBridge event", e))?;
                Ok(Opened {
                    payload: Cow::Borrowed(event.detail.get()),
                    delivery: Delivery::EventBridge {
                        id: event.id,
                        source: event.source,
                        detail_type: event.detail_type,
                        time: event.time,
                    },
                })
            }
            Self::S3 => {
                let shape: S3Shape<'_> =
                    serde_json::from_str(body).map_err(|e| not("an S3 event notification", e))?;
                let test_event = match (shape.records, shape.event.as_deref()) {
                    (Some(records), _) if records.get().starts_with('[') => false,
                    (None, Some("s3:TestEvent")) => true,
                    _ => {
                        return Err(EnvelopeError(
                            "the body is not an S3 event notification: it has no Records \
                             array and is not s3:TestEvent"
                                .to_owned(),
                        ));
                    }
                };
                Ok(Opened { payload: Cow::Borrowed(body), delivery: Delivery::S3 { test_event } })
            }
        }
    }
}

impl std::fmt::Display for Envelope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The SQS Extended Client's class names, the first element of its pointer:
/// today's, and the one its 1.x releases (and `use_legacy_attribute`) write.
const POINTER_CLASSES: [&str; 2] = [
    "software.amazon.payloadoffloading.PayloadS3Pointer",
    "com.amazon.sqs.javamessaging.MessageS3Pointer",
];

/// Where the SQS (or SNS) Extended Client put a payload too large for the
/// queue: its body is `["software.amazon.payloadoffloading.PayloadS3Pointer",
/// {"s3BucketName":"…","s3Key":"…"}]`, the Java and Python clients alike
/// (`com.amazon.sqs.javamessaging.MessageS3Pointer` in their legacy form).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct S3Pointer {
    /// The bucket.
    pub bucket: String,
    /// The object's key.
    pub key: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PointerFields {
    s3_bucket_name: String,
    s3_key: String,
}

impl S3Pointer {
    /// The pointer `text` is, or `None` when it is a message of its own.
    pub fn parse(text: &str) -> Option<Self> {
        // Cheap refusal first: nearly every message is not a pointer.
        if !text.trim_start().starts_with('[') || !text.contains("S3Pointer") {
            return None;
        }
        let (class, fields): (String, PointerFields) = serde_json::from_str(text).ok()?;
        POINTER_CLASSES
            .contains(&class.as_str())
            .then_some(Self { bucket: fields.s3_bucket_name, key: fields.s3_key })
    }

    /// `s3://bucket/key`, for an operator.
    pub fn uri(&self) -> String {
        format!("s3://{}/{}", self.bucket, self.key)
    }
}

#[cfg(test)]
mod tests;
