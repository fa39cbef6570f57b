//! Where an operator's labels are in a message: the tenant and idempotency
//! key that `--tenant`, `--key` and `stats` read, and the fields `--where`
//! matches, written as the forwarder's `TENANT_FROM` and `IDEMPOTENCY_KEY_FROM`
//! take them (a JSON pointer, `attribute:NAME` or `message-id`).
//!
//! A quarantine record's labels are the ones its consumer wrote; a raw
//! message's are this project's envelope fields (`/tenantId`,
//! `/idempotencyKey`, `/operation`). A selector given on the command line is
//! read from the original message, for records and raw messages alike.

use std::collections::BTreeMap;

use backpressure_core::envelope::{Envelope, Opened};
use backpressure_core::field::Selector;

use crate::reading::attribute::Attribute;

/// The envelope's fields: a raw message's labels when no selector is given.
const TENANT_POINTER: &str = "/tenantId";
const KEY_POINTER: &str = "/idempotencyKey";
const OPERATION_POINTER: &str = "/operation";

/// `--envelope`: the wrapper bodies come in (SNS, EventBridge, S3), whose
/// message selectors read; by default each body's own, detected.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum EnvelopeChoice {
    /// Each body's envelope, when it is one [`Envelope::detect`] knows.
    #[default]
    Detect,
    /// Selectors read the body as it is.
    None,
    /// Every body is in this envelope.
    Given(Envelope),
}

impl EnvelopeChoice {
    /// `detect`, or what [`Envelope::parse`] takes.
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        if text.trim() == "detect" {
            return Ok(Self::Detect);
        }
        match Envelope::parse(text) {
            Ok(Some(envelope)) => Ok(Self::Given(envelope)),
            Ok(None) => Ok(Self::None),
            Err(forms) => Err(format!("{forms}, or detect")),
        }
    }

    /// The envelope `body` is in, by this choice, and what it holds: read
    /// once, for every selector and printout after.
    pub(crate) fn open(self, body: Option<&str>) -> (Option<Envelope>, Option<Inside>) {
        match (self, body) {
            (Self::None, _) | (Self::Detect, None) => (None, None),
            (Self::Detect, Some(body)) => match Envelope::detect_and_open(body) {
                Some((envelope, opened)) => (Some(envelope), Some(Inside::from(opened))),
                None => (None, None),
            },
            (Self::Given(envelope), body) => {
                let opened = body.and_then(|body| envelope.open(body).ok());
                (Some(envelope), opened.map(Inside::from))
            }
        }
    }
}

/// The message an envelope holds, as published, and the envelope's id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Inside {
    pub(crate) payload: String,
    pub(crate) envelope_id: Option<String>,
}

impl From<Opened<'_>> for Inside {
    fn from(opened: Opened<'_>) -> Self {
        let envelope_id = opened.delivery.id().map(str::to_owned);
        Self { payload: opened.payload.into_owned(), envelope_id }
    }
}

/// The original message a selector reads: its id, body and attributes, and
/// the envelope its body is in with what that holds.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Original<'a> {
    pub(crate) message_id: &'a str,
    /// `None` for a body kept in S3 and not yet read.
    pub(crate) body: Option<&'a str>,
    pub(crate) attributes: &'a BTreeMap<String, Attribute>,
    pub(crate) envelope: Option<Envelope>,
    /// `None` in an envelope the body is not.
    pub(crate) inside: Option<&'a Inside>,
}

impl<'a> Original<'a> {
    /// The message inside the envelope (the body without one); `None` for
    /// a body that is not its envelope.
    pub(crate) fn payload(&self) -> Option<&'a str> {
        match self.envelope {
            None => self.body,
            Some(_) => self.inside.map(|inside| inside.payload.as_str()),
        }
    }

    /// What `selector` finds in this message; `None` when it has nothing there, or an empty value.
    pub(crate) fn select(&self, selector: &Selector) -> Option<String> {
        let attribute = |name: &str| self.attributes.get(name)?.string_value.as_deref();
        let envelope_id = self.inside.and_then(|inside| inside.envelope_id.as_deref());
        selector.select(Some(self.message_id), envelope_id, attribute, self.payload())
    }

    fn pointer(&self, pointer: &str) -> Option<String> {
        backpressure_core::field::text_at(self.payload()?, pointer).filter(|text| !text.is_empty())
    }
}

/// `--tenant-from`, `--key-from` and `--envelope`; unset, each message's own labels.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Fields {
    pub(crate) tenant: Option<Selector>,
    pub(crate) key: Option<Selector>,
    pub(crate) envelope: EnvelopeChoice,
}

/// A message's labels, as [`Fields`] find them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Labels {
    pub(crate) tenant_id: Option<String>,
    pub(crate) idempotency_key: Option<String>,
    pub(crate) operation: Option<String>,
}

impl Fields {
    /// The labels of a quarantine record, whose consumer wrote `written`.
    pub(crate) fn of_record(&self, original: &Original<'_>, written: Labels) -> Labels {
        Labels {
            tenant_id: match &self.tenant {
                Some(selector) => original.select(selector),
                None => written.tenant_id.filter(|tenant| !tenant.is_empty()),
            },
            idempotency_key: match &self.key {
                Some(selector) => original.select(selector),
                None => original.pointer(KEY_POINTER),
            },
            operation: written.operation.filter(|operation| !operation.is_empty()),
        }
    }

    /// The labels of a message as it was sent (a dead-lettered one).
    pub(crate) fn of_raw(&self, original: &Original<'_>) -> Labels {
        let select = |given: &Option<Selector>, default: &str| match given {
            Some(selector) => original.select(selector),
            None => original.pointer(default),
        };
        Labels {
            tenant_id: select(&self.tenant, TENANT_POINTER),
            idempotency_key: select(&self.key, KEY_POINTER),
            operation: original.pointer(OPERATION_POINTER),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn attributes() -> BTreeMap<String, Attribute> {
        let tenant = Attribute {
            data_type: "String".into(),
            string_value: Some("acme".into()),
            binary_value: None,
        };
        BTreeMap::from([("tenant".to_owned(), tenant)])
    }

    #[test]
    fn a_raw_message_has_the_envelope_fields_unless_told_otherwise() {
        let attributes = attributes();
        let body = r#"{"tenantId":"t-1","idempotencyKey":12345678901234567890,"operation":7,
            "data":{"customer":"cus_9"},"orderId":""}"#;
        let original = Original {
            message_id: "m-1",
            body: Some(body),
            attributes: &attributes,
            envelope: None,
            inside: None,
        };
        let labels = Fields::default().of_raw(&original);
        assert_eq!(labels.tenant_id.as_deref(), Some("t-1"));
        assert_eq!(labels.idempotency_key.as_deref(), Some("12345678901234567890"));
        assert_eq!(labels.operation.as_deref(), Some("7"));
        let own = Fields {
            tenant: Some(Selector::parse("/data/customer").unwrap()),
            key: Some(Selector::parse("/orderId").unwrap()),
            ..Fields::default()
        };
        let labels = own.of_raw(&original);
        assert_eq!(labels.tenant_id.as_deref(), Some("cus_9"));
        assert_eq!(labels.idempotency_key, None, "an empty key is none");
        let by_attribute = Fields {
            tenant: Some(Selector::parse("attribute:tenant").unwrap()),
            key: Some(Selector::MessageId),
            ..Fields::default()
        };
        let labels = by_attribute.of_raw(&original);
        assert_eq!(labels.tenant_id.as_deref(), Some("acme"));
        assert_eq!(labels.idempotency_key.as_deref(), Some("m-1"));
    }

    #[test]
    fn a_record_keeps_its_written_tenant_unless_a_selector_is_given() {
        let attributes = attributes();
        let body = r#"{"data":{"customer":"cus_9"}}"#;
        let original = Original {
            message_id: "m-1",
            body: Some(body),
            attributes: &attributes,
            envelope: None,
            inside: None,
        };
        let written = Labels {
            tenant_id: Some("t-w".into()),
            operation: Some("op".into()),
            ..Labels::default()
        };
        assert_eq!(
            Fields::default().of_record(&original, written.clone()).tenant_id.as_deref(),
            Some("t-w")
        );
        let own = Fields {
            tenant: Some(Selector::parse("/data/customer").unwrap()),
            ..Fields::default()
        };
        let labels = own.of_record(&original, written);
        assert_eq!(labels.tenant_id.as_deref(), Some("cus_9"));
        assert_eq!(labels.operation.as_deref(), Some("op"));
        let in_s3 = Original { body: None, ..original };
        assert_eq!(
            own.of_record(&in_s3, Labels::default()).tenant_id,
            None,
            "a body in S3 is not read"
        );
    }

    #[test]
    fn selectors_read_inside_an_envelope_given_or_detected() {
        let attributes = attributes();
        let sns = r#"{"Type":"Notification","MessageId":"sns-1","TopicArn":"arn:aws:sns:eu-west-1:1:t",
            "Message":"{\"tenantId\":\"t-in\",\"idempotencyKey\":\"k-in\"}"}"#;
        let fields = |envelope: &str| Fields {
            envelope: EnvelopeChoice::parse(envelope).unwrap(),
            ..Fields::default()
        };
        let labels = |fields: &Fields| {
            let (envelope, inside) = fields.envelope.open(Some(sns));
            let original = Original {
                message_id: "m-1",
                body: Some(sns),
                attributes: &attributes,
                envelope,
                inside: inside.as_ref(),
            };
            fields.of_raw(&original)
        };
        for choice in ["detect", "sns"] {
            let fields = fields(choice);
            let labels = labels(&fields);
            assert_eq!(labels.tenant_id.as_deref(), Some("t-in"), "{choice}");
            assert_eq!(labels.idempotency_key.as_deref(), Some("k-in"), "{choice}");
        }
        let wrapper = fields("none");
        assert_eq!(labels(&wrapper).tenant_id, None, "the wrapper has no tenant");
        let by_envelope_id = Fields { key: Some(Selector::EnvelopeId), ..fields("detect") };
        assert_eq!(labels(&by_envelope_id).idempotency_key.as_deref(), Some("sns-1"));
        let eventbridge = fields("eventbridge");
        assert_eq!(labels(&eventbridge).tenant_id, None, "not an event");
        assert!(EnvelopeChoice::parse("sqs").unwrap_err().ends_with("or detect"));
    }
}
