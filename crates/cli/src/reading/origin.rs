//! What a message keeps when `--rotate-groups` moves it to the end of its
//! FIFO group: the id, sent time, sequence number and dead-letter source of
//! the message as it first was on this queue. SQS gives the moved copy new
//! ones, so the copy carries them in one message attribute, which this tool
//! reads in place of the copy's own and never replays.

use aws_sdk_sqs::types::{Message, MessageAttributeValue, MessageSystemAttributeName};
use serde::{Deserialize, Serialize};

/// The message attribute a moved copy carries.
pub(crate) const ATTRIBUTE: &str = "sqs-backpressure-origin";

/// A message's first identity on this queue.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Origin {
    /// The message id SQS gave it on this queue.
    pub(crate) id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) sent_timestamp: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) sequence_number: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) dead_letter_queue_source_arn: Option<String>,
    /// The run that moved it last; `None` for a message never moved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) moved_by: Option<String>,
}

impl Origin {
    /// The origin a received message carries, or, never moved, its own.
    pub(crate) fn of(message: &Message) -> Self {
        let carried = message
            .message_attributes()
            .and_then(|all| all.get(ATTRIBUTE))
            .and_then(MessageAttributeValue::string_value)
            .and_then(|json| serde_json::from_str::<Origin>(json).ok())
            .filter(|origin| !origin.id.is_empty());
        carried.unwrap_or_else(|| {
            let system = |name: MessageSystemAttributeName| {
                message.attributes().and_then(|all| all.get(&name)).cloned()
            };
            Self {
                id: message.message_id().unwrap_or_default().to_owned(),
                sent_timestamp: system(MessageSystemAttributeName::SentTimestamp),
                sequence_number: system(MessageSystemAttributeName::SequenceNumber),
                dead_letter_queue_source_arn: system(
                    MessageSystemAttributeName::DeadLetterQueueSourceArn,
                ),
                moved_by: None,
            }
        })
    }

    /// The attribute value for a copy moved by the run `run`.
    pub(crate) fn attribute(&self, run: &str) -> String {
        let origin = Self { moved_by: Some(run.to_owned()), ..self.clone() };
        serde_json::to_string(&origin).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn message(attribute: Option<&str>) -> Message {
        let mut message = Message::builder()
            .message_id("copy-id")
            .attributes(MessageSystemAttributeName::SentTimestamp, "2000")
            .attributes(MessageSystemAttributeName::SequenceNumber, "77");
        if let Some(value) = attribute {
            let value =
                MessageAttributeValue::builder().data_type("String").string_value(value).build();
            message = message.message_attributes(ATTRIBUTE, value.unwrap());
        }
        message.build()
    }

    #[test]
    fn a_message_never_moved_is_its_own_origin() {
        let origin = Origin::of(&message(None));
        assert_eq!(origin.id, "copy-id");
        assert_eq!(origin.sent_timestamp.as_deref(), Some("2000"));
        assert_eq!(origin.sequence_number.as_deref(), Some("77"));
        assert_eq!(origin.moved_by, None);
    }

    #[test]
    fn a_moved_copy_keeps_the_first_identity_through_every_move() {
        let first = Origin {
            id: "first-id".into(),
            sent_timestamp: Some("1000".into()),
            sequence_number: Some("5".into()),
            dead_letter_queue_source_arn: Some("arn:aws:sqs:us-east-1:1:work".into()),
            moved_by: None,
        };
        let once = Origin::of(&message(Some(&first.attribute("run-1"))));
        assert_eq!(once, Origin { moved_by: Some("run-1".into()), ..first.clone() });
        let twice = Origin::of(&message(Some(&once.attribute("run-2"))));
        assert_eq!(twice, Origin { moved_by: Some("run-2".into()), ..first });
    }

    #[test]
    fn an_attribute_that_is_not_ours_is_ignored() {
        for value in ["not json", "{}", r#"{"id":""}"#] {
            assert_eq!(Origin::of(&message(Some(value))).id, "copy-id", "{value}");
        }
    }
}
