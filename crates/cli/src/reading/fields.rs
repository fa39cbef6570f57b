//! Where an operator's labels are in a message: the tenant and idempotency
//! key that `--tenant`, `--key` and `stats` read, and the fields `--where`
//! matches, written as the forwarder's `TENANT_FROM` and `IDEMPOTENCY_KEY_FROM`
//! take them (a JSON pointer, `attribute:NAME` or `message-id`).
//!
//! A quarantine record's labels are the ones its consumer wrote; a raw
//! message's are this project's envelope fields (`/tenantId`,
//! `/idempotencyKey`, `/operation`). A selector given on the command line is
//! read from the original message, for records and raw messages alike.

use std::borrow::Cow;
use std::collections::BTreeMap;

use backpressure_core::envelope::Envelope;
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

    /// The envelope `body` is in, by this choice.
    pub(crate) fn of(self, body: Option<&str>) -> Option<Envelope> {
        match self {
            Self::Detect => Envelope::detect(body?),
            Self::None => None,
            Self::Given(envelope) => Some(envelope),
        }
    }
}

/// The original message a selector reads: its id, body and attributes, and
/// the envelope its body is in.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Original<'a> {
    pub(crate) message_id: &'a str,
    /// `None` for a body kept in S3 and not yet read.
    pub(crate) body: Option<&'a str>,
    pub(crate) attributes: &'a BTreeMap<String, Attribute>,
    pub(crate) envelope: Option<Envelope>,
}

impl<'a> Original<'a> {
    /// The message inside the envelope (the body without one), and the
    /// envelope's id; `None` for a body that is not its envelope.
    pub(crate) fn opened(&self) -> Option<(Cow<'a, str>, Option<String>)> {
        let body = self.body?;
        match self.envelope {
            None => Some((Cow::Borrowed(body), None)),
            Some(envelope) => {
                let opened = envelope.open(body).ok()?;
                Some((opened.payload, opened.delivery.id().map(str::to_owned)))
            }
        }
    }

    /// What `selector` finds in this message; `None` when it has nothing there, or an empty value.
    pub(crate) fn select(&self, selector: &Selector) -> Option<String> {
        let attribute = |name: &str| self.attributes.get(name)?.string_value.as_deref();
        let (payload, envelope_id) = self.opened().unzip();
        let envelope_id = envelope_id.flatten();
        selector.select(
            Some(self.message_id),
            envelope_id.as_deref(),
            attribute,
            payload.as_deref(),
        )
    }

    fn pointer(&self, pointer: &str) -> Option<String> {
        let (payload, _) = self.opened()?;
        backpressure_core::field::text_at(&payload, pointer).filter(|text| !text.is_empty())
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
        let original = |fields: &Fields| Original {
            message_id: "m-1",
            body: Some(sns),
            attributes: &attributes,
            envelope: fields.envelope.of(Some(sns)),
        };
        for choice in ["detect", "sns"] {
            let fields = fields(choice);
            let labels = fields.of_raw(&original(&fields));
            assert_eq!(labels.tenant_id.as_deref(), Some("t-in"), "{choice}");
            assert_eq!(labels.idempotency_key.as_deref(), Some("k-in"), "{choice}");
        }
        let wrapper = fields("none");
        assert_eq!(
            wrapper.of_raw(&original(&wrapper)).tenant_id,
            None,
            "the wrapper has no tenant"
        );
        let by_envelope_id = Fields { key: Some(Selector::EnvelopeId), ..fields("detect") };
        let labels = by_envelope_id.of_raw(&original(&by_envelope_id));
        assert_eq!(labels.idempotency_key.as_deref(), Some("sns-1"));
        let eventbridge = fields("eventbridge");
        assert_eq!(eventbridge.of_raw(&original(&eventbridge)).tenant_id, None, "not an event");
        assert!(EnvelopeChoice::parse("sqs").unwrap_err().ends_with("or detect"));
    }
}
