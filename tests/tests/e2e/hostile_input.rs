//! batch-consumer on hostile input, end to end: one batch of records built to
//! break it (huge, deeply nested, every JSON escape and Unicode plane,
//! characters SQS refuses, duplicate ids, every message attribute type,
//! missing or wrongly typed fields), its SQS calls through the fault proxy
//! that enforces SQS's character rule. Every record must end in exactly one
//! outcome, and every quarantine record must give back its body byte for byte.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use e2e_tests::downstream::Downstream;
use e2e_tests::fault_proxy::FaultProxy;
use e2e_tests::fixtures::{Aws, binary, sqs_record, unique};
use e2e_tests::runtime_host::LambdaHost;
use serde_json::{Value, json};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    Done,
    Quarantined,
    Retried,
}

fn work(extra: &[(&str, Value)]) -> String {
    let mut body = json!({"schemaVersion": "1", "operation": "invoice.create", "tenantId": "t",
                          "idempotencyKey": unique("k")});
    for (name, value) in extra {
        body[*name] = value.clone();
    }
    body.to_string()
}

fn record(id: &str, body: Value) -> Value {
    sqs_record(id, body, "arn:aws:sqs:us-east-1:123456789012:orders-work")
}

/// One character from each Unicode plane that has assigned characters.
const PLANES: &str = "A\u{1F600}\u{20000}\u{30000}\u{E0041}\u{F0000}\u{100000}";

fn cases() -> Vec<(Value, Expect)> {
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let every_escape = r#""\" \\ \/ \b \f \n \r \t \u00e9 \ud83d\ude00 \u0000""#;
    let escaped_payload = format!(
        r#"{{"schemaVersion":"1","operation":"invoice.create","tenantId":"t","idempotencyKey":"esc-1","note":{every_escape}}}"#
    );
    let mut attribute_types = record("attribute-types", json!("not json, with attributes"));
    attribute_types["messageAttributes"] = json!({
        "s": {"stringValue": "text", "stringListValues": [], "binaryListValues": [], "dataType": "String"},
        "n": {"stringValue": "-1.5e3", "stringListValues": [], "binaryListValues": [], "dataType": "Number"},
        "b": {"binaryValue": "AAEC/w==", "stringListValues": [], "binaryListValues": [], "dataType": "Binary"},
        "sc": {"stringValue": "x", "stringListValues": [], "binaryListValues": [], "dataType": "String.custom"},
        "nf": {"stringValue": "3.14", "stringListValues": [], "binaryListValues": [], "dataType": "Number.float"},
        "bg": {"binaryValue": "R0lGODlh", "stringListValues": [], "binaryListValues": [], "dataType": "Binary.gif"}
    });
    let mut wrongly_typed = record("wrongly-typed-attributes", json!(work(&[])));
    wrongly_typed["attributes"] = json!({"ApproximateReceiveCount": 5, "SentTimestamp": null});
    wrongly_typed["messageAttributes"] = json!("oops");
    let mut missing = record("missing-fields", json!(work(&[])));
    for field in ["attributes", "messageAttributes", "md5OfBody", "receiptHandle", "awsRegion"] {
        missing.as_object_mut().unwrap().remove(field);
    }
    vec![
        (record("huge-ok", json!(work(&[("pad", json!("x".repeat(200_000)))]))), Expect::Done),
        (record("huge-poison", json!("x".repeat(200_000))), Expect::Quarantined),
        // Above the default 256 KiB, within the quarantine queue's own 1 MiB (read from it).
        (record("large-poison", json!("y".repeat(300_000))), Expect::Quarantined),
        // As large as SQS allows: no record with it fits any quarantine queue, and without
        // QUARANTINE_OVERFLOW_BUCKET it is retried, so it reaches the DLQ.
        (record("too-large-poison", json!("y".repeat(1_048_576))), Expect::Retried),
        // Valid JSON however deep: the payload is skipped without recursion and passed on.
        (
            record(
                "deep-payload",
                json!(work(&[("payload", json!("placeholder"))]).replace("\"placeholder\"", &deep)),
            ),
            Expect::Done,
        ),
        (record("deep-garbage", json!("[".repeat(100_000))), Expect::Quarantined),
        (record("every-escape", json!(escaped_payload)), Expect::Done),
        (
            record("escape-in-tenant", json!(work(&[("tenantId", json!("a\nb"))]))),
            Expect::Quarantined,
        ),
        (record("every-plane", json!(work(&[("note", json!(PLANES))]))), Expect::Done),
        (record("every-plane-poison", json!(format!("not json {PLANES}"))), Expect::Quarantined),
        (
            record(
                "refused-characters-1",
                json!(
                    r#"{"schemaVersion":"1","operation":"invoice.reject","tenantId":"t\u0000\u0001\uffff","idempotencyKey":"k\u000b1"}"#
                ),
            ),
            Expect::Quarantined,
        ),
        (
            record(
                "refused-characters-2",
                json!(
                    r#"{"schemaVersion":"9\ufffe","operation":"op\u001f","tenantId":"\uffff","idempotencyKey":"k2"}"#
                ),
            ),
            Expect::Quarantined,
        ),
        (record("empty-body", json!("")), Expect::Quarantined),
        (record("null-body", Value::Null), Expect::Quarantined),
        (record("bare-null", json!("null")), Expect::Quarantined),
        (record("bom", json!(format!("\u{FEFF}{}", work(&[])))), Expect::Quarantined),
        (
            record("slow-body", json!(work(&[("operation", json!("invoice.slowbody"))]))),
            Expect::Done,
        ),
        (record("duplicate", json!(work(&[]))), Expect::Retried),
        (
            record("duplicate", json!(work(&[("operation", json!("invoice.fail"))]))),
            Expect::Retried,
        ),
        (attribute_types, Expect::Quarantined),
        (wrongly_typed, Expect::Done),
        (missing, Expect::Done),
    ]
}

#[tokio::test]
async fn every_hostile_record_ends_in_exactly_one_outcome() {
    let aws = Aws::from_env().await.unwrap();
    let quarantine_url = aws.create_queue(&unique("hostile-q")).await.unwrap();
    let downstream = Downstream::start().await.unwrap();
    let proxy = FaultProxy::start(&std::env::var("AWS_ENDPOINT_URL_SQS").unwrap()).await.unwrap();
    let cases = cases();
    let event = json!({"Records": cases.iter().map(|(r, _)| r.clone()).collect::<Vec<_>>()});
    let url = downstream.url();
    let host = LambdaHost::start(
        &binary("batch-consumer").unwrap(),
        &[
            ("DOWNSTREAM_URL", url.as_str()),
            ("DOWNSTREAM_TIMEOUT_MS", "1000"),
            ("QUARANTINE_QUEUE_URL", quarantine_url.as_str()),
            ("AWS_ENDPOINT_URL_SQS", proxy.url()),
        ],
    )
    .await
    .unwrap();
    let outcome = host.invoke(&event, Duration::from_secs(30)).await;
    let retried = outcome
        .batch_item_failures()
        .unwrap_or_else(|| panic!("expected a batch response, got {outcome:?}"));
    let unique_retried: BTreeSet<&String> = retried.iter().collect();
    assert_eq!(unique_retried.len(), retried.len(), "an id listed twice: {retried:?}");

    let expected_quarantined = cases.iter().filter(|(_, e)| *e == Expect::Quarantined).count();
    let quarantined: BTreeMap<String, Value> = aws
        .quarantined(&quarantine_url, expected_quarantined)
        .await
        .unwrap()
        .into_iter()
        .map(|q| (q.message_id().to_owned(), q.record))
        .collect();
    let delivered: Vec<String> = downstream.received().into_iter().map(|r| r.body).collect();

    for (original, expect) in &cases {
        let id = original["messageId"].as_str().unwrap();
        let is_retried = retried.iter().any(|r| r == id);
        let record = quarantined.get(id);
        let body = original["body"].as_str();
        let is_delivered = body.is_some_and(|b| delivered.iter().any(|d| d == b));
        let outcomes = [is_retried, record.is_some(), is_delivered && !is_retried];
        assert_eq!(outcomes.iter().filter(|o| **o).count(), 1, "{id}: {outcomes:?}");
        let observed = if is_retried {
            Expect::Retried
        } else if record.is_some() {
            Expect::Quarantined
        } else {
            Expect::Done
        };
        assert_eq!(observed, *expect, "{id}");
        if let Some(record) = record {
            assert_eq!(record["body"].as_str(), body, "{id}: the body byte for byte");
            assert_eq!(
                record["messageAttributes"], original["messageAttributes"],
                "{id}: message attributes unchanged"
            );
        }
    }
    assert_eq!(proxy.refused_characters(), 0, "SQS would have refused a quarantine record");
}
