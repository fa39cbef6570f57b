//! The batch library as users meet it: the embedding example
//! (`crates/app/examples/ledger.rs`, a custom body type and processor) and
//! batch-consumer, as binaries under the Lambda Runtime API host, against
//! moto's SQS.

use std::collections::HashMap;
use std::time::Duration;

use e2e_tests::downstream::Downstream;
use e2e_tests::fixtures::{Aws, binary, sqs_record, unique};
use e2e_tests::runtime_host::{LambdaHost, Outcome};
use serde_json::{Value, json};

const SOURCE: &str = "arn:aws:sqs:us-east-1:123456789012:ledger";
const TIMEOUT: Duration = Duration::from_secs(30);
const TRACE: &str = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1";

fn records(bodies: &[(&str, Value)]) -> Value {
    json!({"Records": bodies.iter().map(|(id, body)| sqs_record(id, body.clone(), SOURCE)).collect::<Vec<_>>()})
}

async fn quarantine(aws: &Aws) -> String {
    aws.create_queue(&unique("quarantine")).await.unwrap()
}

#[tokio::test]
async fn the_example_embeds_the_library_with_its_own_body_type_and_processor() {
    let aws = Aws::from_env().await.unwrap();
    let quarantine_url = quarantine(&aws).await;
    let env =
        [("QUARANTINE_QUEUE_URL", quarantine_url.as_str()), ("FROZEN_ACCOUNT", "acct-frozen")];
    let host = LambdaHost::start(&binary("examples/ledger").unwrap(), &env).await.unwrap();
    let event = records(&[
        ("posted", json!(r#"{"account":"acct-1","cents":250}"#)),
        ("frozen", json!(r#"{"account":"acct-frozen","cents":100}"#)),
        ("zero", json!(r#"{"account":"acct-1","cents":0}"#)),
        ("not-json", json!("cents=5")),
        ("wrong-shape", json!(r#"{"account":7}"#)),
    ]);

    let outcome = host.invoke(&event, TIMEOUT).await;
    assert_eq!(outcome.batch_item_failures(), Some(vec!["frozen".to_owned()]), "{outcome:?}");

    let codes: HashMap<String, String> = aws
        .quarantined(&quarantine_url, 3)
        .await
        .unwrap()
        .into_iter()
        .map(|q| (q.message_id().to_owned(), q.record["errorCode"].as_str().unwrap().to_owned()))
        .collect();
    let expected = [
        ("zero", "zero_amount"),
        ("not-json", "invalid_json"),
        ("wrong-shape", "schema_violation"),
    ];
    assert_eq!(codes, expected.map(|(id, code)| (id.to_owned(), code.to_owned())).into());
    let records = aws.quarantined(&quarantine_url, 0).await.unwrap();
    assert!(records.is_empty(), "nothing else was quarantined: {records:?}");
}

/// The body's own labels (`JsonBody::tenant_id`, `operation`) reach its
/// quarantine record, and the operator's CLI selects by them.
#[tokio::test]
async fn the_examples_own_labels_are_in_its_quarantine_records_and_the_cli_selects_by_them() {
    let aws = Aws::from_env().await.unwrap();
    let quarantine_url = quarantine(&aws).await;
    let env = [("QUARANTINE_QUEUE_URL", quarantine_url.as_str())];
    let host = LambdaHost::start(&binary("examples/ledger").unwrap(), &env).await.unwrap();
    let event = records(&[
        ("zero-acme", json!(r#"{"account":"acme","cents":0}"#)),
        ("zero-globex", json!(r#"{"account":"globex","cents":0}"#)),
        ("not-json", json!("cents=5")),
    ]);
    let outcome = host.invoke(&event, TIMEOUT).await;
    assert_eq!(outcome.batch_item_failures(), Some(vec![]), "{outcome:?}");
    let cli = |args: &'static [&'static str]| {
        let url = quarantine_url.clone();
        async move {
            let mut all = vec!["stats", "--queue-url", url.as_str(), "--json"];
            all.extend_from_slice(args);
            let output = crate::operator_cli::cli(&all).await;
            assert!(output.status.success(), "{}", crate::operator_cli::stderr(&output));
            let stats: Value = serde_json::from_slice(&output.stdout).unwrap();
            stats["total"].as_u64().unwrap()
        }
    };
    // The CLI counts by receiving every record (a scan); each count is of all three.
    assert_eq!(cli(&[]).await, 3);
    assert_eq!(cli(&["--tenant", "acme"]).await, 1, "the body named its tenant");
    assert_eq!(cli(&["--tenant", "acme", "--operation", "credit"]).await, 1);
    assert_eq!(cli(&["--operation", "debit"]).await, 0);
    assert_eq!(cli(&["--error-code", "invalid_json"]).await, 1, "no labels: not JSON");
}

#[tokio::test]
async fn the_example_and_the_consumer_answer_a_non_sqs_event_with_invalid_event() {
    let aws = Aws::from_env().await.unwrap();
    let quarantine_url = quarantine(&aws).await;
    let downstream = Downstream::start().await.unwrap();
    let url = downstream.url();
    for (name, env) in [
        ("examples/ledger", vec![("QUARANTINE_QUEUE_URL", quarantine_url.as_str())]),
        (
            "batch-consumer",
            vec![
                ("QUARANTINE_QUEUE_URL", quarantine_url.as_str()),
                ("DOWNSTREAM_URL", url.as_str()),
            ],
        ),
    ] {
        let host = LambdaHost::start(&binary(name).unwrap(), &env).await.unwrap();
        for event in [json!({"detail-type": "Scheduled Event"}), json!({"Records": 5}), json!([1])]
        {
            match host.invoke(&event, TIMEOUT).await {
                Outcome::Error(error) => {
                    assert_eq!(error["errorType"], "InvalidEvent", "{name} {event}: {error}");
                }
                other => panic!("{name} {event}: expected an error, got {other:?}"),
            }
        }
    }
}

#[tokio::test]
async fn a_producers_trace_reaches_the_downstream_and_the_failed_records_log() {
    let aws = Aws::from_env().await.unwrap();
    let quarantine_url = quarantine(&aws).await;
    let downstream = Downstream::start().await.unwrap();
    let url = downstream.url();
    let env = [("QUARANTINE_QUEUE_URL", quarantine_url.as_str()), ("DOWNSTREAM_URL", url.as_str())];
    let host = LambdaHost::start(&binary("batch-consumer").unwrap(), &env).await.unwrap();
    let request = |operation: &str, key: &str| {
        json!({"schemaVersion": "1", "operation": operation, "tenantId": "t", "idempotencyKey": key})
            .to_string()
    };
    let mut event = records(&[
        ("traced-fail", json!(request("ledger.fail", "k1"))),
        ("untraced", json!(request("ledger.post", "k2"))),
    ]);
    event["Records"][0]["attributes"]["AWSTraceHeader"] = json!(TRACE);

    let served = host.invoke_served(&event, TIMEOUT).await;
    assert_eq!(served.outcome.batch_item_failures(), Some(vec!["traced-fail".to_owned()]));

    let received = downstream.received();
    let traced = received.iter().find(|r| r.idempotency_key.as_deref() == Some("k1")).unwrap();
    assert_eq!(traced.amzn_trace_id.as_deref(), Some(TRACE));
    assert_eq!(
        traced.traceparent.as_deref(),
        Some("00-5759e988bd862e3fe1be46a994272793-53995c3f42cd8ad8-01")
    );
    let untraced = received.iter().find(|r| r.idempotency_key.as_deref() == Some("k2")).unwrap();
    // A message without a trace of its own is followed in its invocation's.
    assert_eq!(untraced.amzn_trace_id.as_deref(), Some(served.trace_header.as_str()));
    let invocation = served.trace_header.split(';').next().unwrap().replace("Root=1-", "");
    let parent = served.trace_header.split("Parent=").nth(1).unwrap().split(';').next().unwrap();
    assert_eq!(
        untraced.traceparent.as_deref(),
        Some(format!("00-{}-{parent}-01", invocation.replace('-', "")).as_str())
    );

    let summary = host
        .logs()
        .into_iter()
        .filter_map(|line| serde_json::from_str::<Value>(&line).ok())
        .find(|log| log["fields"]["message"] == "batch summary")
        .unwrap();
    assert_eq!(
        summary["fields"]["failed"],
        "traced-fail:retry:processor:trace=5759e988bd862e3fe1be46a994272793"
    );
}

/// Started by hand, outside any Lambda runtime API, a function built with the
/// library says so in one sentence and exits 2, not with the runtime client's panic.
#[tokio::test]
async fn a_library_function_started_outside_lambda_says_so_in_one_sentence() {
    let output = tokio::process::Command::new(binary("examples/ledger").unwrap())
        .env_remove("AWS_LAMBDA_RUNTIME_API")
        .env_remove("AWS_LAMBDA_FUNCTION_NAME")
        .output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("AWS_LAMBDA_RUNTIME_API") && !stderr.contains("panicked"), "{stderr}");
}
