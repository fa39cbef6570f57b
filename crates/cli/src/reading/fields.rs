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

use backpressure_core::field::Selector;

use crate::reading::attribute::Attribute;

/// The envelope's fields: a raw message's labels when no selector is given.
const TENANT_POINTER: &str = "/tenantId";
const KEY_POINTER: &str = "/idempotencyKey";
const OPERATION_POINTER: &str = "/operation";

/// The original message a selector reads: its id, body and attributes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Original<'a> {
    pub(crate) message_id: &'a str,
    /// `None` for a body kept in S3 and not yet read.
    pub(crate) body: Option<&'a str>,
    pub(crate) attributes: &'a BTreeMap<String, Attribute>,
}

impl Original<'_> {
    /// What `selector` finds in this message; `None` when it has nothing there, or an empty value.
    pub(crate) fn select(&self, selector: &Selector) -> Option<String> {
        let attribute = |name: &str| self.attributes.get(name)?.string_value.as_deref();
        selector.select(Some(self.message_id), attribute, self.body)
    }

    fn pointer(&self, pointer: &str) -> Option<String> {
        backpressure_core::field::text_at(self.body?, pointer).filter(|text| !text.is_empty())
    }
}

/// `--tenant-from` and `--key-from`; unset, each message's own labels.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Fields {
    pub(crate) tenant: Option<Selector>,
    pub(crate) key: Option<Selector>,
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
        let original = Original { message_id: "m-1", body: Some(body), attributes: &attributes };
        let labels = Fields::default().of_raw(&original);
        assert_eq!(labels.tenant_id.as_deref(), Some("t-1"));
        assert_eq!(labels.idempotency_key.as_deref(), Some("12345678901234567890"));
        assert_eq!(labels.operation.as_deref(), Some("7"));
        let own = Fields {
            tenant: Some(Selector::parse("/data/customer").unwrap()),
            key: Some(Selector::parse("/orderId").unwrap()),
        };
        let labels = own.of_raw(&original);
        assert_eq!(labels.tenant_id.as_deref(), Some("cus_9"));
        assert_eq!(labels.idempotency_key, None, "an empty key is none");
        let by_attribute = Fields {
            tenant: Some(Selector::parse("attribute:tenant").unwrap()),
            key: Some(Selector::MessageId),
        };
        let labels = by_attribute.of_raw(&original);
        assert_eq!(labels.tenant_id.as_deref(), Some("acme"));
        assert_eq!(labels.idempotency_key.as_deref(), Some("m-1"));
    }

    #[test]
    fn a_record_keeps_its_written_tenant_unless_a_selector_is_given() {
        let attributes = attributes();
        let body = r#"{"data":{"customer":"cus_9"}}"#;
        let original = Original { message_id: "m-1", body: Some(body), attributes: &attributes };
        let written = Labels {
            tenant_id: Some("t-w".into()),
            operation: Some("op".into()),
            ..Labels::default()
        };
        assert_eq!(
            Fields::default().of_record(&original, written.clone()).tenant_id.as_deref(),
            Some("t-w")
        );
        let own = Fields { tenant: Some(Selector::parse("/data/customer").unwrap()), key: None };
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
}
