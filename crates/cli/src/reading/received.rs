//! This queue's copy of a received message: its ids, body and attributes,
//! before it is classified as a quarantine record or a raw message.

use std::collections::BTreeMap;

use aws_sdk_sqs::types::Message;

use crate::reading::attribute::Attribute;
use crate::reading::origin::{self, Origin};

/// What this queue's copy of a message carries, whichever kind it is.
pub(crate) struct Received {
    pub(crate) queue_message_id: String,
    pub(crate) received_id: String,
    pub(crate) receipt_handle: String,
    pub(crate) queue_body: String,
    pub(crate) queue_attributes: BTreeMap<String, String>,
    pub(crate) queue_message_attributes: BTreeMap<String, Attribute>,
    pub(crate) origin: Origin,
}

impl Received {
    /// `None` for a message without id or receipt handle, which SQS never returns.
    pub(crate) fn of(message: &Message) -> Option<Self> {
        let received_id = message.message_id()?.to_owned();
        let receipt_handle = message.receipt_handle()?.to_owned();
        let origin = Origin::of(message);
        let queue_attributes = message
            .attributes()
            .map(|all| all.iter().map(|(k, v)| (k.as_str().to_owned(), v.clone())).collect())
            .unwrap_or_default();
        let queue_message_attributes = message
            .message_attributes()
            .map(|all| {
                all.iter()
                    .filter(|(name, _)| name.as_str() != origin::ATTRIBUTE)
                    .map(|(k, v)| (k.clone(), Attribute::from_sdk(v)))
                    .collect()
            })
            .unwrap_or_default();
        Some(Self {
            queue_message_id: origin.id.clone(),
            received_id,
            receipt_handle,
            queue_body: message.body().unwrap_or_default().to_owned(),
            queue_attributes,
            queue_message_attributes,
            origin,
        })
    }
}
