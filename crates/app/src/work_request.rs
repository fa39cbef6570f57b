//! The queue contract: every body is a JSON work request. A body that breaks
//! the contract can never succeed on a retry, so it is a permanent failure
//! with a stable error code.

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;

use backpressure_batch::ErrorCode;
use backpressure_batch::{Body, ContractViolation, Labels};

/// The supported major version of `schemaVersion`.
pub(crate) const SUPPORTED_MAJOR_VERSION: u64 = 1;

/// The fields the contract requires, read from a body; everything else in the
/// body is payload and is passed on untouched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkRequest {
    /// `schemaVersion`, such as `"1"` or `"1.2"`, major version 1.
    pub schema_version: String,
    /// `operation`: what the downstream should do.
    pub operation: String,
    /// `tenantId`: whose work it is (a filterable quarantine attribute).
    pub tenant_id: String,
    /// `idempotencyKey`: sent downstream so a redelivery is not done twice.
    pub idempotency_key: String,
    /// `correlationId`, when the producer set one.
    pub correlation_id: Option<String>,
}

/// The contract's members of a body, read in one pass: every other member
/// (the payload) is skipped without being built. A repeated member keeps its
/// last value, as a `serde_json::Map` would.
#[derive(Default)]
struct Envelope {
    schema_version: Option<Value>,
    operation: Option<Value>,
    tenant_id: Option<Value>,
    idempotency_key: Option<Value>,
    correlation_id: Option<Value>,
}

impl<'de> Deserialize<'de> for Envelope {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EnvelopeVisitor;

        impl<'de> Visitor<'de> for EnvelopeVisitor {
            type Value = Envelope;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Envelope, A::Error> {
                let mut envelope = Envelope::default();
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    let member = match key.as_ref() {
                        "schemaVersion" => &mut envelope.schema_version,
                        "operation" => &mut envelope.operation,
                        "tenantId" => &mut envelope.tenant_id,
                        "idempotencyKey" => &mut envelope.idempotency_key,
                        "correlationId" => &mut envelope.correlation_id,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                            continue;
                        }
                    };
                    *member = Some(map.next_value()?);
                }
                Ok(envelope)
            }
        }

        deserializer.deserialize_map(EnvelopeVisitor)
    }
}

fn violation(code: ErrorCode, detail: String, labels: Labels) -> ContractViolation {
    let mut violation = ContractViolation::new(code, detail);
    violation.labels = labels;
    violation
}

/// The labels of a quarantine record: what could be read of the contract.
fn labels(
    schema_version: Option<String>,
    operation: Option<String>,
    tenant: Option<String>,
) -> Labels {
    Labels::default().schema_version(schema_version).operation(operation).tenant_id(tenant)
}

/// Why a body could not be read as an object: a second pass, without a tree
/// (any depth, numbers of any size), that tells text that is not JSON from
/// JSON of another shape. Only bad bodies pay for it.
fn unreadable(body: &str, error: &serde_json::Error) -> ContractViolation {
    let (code, detail) = match serde_json::from_str::<&serde_json::value::RawValue>(body) {
        Err(e) => (ErrorCode::InvalidJson, format!("the body is not JSON: {e}")),
        Ok(value) if !value.get().starts_with('{') => {
            (ErrorCode::SchemaViolation, "the body is JSON but not an object".to_owned())
        }
        Ok(_) => (ErrorCode::SchemaViolation, error.to_string()),
    };
    violation(code, detail, Labels::default())
}

/// A required member: its text when usable, otherwise what the quarantine
/// record can still show (an empty string is kept, a non-string is not).
type Member = Result<String, Option<String>>;

fn required(name: &str, value: Option<Value>, problems: &mut Vec<String>) -> Member {
    match value {
        None | Some(Value::Null) => {
            problems.push(format!("{name} is missing"));
            Err(None)
        }
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s),
        Some(Value::String(s)) => {
            problems.push(format!("{name} is empty"));
            Err(Some(s))
        }
        Some(_) => {
            problems.push(format!("{name} must be a string"));
            Err(None)
        }
    }
}

fn readable(member: &Member) -> Option<String> {
    match member {
        Ok(text) => Some(text.clone()),
        Err(text) => text.clone(),
    }
}

impl WorkRequest {
    /// Reads the contract's fields from a body in one pass, leaving the payload untouched.
    // Hidden: the benchmarks and the fuzzer parse bodies without a batch around them.
    #[doc(hidden)]
    pub fn parse(body: &str) -> Result<Self, ContractViolation> {
        let envelope: Envelope =
            serde_json::from_str(body).map_err(|error| unreadable(body, &error))?;
        // Strings move out of the envelope; the labels for a quarantine
        // record are only built on the failure paths.
        let mut problems = Vec::new();
        let schema_version = required("schemaVersion", envelope.schema_version, &mut problems);
        let operation = required("operation", envelope.operation, &mut problems);
        let tenant_id = required("tenantId", envelope.tenant_id, &mut problems);
        let idempotency_key = required("idempotencyKey", envelope.idempotency_key, &mut problems);
        let correlation_id = match envelope.correlation_id {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if !s.trim().is_empty() => Some(s),
            Some(_) => {
                problems.push("correlationId must be a non-empty string when present".to_owned());
                None
            }
        };
        let (schema_version, operation, tenant_id, idempotency_key) =
            match (schema_version, operation, tenant_id, idempotency_key) {
                (Ok(s), Ok(o), Ok(t), Ok(k)) if problems.is_empty() => (s, o, t, k),
                (schema_version, operation, tenant_id, key) => {
                    // A body with none of the contract's fields is some other message: say what forwards it.
                    if [&schema_version, &operation, &tenant_id, &key]
                        .iter()
                        .all(|m| matches!(m, Err(None)))
                    {
                        problems.push(
                            "not this project's work request (BODY_FORMAT=raw forwards any body)"
                                .to_owned(),
                        );
                    }
                    let labels = labels(
                        readable(&schema_version),
                        readable(&operation),
                        readable(&tenant_id),
                    );
                    return Err(violation(ErrorCode::SchemaViolation, problems.join("; "), labels));
                }
            };

        let unsupported = match major_version(&schema_version) {
            Some(SUPPORTED_MAJOR_VERSION) => None,
            Some(major) => Some((
                ErrorCode::UnsupportedSchemaVersion,
                format!(
                    "schemaVersion {schema_version:?} has major version {major}; \
                     this handler accepts {SUPPORTED_MAJOR_VERSION}"
                ),
            )),
            None => Some((
                ErrorCode::SchemaViolation,
                format!(
                    "schemaVersion {schema_version:?} is not a version such as \"1\" or \"1.2\""
                ),
            )),
        };
        if let Some((code, detail)) = unsupported {
            let labels = labels(Some(schema_version), Some(operation), Some(tenant_id));
            return Err(violation(code, detail, labels));
        }
        Ok(Self { schema_version, operation, tenant_id, idempotency_key, correlation_id })
    }
}

/// The major number of "1", "1.2" or "1.2.3".
fn major_version(version: &str) -> Option<u64> {
    let mut parts = version.split('.');
    let major = parts.next()?.parse().ok()?;
    parts.all(|part| part.parse::<u64>().is_ok()).then_some(major)
}

impl Body for WorkRequest {
    fn decode(text: &str) -> Result<Self, ContractViolation> {
        Self::parse(text)
    }

    fn labels(&self) -> Labels {
        let (version, operation) = (&self.schema_version, &self.operation);
        labels(Some(version.clone()), Some(operation.clone()), Some(self.tenant_id.clone()))
    }

    fn idempotency_key(&self) -> Option<std::borrow::Cow<'_, str>> {
        Some(self.idempotency_key.as_str().into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(body: &str) -> ErrorCode {
        WorkRequest::parse(body).unwrap_err().code
    }

    #[test]
    fn a_valid_request_keeps_its_fields() {
        let request = WorkRequest::parse(
            r#"{"schemaVersion":"1.3","operation":"invoice.create","tenantId":"t-42",
                "idempotencyKey":"k-1","correlationId":"c-9","amount":12}"#,
        )
        .unwrap();
        assert_eq!(request.schema_version, "1.3");
        assert_eq!(request.operation, "invoice.create");
        assert_eq!(request.tenant_id, "t-42");
        assert_eq!(request.idempotency_key, "k-1");
        assert_eq!(request.correlation_id.as_deref(), Some("c-9"));
        let without_correlation =
            r#"{"schemaVersion":"1","operation":"o","tenantId":"t","idempotencyKey":"k"}"#;
        assert_eq!(WorkRequest::parse(without_correlation).unwrap().correlation_id, None);
    }

    #[test]
    fn a_foreign_body_is_told_what_forwards_it_and_a_near_miss_is_not() {
        let detail = |body: &str| WorkRequest::parse(body).unwrap_err().detail;
        let foreign = detail(r#"{"orderId":"o-1","tenant":"acme"}"#);
        assert!(foreign.ends_with("(BODY_FORMAT=raw forwards any body)"), "{foreign}");
        let near = detail(r#"{"schemaVersion":"1","operation":"o","tenantId":"t"}"#);
        assert_eq!(near, "idempotencyKey is missing");
    }

    #[test]
    fn each_violation_has_its_code() {
        let cases = [
            ("", ErrorCode::InvalidJson),
            ("not json", ErrorCode::InvalidJson),
            (r#"{"schemaVersion":"1""#, ErrorCode::InvalidJson),
            ("[1,2]", ErrorCode::SchemaViolation),
            ("\"text\"", ErrorCode::SchemaViolation),
            ("{}", ErrorCode::SchemaViolation),
            (r#"{"schemaVersion":"1","operation":"o","tenantId":"t"}"#, ErrorCode::SchemaViolation),
            (
                r#"{"schemaVersion":"1","operation":"o","tenantId":"","idempotencyKey":"k"}"#,
                ErrorCode::SchemaViolation,
            ),
            (
                r#"{"schemaVersion":"1","operation":7,"tenantId":"t","idempotencyKey":"k"}"#,
                ErrorCode::SchemaViolation,
            ),
            (
                r#"{"schemaVersion":1,"operation":"o","tenantId":"t","idempotencyKey":"k"}"#,
                ErrorCode::SchemaViolation,
            ),
            (
                r#"{"schemaVersion":"one","operation":"o","tenantId":"t","idempotencyKey":"k"}"#,
                ErrorCode::SchemaViolation,
            ),
            (
                r#"{"schemaVersion":"1","operation":"o","tenantId":"t","idempotencyKey":"k","correlationId":5}"#,
                ErrorCode::SchemaViolation,
            ),
            (
                r#"{"schemaVersion":"2","operation":"o","tenantId":"t","idempotencyKey":"k"}"#,
                ErrorCode::UnsupportedSchemaVersion,
            ),
            (
                r#"{"schemaVersion":"0.9","operation":"o","tenantId":"t","idempotencyKey":"k"}"#,
                ErrorCode::UnsupportedSchemaVersion,
            ),
        ];
        for (body, expected) in cases {
            assert_eq!(code(body), expected, "{body}");
        }
    }

    #[test]
    fn a_violation_names_every_problem_and_keeps_readable_fields() {
        let violation =
            WorkRequest::parse(r#"{"schemaVersion":"1","tenantId":"t-1","idempotencyKey":3}"#)
                .unwrap_err();
        assert!(violation.detail.contains("operation is missing"), "{}", violation.detail);
        assert!(
            violation.detail.contains("idempotencyKey must be a string"),
            "{}",
            violation.detail
        );
        assert_eq!(violation.labels.tenant_id.as_deref(), Some("t-1"));
        assert_eq!(violation.labels.schema_version.as_deref(), Some("1"));
        assert_eq!(violation.labels.operation, None);
    }

    #[test]
    fn the_payload_is_skipped_whatever_its_shape_and_the_last_repeat_wins() {
        let body = r#"{"payload":{"deep":[1,2.5e3,{"x":null}],"s":"\u00e9\"q"},
            "schemaVersion":"1","operation":"first","tenantId":"t","idempotencyKey":"k",
            "operation":"last","list":[true,false,"x"],"n":-0.0}"#;
        let request = WorkRequest::parse(body).unwrap();
        assert_eq!(request.operation, "last");
        // The same answer as reading the whole body as a map.
        let map: serde_json::Map<String, Value> = serde_json::from_str(body).unwrap();
        assert_eq!(map["operation"], "last");
    }

    /// Valid JSON is never `invalid_json`: a payload nested past serde_json's
    /// tree limit (128) or holding a number past `f64`'s range is read.
    #[test]
    fn any_valid_json_payload_is_read() {
        let deep = format!("{}0{}", "[".repeat(200), "]".repeat(200));
        let body = format!(
            r#"{{"schemaVersion":"1","operation":"o","tenantId":"t","idempotencyKey":"k","deep":{deep},"n":1e400}}"#
        );
        assert_eq!(WorkRequest::parse(&body).unwrap().idempotency_key, "k");
        let huge_member =
            r#"{"schemaVersion":"1","operation":1e400,"tenantId":"t","idempotencyKey":"k"}"#;
        assert_eq!(code(huge_member), ErrorCode::SchemaViolation, "JSON, of the wrong shape");
    }

    #[test]
    fn invalid_json_after_the_contract_members_is_still_invalid_json() {
        let body =
            r#"{"schemaVersion":"1","operation":"o","tenantId":"t","idempotencyKey":"k","p":[1,}"#;
        let violation = WorkRequest::parse(body).unwrap_err();
        assert_eq!(violation.code, ErrorCode::InvalidJson);
        assert!(violation.detail.starts_with("the body is not JSON: "), "{}", violation.detail);
        assert_eq!(code(r#"{"schemaVersion":"1"} trailing"#), ErrorCode::InvalidJson);
    }

    #[test]
    fn the_queue_contract_is_a_body_with_its_labels() {
        use backpressure_batch::Body;

        let request = WorkRequest::decode(
            r#"{"schemaVersion":"1","operation":"o","tenantId":"t","idempotencyKey":"k"}"#,
        )
        .unwrap();
        assert_eq!(request.labels().tenant_id.as_deref(), Some("t"));
        assert_eq!(WorkRequest::decode("[]").unwrap_err().code, ErrorCode::SchemaViolation);
    }
}
