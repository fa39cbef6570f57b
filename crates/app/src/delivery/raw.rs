//! Bodies as they are (`BODY_FORMAT=raw`): any text is forwarded unchanged,
//! and its idempotency key and tenant are found where the settings say: the
//! message id, a JSON pointer into the body, or a message attribute.

use backpressure_core::config::variables::{BODY_FORMAT, IDEMPOTENCY_KEY_FROM, TENANT_FROM};
use backpressure_core::config::{ConfigError, Vars};
pub(crate) use backpressure_core::field::Selector;
use backpressure_core::field::is_json;

use backpressure_batch::{Body, ContractViolation, Labels, Message};

/// What the forwarder takes its messages' bodies to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum BodyFormat {
    /// This project's work request ([`super::WorkRequest`]): checked, and
    /// its labels read from its fields.
    #[default]
    Envelope,
    /// Any body ([`RawBody`]), POSTed unchanged.
    Raw,
}

impl BodyFormat {
    /// `BODY_FORMAT`; the error names the variable and the value.
    pub fn from_vars<F: Fn(&str) -> Option<String>>(vars: &Vars<F>) -> Result<Self, ConfigError> {
        match vars.get(BODY_FORMAT.name).as_deref().map(str::trim) {
            None | Some("" | "envelope") => Ok(Self::Envelope),
            Some("raw") => Ok(Self::Raw),
            Some(other) => {
                Err(ConfigError::invalid(BODY_FORMAT.name, other, "give envelope or raw"))
            }
        }
    }
}

/// A body taken as it is: never refused, whatever it holds. The settings'
/// pointers read it where it is JSON, at any depth and with numbers of any
/// size ([`backpressure_core::field::text_at`], shared with the operator's
/// CLI), without a tree being built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawBody {
    is_json: bool,
}

impl RawBody {
    /// Whether the body is one JSON text, as RFC 8259 allows it.
    pub fn is_json(&self) -> bool {
        self.is_json
    }
}

impl Body for RawBody {
    fn decode(text: &str) -> Result<Self, ContractViolation> {
        Ok(Self { is_json: is_json(text) })
    }
}

/// Where a raw body's labels are: `IDEMPOTENCY_KEY_FROM` (the message id
/// unless set) and `TENANT_FROM` (none unless set).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RawLabels {
    /// Where the idempotency key is.
    pub key: Selector,
    /// Where the tenant is.
    pub tenant: Option<Selector>,
}

impl Default for RawLabels {
    fn default() -> Self {
        Self { key: Selector::MessageId, tenant: None }
    }
}

impl RawLabels {
    /// Reads `IDEMPOTENCY_KEY_FROM` and `TENANT_FROM`; every bad one is named.
    pub(crate) fn from_vars<F: Fn(&str) -> Option<String>>(
        vars: &Vars<F>,
    ) -> Result<Self, ConfigError> {
        let mut errors = Vec::new();
        let mut read = |name: &'static str| {
            let text = vars.get(name).filter(|text| !text.trim().is_empty())?;
            Selector::parse(&text)
                .map_err(|reason| errors.push(ConfigError::invalid(name, &text, &reason)))
                .ok()
        };
        let key = read(IDEMPOTENCY_KEY_FROM.name).unwrap_or(Selector::MessageId);
        let tenant = read(TENANT_FROM.name);
        ConfigError::all_or(errors, || Self { key, tenant })
    }

    /// The labels of one message, exactly as it has them (a number's JSON
    /// text as written); an empty one is none. A pointer reads the message
    /// inside its envelope; `envelope-id` is the envelope's own id.
    pub(crate) fn of(&self, message: &Message<'_, RawBody>) -> Labels {
        let record = message.record;
        let select = |selector: &Selector| {
            let text = message.decoded.is_json().then_some(message.payload);
            let attribute = |name: &str| record.message_attribute(name);
            let envelope_id = message.delivery.and_then(|delivery| delivery.id());
            selector.select(record.reportable_message_id(), envelope_id, attribute, text)
        };
        Labels::default()
            .idempotency_key(select(&self.key))
            .tenant_id(self.tenant.as_ref().and_then(select).filter(|tenant| !tenant.is_empty()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use backpressure_batch::envelope::Envelope;
    use backpressure_batch::record::SqsRecord;
    use tokio::time::Instant;

    fn labels_of(labels: &RawLabels, record: &SqsRecord, body: &RawBody) -> Labels {
        let text = record.body.as_deref().unwrap_or_default();
        let message = Message {
            message_id: "m-1",
            body: text,
            payload: text,
            delivery: None,
            decoded: body,
            record,
            deadline: Instant::now(),
            claim_lapse: None,
        };
        labels.of(&message)
    }

    #[test]
    fn selectors_parse_and_find_their_labels() {
        let record = SqsRecord::new("m-1")
            .with_body(r#"{"order":{"id":"o-7","n":3,"nested":{}},"ok":true}"#)
            .with_attribute("unused", "x");
        let body = RawBody::decode(record.body.as_deref().unwrap_or_default()).unwrap();
        let select = |text: &str| {
            let labels = RawLabels { key: Selector::parse(text).unwrap(), tenant: None };
            labels_of(&labels, &record, &body).idempotency_key
        };
        assert_eq!(select("message-id").as_deref(), Some("m-1"));
        assert_eq!(select("/order/id").as_deref(), Some("o-7"));
        assert_eq!(select("/order/n").as_deref(), Some("3"));
        assert_eq!(select("/ok").as_deref(), Some("true"));
        assert_eq!(select("/order/nested"), None, "an object is not a label");
        assert_eq!(select("/missing"), None);
        assert_eq!(select("attribute:tenant"), None);
        for bad in ["order.id", "attribute:", "messageid", ""] {
            assert!(Selector::parse(bad).is_err(), "{bad}");
        }
        let text = RawBody::decode("<html>502</html>").unwrap();
        assert!(!text.is_json(), "any text is a raw body");
        let by_order = RawLabels { key: Selector::parse("/order/id").unwrap(), tenant: None };
        assert_eq!(labels_of(&by_order, &record, &text).idempotency_key, None);
    }

    #[test]
    fn inside_an_envelope_pointers_read_the_message_and_envelope_id_its_id() {
        let sns = r#"{"Type":"Notification","MessageId":"sns-9","TopicArn":"arn:aws:sns:eu-west-1:1:t",
            "Message":"{\"orderId\":\"o-7\"}"}"#;
        let record = SqsRecord::new("m-1").with_body(sns);
        let opened = Envelope::Sns.open(sns).unwrap();
        let body = RawBody::decode(&opened.payload).unwrap();
        let message = Message {
            message_id: "m-1",
            body: sns,
            payload: &opened.payload,
            delivery: Some(&opened.delivery),
            decoded: &body,
            record: &record,
            deadline: Instant::now(),
            claim_lapse: None,
        };
        let select = |text: &str| {
            let labels = RawLabels { key: Selector::parse(text).unwrap(), tenant: None };
            labels.of(&message).idempotency_key
        };
        assert_eq!(select("/orderId").as_deref(), Some("o-7"));
        assert_eq!(select("envelope-id").as_deref(), Some("sns-9"));
        assert_eq!(select("message-id").as_deref(), Some("m-1"));
        assert_eq!(select("/MessageId"), None, "the envelope's fields are not the message's");
    }

    #[test]
    fn every_bad_setting_is_named_at_once() {
        let vars = Vars::new(|name| match name {
            "IDEMPOTENCY_KEY_FROM" => Some("order.id".to_owned()),
            "TENANT_FROM" => Some("attribute:".to_owned()),
            "BODY_FORMAT" => Some("xml".to_owned()),
            _ => None,
        });
        let error = RawLabels::from_vars(&vars).unwrap_err().to_string();
        assert!(error.contains("IDEMPOTENCY_KEY_FROM=\"order.id\""), "{error}");
        assert!(error.contains("TENANT_FROM=\"attribute:\""), "{error}");
        let format = BodyFormat::from_vars(&vars).unwrap_err().to_string();
        assert!(format.contains("BODY_FORMAT=\"xml\""), "{format}");
        let defaults = RawLabels::from_vars(&Vars::new(|_| None)).unwrap();
        assert_eq!(defaults, RawLabels::default());
    }
}
