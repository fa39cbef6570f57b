//! The forwarder for queues as they are (`BODY_FORMAT=raw`): sqs-worker on
//! moto and on LocalStack, and batch-consumer under the Runtime API host,
//! POST plain text and foreign JSON unchanged with its content type, the
//! idempotency key and tenant taken where the variables say; two messages
//! with one key are POSTed once; the operator's CLI selects the bodies that
//! are not JSON, or have no tenant, without naming their ids.

use std::time::Duration;

use aws_sdk_sqs::types::{MessageAttributeValue, SendMessageBatchRequestEntry};
use e2e_tests::downstream::Downstream;
use e2e_tests::fixtures::{Aws, Sqs, binary, sqs_record, unique};
use e2e_tests::idempotency_table::Table;
use e2e_tests::runtime_host::LambdaHost;
use serde_json::{Value, json};

use crate::worker_setup::{SETTLED, setup_on};

fn entry(id: &str, body: &str, attributes: &[(&str, &str)]) -> SendMessageBatchRequestEntry {
    let mut entry = SendMessageBatchRequestEntry::builder().id(id).message_body(body);
    for (name, value) in attributes {
        let value = MessageAttributeValue::builder().data_type("String").string_value(*value);
        entry = entry.message_attributes(*name, value.build().unwrap());
    }
    entry.build().unwrap()
}

async fn worker_forwards_bodies_as_they_are(sqs: Sqs) {
    let setup = setup_on(sqs, false).await;
    let table = Table::create().await.unwrap();
    setup
        .send_entries(vec![
            entry("html", "<html>502 Bad Gateway</html>", &[]),
            entry("order", r#"{"orderId":"o-1","cents":5}"#, &[("tenant", "acme")]),
            entry("again", r#"{"orderId":"o-1","cents":5,"resent":true}"#, &[("tenant", "acme")]),
            entry("number", r#"{"orderId":7}"#, &[]),
            entry("xml", "<order id=\"9\"/>", &[("contentType", "application/xml")]),
        ])
        .await;
    let mut worker = setup.start(&[
        ("BODY_FORMAT", "raw"),
        ("IDEMPOTENCY_KEY_FROM", "/orderId"),
        ("TENANT_FROM", "attribute:tenant"),
        ("IDEMPOTENCY_TABLE", table.name.as_str()),
    ]);
    setup.wait_until_empty().await;
    worker.signal("TERM").await.unwrap();
    assert_eq!(worker.exit(SETTLED).await.unwrap().code(), Some(0), "{:#?}", worker.lines());
    let mut received = setup.downstream.received();
    received.sort_by(|a, b| a.body.cmp(&b.body));
    // (body, content type, idempotency key, tenant) of each POST.
    type Seen<'a> = (&'a str, Option<&'a str>, Option<&'a str>, Option<&'a str>);
    let seen: Vec<Seen<'_>> = received
        .iter()
        .map(|r| {
            let content_type = r.content_type.as_deref();
            (r.body.as_str(), content_type, r.idempotency_key.as_deref(), r.tenant_id.as_deref())
        })
        .collect();
    let json = Some("application/json");
    let o1 = r#"{"orderId":"o-1","cents":5}"#;
    let o1_again = r#"{"orderId":"o-1","cents":5,"resent":true}"#;
    let posted_o1 = seen.iter().filter(|s| s.0 == o1 || s.0 == o1_again).count();
    assert_eq!(posted_o1, 1, "{sqs:?}: one key, one POST: {seen:#?}");
    let expected = [
        ("<html>502 Bad Gateway</html>", Some("text/plain; charset=utf-8"), None, None),
        ("<order id=\"9\"/>", Some("application/xml"), None, None),
        (r#"{"orderId":7}"#, json, Some("7"), None),
    ];
    for expected in expected {
        assert!(seen.contains(&expected), "{sqs:?}: {expected:?} not in {seen:#?}");
    }
    let order = seen.iter().find(|s| s.0 == o1 || s.0 == o1_again).unwrap();
    assert_eq!((order.1, order.2, order.3), (json, Some("o-1"), Some("acme")), "{sqs:?}");
    let quarantined = setup.aws.quarantined(&setup.quarantine_url, 0).await.unwrap();
    assert!(quarantined.is_empty(), "{sqs:?}: nothing is a schema violation: {quarantined:?}");
}

#[tokio::test]
async fn the_worker_forwards_plain_text_and_foreign_json_as_they_are_on_moto() {
    worker_forwards_bodies_as_they_are(Sqs::Moto).await;
}

#[tokio::test]
async fn the_worker_forwards_plain_text_and_foreign_json_as_they_are_on_localstack() {
    worker_forwards_bodies_as_they_are(Sqs::LocalStack).await;
}

#[tokio::test]
async fn the_consumer_forwards_bodies_as_they_are_keyed_by_message_id() {
    let aws = Aws::from_env().await.unwrap();
    let quarantine_url = aws.create_queue(&unique("quarantine")).await.unwrap();
    let downstream = Downstream::start().await.unwrap();
    let url = downstream.url();
    let env = [
        ("QUARANTINE_QUEUE_URL", quarantine_url.as_str()),
        ("DOWNSTREAM_URL", url.as_str()),
        ("BODY_FORMAT", "raw"),
    ];
    let host = LambdaHost::start(&binary("batch-consumer").unwrap(), &env).await.unwrap();
    let source = "arn:aws:sqs:us-east-1:123456789012:as-they-are";
    let event = json!({"Records": [
        sqs_record("text", json!("plain words"), source),
        sqs_record("foreign", json!(r#"{"event":"signup","user":{"id":3}}"#), source),
    ]});
    let outcome = host.invoke(&event, Duration::from_secs(30)).await;
    assert_eq!(outcome.batch_item_failures(), Some(vec![]), "{outcome:?}");
    let mut seen: Vec<(String, Option<String>)> =
        downstream.received().into_iter().map(|r| (r.body, r.idempotency_key)).collect();
    seen.sort();
    let expected = [
        ("plain words".to_owned(), Some("text".to_owned())),
        (r#"{"event":"signup","user":{"id":3}}"#.to_owned(), Some("foreign".to_owned())),
    ];
    assert_eq!(seen, expected);
}

#[tokio::test]
async fn a_bad_raw_setting_is_named_with_its_value() {
    let aws = Aws::from_env().await.unwrap();
    let quarantine_url = aws.create_queue(&unique("quarantine")).await.unwrap();
    let env = [
        ("QUEUE_URL", quarantine_url.as_str()),
        ("QUARANTINE_QUEUE_URL", quarantine_url.as_str()),
        ("DOWNSTREAM_URL", "http://127.0.0.1:9/"),
        ("BODY_FORMAT", "xml"),
        ("IDEMPOTENCY_KEY_FROM", "order.id"),
    ];
    let worker = e2e_tests::process::Process::start(&binary("sqs-worker").unwrap(), &env).unwrap();
    let line = worker.wait_for_line("IDEMPOTENCY_KEY_FROM", SETTLED).await.unwrap_or_default();
    assert!(line.contains("BODY_FORMAT=\"xml\""), "both at once: {line}");
    assert!(line.contains("IDEMPOTENCY_KEY_FROM=\"order.id\""), "{line}");
}

#[tokio::test]
async fn the_cli_selects_bodies_that_are_not_json_or_have_no_tenant() {
    let aws = Aws::from_env().await.unwrap();
    let dead_letters = aws.create_queue(&unique("dlq")).await.unwrap();
    let mut bodies: Vec<String> = (0..8).map(|i| format!("<html>502 #{i}</html>")).collect();
    bodies.push(json!({"tenantId": "acme", "n": 1}).to_string());
    bodies.push(json!({"n": 2}).to_string());
    for body in &bodies {
        aws.sqs.send_message().queue_url(&dead_letters).message_body(body).send().await.unwrap();
    }
    let total = |filter: &'static str| {
        let url = dead_letters.clone();
        async move {
            let args = ["stats", "--queue-url", url.as_str(), "--json", filter];
            let output = crate::operator_cli::cli(&args).await;
            assert!(output.status.success(), "{}", crate::operator_cli::stderr(&output));
            let stats: Value = serde_json::from_slice(&output.stdout).unwrap();
            stats["total"].as_u64().unwrap()
        }
    };
    assert_eq!(total("--not-json").await, 8);
    assert_eq!(total("--no-tenant").await, 9);
}
