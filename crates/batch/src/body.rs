//! The message body a processor works on: any `serde::Deserialize` type
//! of the user's (as `aws_lambda_events::sqs::SqsEventObj<T>` and Powertools'
//! `model=` allow). A body that cannot be decoded never succeeds on a retry,
//! so it is a permanent failure with a stable error code.

use std::borrow::Cow;

use serde::de::DeserializeOwned;
use serde_json::error::Category;

use crate::outcome::ErrorCode;

/// Why a body can never be processed: its quarantine error code, what is wrong, and the contract fields that could still be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {detail}")]
pub struct ContractViolation {
    /// The quarantine record's `errorCode`.
    pub code: ErrorCode,
    /// What is wrong, for an operator (never the body itself).
    pub detail: String,
    /// Whatever labels could still be read, for the quarantine record.
    pub labels: Labels,
}

/// What a message is labelled with: the key claimed before processing, and
/// the tenant, operation and schema version of its quarantine record (what
/// the operator's CLI selects by). A body gives them ([`Body::labels`]), a
/// processor may name them instead ([`crate::Processor::labels`]), and a
/// [`ContractViolation`] carries those still readable in a body that is not.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Labels {
    /// The idempotency key; `None`: the message has none.
    pub idempotency_key: Option<String>,
    /// The tenant (`tenantId` in its quarantine record).
    pub tenant_id: Option<String>,
    /// The operation (`operation` in its quarantine record).
    pub operation: Option<String>,
    /// The body's schema version (`schemaVersion` in its quarantine record).
    pub schema_version: Option<String>,
}

impl Labels {
    /// These labels with `key` as the idempotency key; an empty key is none
    /// (no claim, no header: `Idempotency::missing_key` decides).
    pub fn idempotency_key(mut self, key: Option<String>) -> Self {
        self.idempotency_key = key.filter(|key| !key.is_empty());
        self
    }

    /// These labels with `tenant` as the tenant.
    pub fn tenant_id(mut self, tenant: Option<String>) -> Self {
        self.tenant_id = tenant;
        self
    }

    /// These labels with `operation` as the operation.
    pub fn operation(mut self, operation: Option<String>) -> Self {
        self.operation = operation;
        self
    }

    /// These labels with `version` as the body's schema version.
    pub fn schema_version(mut self, version: Option<String>) -> Self {
        self.schema_version = version;
        self
    }
}

impl ContractViolation {
    /// A violation found before any contract field could be read.
    pub fn new(code: ErrorCode, detail: impl Into<String>) -> Self {
        Self { code, detail: detail.into(), labels: Labels::default() }
    }
}

/// A decoded message body of any format: how its text decodes, and the
/// labels and idempotency key it carries. Implement it for a body that is not
/// JSON (CSV, XML, bytes in base64); a JSON body implements [`JsonBody`]
/// instead and gets this for free.
pub trait Body: Sized + Send + Sync {
    /// Decodes one message body, or says why it never can be.
    fn decode(text: &str) -> Result<Self, ContractViolation>;

    /// The labels a quarantine record shows for this body when a processor
    /// gives up on it (the idempotency key is [`Body::idempotency_key`]'s).
    fn labels(&self) -> Labels {
        Labels::default()
    }

    /// The key an idempotency store claims before the message is processed;
    /// `None` when the body has none.
    fn idempotency_key(&self) -> Option<Cow<'_, str>> {
        None
    }
}

/// A JSON body: a `serde::Deserialize` type that says what else it holds.
/// Its check beyond the shape ([`JsonBody::validate`]: `Err` quarantines the
/// message with the violation's own error code), its idempotency key, its
/// tenant and its operation. Every method has a default: `impl JsonBody for
/// Refund {}` accepts every body that decoded and labels none.
///
/// ```
/// use backpressure_batch::{ContractViolation, ErrorCode, JsonBody};
///
/// #[derive(serde::Deserialize)]
/// struct Refund { cents: i64 }
///
/// impl JsonBody for Refund {
///     fn validate(&self) -> Result<(), ContractViolation> {
///         if self.cents > 0 { return Ok(()) }
///         Err(ContractViolation::new(ErrorCode::Custom("non_positive_amount".into()), "cents must be above 0"))
///     }
/// }
/// ```
pub trait JsonBody {
    /// `Ok` when the body may be processed.
    fn validate(&self) -> Result<(), ContractViolation> {
        Ok(())
    }

    /// The body's idempotency key, claimed before processing when the
    /// processor has an idempotency store (the default: none). A field of
    /// the body (`Some(self.order.as_str().into())`), or one made of several
    /// (`Some(format!("{}#{}", self.tenant, self.invoice).into())`).
    fn idempotency_key(&self) -> Option<Cow<'_, str>> {
        None
    }

    /// The tenant the body belongs to, for its quarantine record's
    /// `tenantId` (what the operator's `--tenant` selects by); none by default.
    fn tenant_id(&self) -> Option<Cow<'_, str>> {
        None
    }

    /// What the body asks for, for its quarantine record's `operation`
    /// (what the operator's `--operation` selects by); none by default.
    fn operation(&self) -> Option<Cow<'_, str>> {
        None
    }
}

/// The labels a [`JsonBody`] body gives its quarantine record.
fn labels<T: JsonBody>(body: &T) -> Labels {
    Labels {
        operation: body.operation().map(Cow::into_owned),
        tenant_id: body.tenant_id().map(Cow::into_owned),
        ..Labels::default()
    }
}

impl<T: DeserializeOwned + JsonBody + Send + Sync> Body for T {
    fn decode(text: &str) -> Result<Self, ContractViolation> {
        let body: T = serde_json::from_str(text).map_err(|error| {
            let code = match error.classify() {
                Category::Syntax | Category::Eof | Category::Io => ErrorCode::InvalidJson,
                Category::Data => ErrorCode::SchemaViolation,
            };
            ContractViolation::new(code, error.to_string())
        })?;
        if let Err(mut violation) = body.validate() {
            if violation.labels == Labels::default() {
                violation.labels = labels(&body);
            }
            return Err(violation);
        }
        Ok(body)
    }

    fn labels(&self) -> Labels {
        labels(self)
    }

    fn idempotency_key(&self) -> Option<Cow<'_, str>> {
        JsonBody::idempotency_key(self)
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    #[derive(Debug, Deserialize)]
    struct Transfer {
        cents: i64,
    }

    impl JsonBody for Transfer {
        fn validate(&self) -> Result<(), ContractViolation> {
            if self.cents > 0 {
                Ok(())
            } else {
                Err(ContractViolation::new(ErrorCode::Custom("non_positive".into()), "cents ≤ 0"))
            }
        }
    }

    #[test]
    fn a_custom_body_decodes_and_validates_with_its_own_codes() {
        assert_eq!(Transfer::decode(r#"{"cents":5}"#).map(|t| t.cents), Ok(5));
        let code = |text: &str| Transfer::decode(text).map(|_| ()).unwrap_err().code;
        assert_eq!(code("{not json"), ErrorCode::InvalidJson);
        assert_eq!(code(""), ErrorCode::InvalidJson);
        assert_eq!(code(r#"{"cents":"five"}"#), ErrorCode::SchemaViolation);
        assert_eq!(code(r#"{}"#), ErrorCode::SchemaViolation);
        assert_eq!(code(r#"{"cents":0}"#), ErrorCode::Custom("non_positive".into()));
    }

    #[derive(Debug, Deserialize)]
    struct Invoice {
        customer: String,
        kind: String,
        cents: i64,
    }

    impl JsonBody for Invoice {
        fn validate(&self) -> Result<(), ContractViolation> {
            if self.cents >= 0 {
                Ok(())
            } else {
                Err(ContractViolation::new(ErrorCode::Custom("negative".into()), "cents < 0"))
            }
        }
        fn tenant_id(&self) -> Option<Cow<'_, str>> {
            Some(self.customer.as_str().into())
        }
        fn operation(&self) -> Option<Cow<'_, str>> {
            Some(format!("invoice.{}", self.kind).into())
        }
    }

    #[test]
    fn a_custom_body_labels_its_quarantine_record_also_when_it_fails_validation() {
        let labelled = |tenant: &str, operation: &str| {
            Labels::default().tenant_id(Some(tenant.into())).operation(Some(operation.into()))
        };
        let invoice = Invoice::decode(r#"{"customer":"acme","kind":"monthly","cents":5}"#).unwrap();
        assert_eq!(invoice.labels(), labelled("acme", "invoice.monthly"));
        let refused =
            Invoice::decode(r#"{"customer":"acme","kind":"refund","cents":-5}"#).unwrap_err();
        assert_eq!(refused.code, ErrorCode::Custom("negative".into()));
        assert_eq!(refused.labels, labelled("acme", "invoice.refund"));
        let unlabelled = Transfer::decode(r#"{"cents":5}"#).unwrap().labels();
        assert_eq!(unlabelled, Labels::default(), "no labels unless the body gives them");
    }
}
