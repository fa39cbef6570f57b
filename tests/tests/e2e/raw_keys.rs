//! Keys and tenants exactly as the body has them (`BODY_FORMAT=raw`,
//! `IDEMPOTENCY_KEY_FROM=/orderId`, `TENANT_FROM=/customer`), on sqs-worker and
//! batch-consumer, with and without an idempotency table: an empty string is
//! no key (no header, no claim, `IDEMPOTENCY_MISSING_KEY` applies), and a
//! number is its JSON text as written, so two 20-digit ids stay two keys.

use std::collections::BTreeMap;
use std::time::Duration;

use e2e_tests::downstream::Received;
use e2e_tests::fixtures::{Aws, Sqs, binary, sqs_record, unique};
use e2e_tests::idempotency_table::Table;
use e2e_tests::runtime_host::LambdaHost;
use serde_json::{Value, json};

use crate::worker_setup::{SETTLED, setup_on};

/// The bodies, each with the `Idempotency-Key` and `X-Tenant-Id` it must be POSTed with.
const BODIES: [(&str, Option<&str>, Option<&str>); 6] = [
    (r#"{"orderId":"","customer":"","n":1}"#, None, None),
    (r#"{"orderId":"","customer":"cus_9","n":2}"#, None, Some("cus_9")),
    (r#"{"orderId":98765432109876543210,"customer":7}"#, Some("98765432109876543210"), Some("7")),
    (r#"{"orderId":98765432109876543211}"#, Some("98765432109876543211"), None),
    (r#"{"orderId":1.10,"customer":true}"#, Some("1.10"), Some("true")),
    (r#"{"orderId":1e3,"customer":null}"#, Some("1e3"), None),
];

fn settings(table: Option<&str>) -> Vec<(&str, &str)> {
    let mut settings = vec![
        ("BODY_FORMAT", "raw"),
        ("IDEMPOTENCY_KEY_FROM", "/orderId"),
        ("TENANT_FROM", "/customer"),
    ];
    if let Some(table) = table {
        settings.push(("IDEMPOTENCY_TABLE", table));
    }
    settings
}

/// Each POST's body with its key and tenant headers, as the downstream saw them.
fn posted(received: Vec<Received>) -> BTreeMap<String, (Option<String>, Option<String>)> {
    let count = received.len();
    let posted: BTreeMap<_, _> =
        received.into_iter().map(|r| (r.body, (r.idempotency_key, r.tenant_id))).collect();
    assert_eq!(posted.len(), count, "each body POSTed once");
    posted
}

fn assert_every_body_posted_with_its_labels(
    posted: &BTreeMap<String, (Option<String>, Option<String>)>,
    context: &str,
) {
    assert_eq!(posted.len(), BODIES.len(), "{context}: {posted:#?}");
    for (body, key, tenant) in BODIES {
        let expected = (key.map(str::to_owned), tenant.map(str::to_owned));
        assert_eq!(posted.get(body), Some(&expected), "{context}: {body}");
    }
}

async fn worker_keys(table: bool) {
    let setup = setup_on(Sqs::Moto, false).await;
    let table = if table { Some(Table::create().await.unwrap()) } else { None };
    setup.send(&BODIES.map(|(body, ..)| body.to_owned())).await;
    let mut worker = setup.start(&settings(table.as_ref().map(|t| t.name.as_str())));
    setup.wait_until_empty().await;
    worker.signal("TERM").await.unwrap();
    assert_eq!(worker.exit(SETTLED).await.unwrap().code(), Some(0), "{:#?}", worker.lines());
    let context = format!("sqs-worker, table: {}", table.is_some());
    assert_every_body_posted_with_its_labels(&posted(setup.downstream.received()), &context);
    let quarantined = setup.aws.quarantined(&setup.quarantine_url, 0).await.unwrap();
    assert!(quarantined.is_empty(), "{context}: {quarantined:?}");
}

#[tokio::test]
async fn the_worker_posts_keys_as_written_and_no_header_for_an_empty_one() {
    worker_keys(false).await;
}

#[tokio::test]
async fn the_worker_claims_keys_as_written_and_nothing_for_an_empty_one() {
    worker_keys(true).await;
}

#[tokio::test]
async fn the_worker_quarantines_an_empty_key_or_a_body_not_json_when_keys_are_required() {
    let setup = setup_on(Sqs::Moto, false).await;
    let table = Table::create().await.unwrap();
    // Two empty keys, and a body that is not JSON at all: none has a key.
    let mut bodies: Vec<String> = BODIES[..2].iter().map(|(body, ..)| (*body).to_owned()).collect();
    bodies.push("<html>502 Bad Gateway</html>".to_owned());
    setup.send(&bodies).await;
    let mut env = settings(Some(table.name.as_str()));
    env.push(("IDEMPOTENCY_MISSING_KEY", "quarantine"));
    let mut worker = setup.start(&env);
    setup.wait_until_empty().await;
    worker.signal("TERM").await.unwrap();
    assert_eq!(worker.exit(SETTLED).await.unwrap().code(), Some(0), "{:#?}", worker.lines());
    assert!(setup.downstream.received().is_empty(), "an empty key is no key: nothing POSTed");
    let quarantined = setup.aws.quarantined(&setup.quarantine_url, 3).await.unwrap();
    let codes: Vec<&str> =
        quarantined.iter().map(|q| q.record["errorCode"].as_str().unwrap_or_default()).collect();
    assert_eq!(codes, ["missing_idempotency_key"; 3]);
}

async fn consumer_keys(table: bool) {
    let aws = Aws::from_env().await.unwrap();
    let quarantine_url = aws.create_queue(&unique("quarantine")).await.unwrap();
    let table = if table { Some(Table::create().await.unwrap()) } else { None };
    let downstream = e2e_tests::downstream::Downstream::start().await.unwrap();
    let url = downstream.url();
    let mut env = vec![("QUARANTINE_QUEUE_URL", quarantine_url.as_str()), ("DOWNSTREAM_URL", &url)];
    env.extend(settings(table.as_ref().map(|t| t.name.as_str())));
    let host = LambdaHost::start(&binary("batch-consumer").unwrap(), &env).await.unwrap();
    let source = "arn:aws:sqs:us-east-1:123456789012:keys-as-written";
    let records: Vec<Value> = BODIES
        .iter()
        .enumerate()
        .map(|(i, (body, ..))| sqs_record(&format!("m-{i}"), json!(body), source))
        .collect();
    let outcome = host.invoke(&json!({ "Records": records }), Duration::from_secs(30)).await;
    assert_eq!(outcome.batch_item_failures(), Some(vec![]), "{outcome:?}");
    let context = format!("batch-consumer, table: {}", table.is_some());
    assert_every_body_posted_with_its_labels(&posted(downstream.received()), &context);
}

#[tokio::test]
async fn the_consumer_posts_keys_as_written_and_no_header_for_an_empty_one() {
    consumer_keys(false).await;
}

#[tokio::test]
async fn the_consumer_claims_keys_as_written_and_nothing_for_an_empty_one() {
    consumer_keys(true).await;
}

/// Bodies any JSON parser must take, that a tree refuses: a key beside an
/// array nested 200 deep, and beside a number past `f64`'s range.
fn beyond_a_tree() -> [(String, &'static str, &'static str); 2] {
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    [
        (
            format!(r#"{{"deep":{deep},"orderId":"o-deep","customer":"cus-deep"}}"#),
            "o-deep",
            "cus-deep",
        ),
        (
            r#"{"n":1e400,"orderId":"o-huge","customer":"cus-huge"}"#.to_owned(),
            "o-huge",
            "cus-huge",
        ),
    ]
}

/// Each body POSTed once, as JSON, with its key and tenant.
fn assert_posted_once_with_labels(received: &[Received], context: &str) {
    let bodies = beyond_a_tree();
    assert_eq!(received.len(), bodies.len(), "{context}: {received:#?}");
    for (body, key, tenant) in bodies {
        let post = received.iter().find(|r| r.body == body).unwrap_or_else(|| panic!("{context}"));
        assert_eq!(post.idempotency_key.as_deref(), Some(key), "{context}");
        assert_eq!(post.tenant_id.as_deref(), Some(tenant), "{context}");
        assert_eq!(post.content_type.as_deref(), Some("application/json"), "{context}");
    }
}

#[tokio::test]
async fn keys_beside_deep_arrays_and_huge_numbers_are_read_by_the_worker_and_the_cli() {
    let setup = setup_on(Sqs::Moto, false).await;
    let table = Table::create().await.unwrap();
    let bodies: Vec<String> = beyond_a_tree().into_iter().map(|(body, ..)| body).collect();
    // Each twice: the second is a duplicate of the first's key.
    setup.send(&[bodies.clone(), bodies.clone()].concat()).await;
    let mut worker = setup.start(&settings(Some(table.name.as_str())));
    setup.wait_until_empty().await;
    worker.signal("TERM").await.unwrap();
    assert_eq!(worker.exit(SETTLED).await.unwrap().code(), Some(0), "{:#?}", worker.lines());
    assert_posted_once_with_labels(&setup.downstream.received(), "sqs-worker");
    // The operator's CLI reads the same key and tenant from the same bodies.
    use crate::operator_cli::{cli, stderr, stdout};
    let dlq = setup.aws.create_queue(&unique("dlq")).await.unwrap();
    for body in &bodies {
        setup.aws.sqs.send_message().queue_url(&dlq).message_body(body).send().await.unwrap();
    }
    let args = ["list", "--queue-url", &dlq, "--json", "--key-from", "/orderId"];
    let output = cli(&[&args[..], &["--tenant-from", "/customer"]].concat()).await;
    assert!(output.status.success(), "{}", stderr(&output));
    let mut labels: Vec<(String, String)> = stdout(&output)
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .map(|entry| (entry["idempotencyKey"].to_string(), entry["tenantId"].to_string()))
        .collect();
    labels.sort();
    let expected = [("o-deep", "cus-deep"), ("o-huge", "cus-huge")]
        .map(|(key, tenant)| (format!("{key:?}"), format!("{tenant:?}")));
    assert_eq!(labels, expected);
}

#[tokio::test]
async fn keys_beside_deep_arrays_and_huge_numbers_are_read_by_the_consumer() {
    let aws = Aws::from_env().await.unwrap();
    let quarantine_url = aws.create_queue(&unique("quarantine")).await.unwrap();
    let table = Table::create().await.unwrap();
    let downstream = e2e_tests::downstream::Downstream::start().await.unwrap();
    let url = downstream.url();
    let mut env = vec![("QUARANTINE_QUEUE_URL", quarantine_url.as_str()), ("DOWNSTREAM_URL", &url)];
    env.extend(settings(Some(table.name.as_str())));
    let source = "arn:aws:sqs:us-east-1:123456789012:keys-beyond-a-tree";
    // Delivered twice, to two function instances: POSTed once.
    for delivery in ["a", "b"] {
        let host = LambdaHost::start(&binary("batch-consumer").unwrap(), &env).await.unwrap();
        let records: Vec<Value> = beyond_a_tree()
            .iter()
            .enumerate()
            .map(|(i, (body, ..))| sqs_record(&format!("m-{delivery}{i}"), json!(body), source))
            .collect();
        let outcome = host.invoke(&json!({ "Records": records }), Duration::from_secs(30)).await;
        assert_eq!(outcome.batch_item_failures(), Some(vec![]), "{outcome:?}");
    }
    assert_posted_once_with_labels(&downstream.received(), "batch-consumer");
}
