//! batch-consumer end to end: the binary under the Lambda Runtime API host,
//! the quarantine queue on moto's SQS, and a downstream HTTP server started
//! by each test. Events are the sample files in `events/`.

use std::collections::HashMap;
use std::time::Duration;

use e2e_tests::downstream::Downstream;
use e2e_tests::fixtures::{Aws, binary, unique};
use e2e_tests::runtime_host::{LambdaHost, Outcome};
use serde_json::{Value, json};

fn event(name: &str) -> Value {
    let path = format!("{}/../events/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn ids(event: &Value) -> Vec<String> {
    event["Records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["messageId"].as_str().unwrap().to_owned())
        .collect()
}

struct Setup {
    aws: Aws,
    downstream: Downstream,
    quarantine_url: String,
}

async fn setup() -> Setup {
    let aws = Aws::from_env().await.unwrap();
    let quarantine_url = aws.create_queue(&unique("quarantine")).await.unwrap();
    Setup { aws, downstream: Downstream::start().await.unwrap(), quarantine_url }
}

impl Setup {
    async fn invoke(&self, event: &Value, extra: &[(&str, &str)], timeout: Duration) -> Outcome {
        let url = self.downstream.url();
        let mut env = vec![
            ("DOWNSTREAM_URL", url.as_str()),
            ("QUARANTINE_QUEUE_URL", self.quarantine_url.as_str()),
        ];
        env.extend_from_slice(extra);
        let host = LambdaHost::start(&binary("batch-consumer").unwrap(), &env).await.unwrap();
        host.invoke(event, timeout).await
    }

    async fn quarantined(
        &self,
        expected: usize,
    ) -> HashMap<String, (Value, HashMap<String, String>)> {
        let records = self.aws.quarantined(&self.quarantine_url, expected).await.unwrap();
        records.into_iter().map(|q| (q.message_id().to_owned(), (q.record, q.attributes))).collect()
    }
}

fn failures(outcome: Outcome) -> Vec<String> {
    outcome
        .batch_item_failures()
        .unwrap_or_else(|| panic!("expected a batch response, got {outcome:?}"))
}

const TIMEOUT: Duration = Duration::from_secs(30);

#[tokio::test]
async fn standard_batch_reports_exactly_the_retryable_messages() {
    let setup = setup().await;
    let event = event("sqs-standard.json");
    let ids = ids(&event);
    let failed = failures(setup.invoke(&event, &[], TIMEOUT).await);
    // 429 and 503 are retried; the four poison messages are quarantined, not retried.
    assert_eq!(failed, [ids[6].clone(), ids[7].clone()]);

    // Each delivered message reached the downstream exactly once, unchanged, with its headers.
    let received = setup.downstream.received();
    let records = event["Records"].as_array().unwrap();
    for (index, correlation) in [(0, ids[0].as_str()), (1, "req-7f3a")] {
        let body = records[index]["body"].as_str().unwrap();
        let copies: Vec<_> = received.iter().filter(|r| r.body == body).collect();
        assert_eq!(copies.len(), 1, "message {index} delivered {} times", copies.len());
        let request = copies[0];
        let work: Value = serde_json::from_str(body).unwrap();
        assert_eq!(request.idempotency_key.as_deref(), work["idempotencyKey"].as_str());
        assert_eq!(request.tenant_id.as_deref(), work["tenantId"].as_str());
        assert_eq!(request.correlation_id.as_deref(), Some(correlation));
        assert_eq!(request.content_type.as_deref(), Some("application/json"));
        assert_eq!(request.path, "/work");
    }
    assert_eq!(
        received.len(),
        5,
        "two delivered, one rejected, one throttled, one failing: {received:?}"
    );

    let quarantined = setup.quarantined(4).await;
    let expected_codes = [
        (2, "invalid_json", None),
        (3, "schema_violation", None),
        (4, "unsupported_schema_version", Some("tenant-a")),
        (5, "downstream_rejected", Some("tenant-c")),
    ];
    assert_eq!(quarantined.len(), 4, "{:?}", quarantined.keys());
    for (index, code, tenant) in expected_codes {
        let (record, attributes) = &quarantined[&ids[index]];
        let original = &records[index];
        assert_eq!(record["messageId"], original["messageId"]);
        assert_eq!(record["sourceQueueArn"], "arn:aws:sqs:us-east-1:123456789012:orders-work");
        assert_eq!(record["errorCode"], code);
        assert!(!record["errorDetail"].as_str().unwrap().is_empty());
        assert_eq!(record["tenantId"].as_str(), tenant);
        assert_eq!(record["receiveCount"], 1);
        let first_seen = [
            "2025-11-30T10:53:20.274Z",
            "2025-11-30T10:53:20.411Z",
            "2025-11-30T10:53:20.548Z",
            "2025-11-30T10:53:20.685Z",
        ];
        assert_eq!(record["firstSeen"], first_seen[index - 2]);
        assert!(record["lastSeen"].as_str().unwrap() > record["firstSeen"].as_str().unwrap());
        assert!(record["handlerVersion"].as_str().unwrap().starts_with("batch-consumer/0.1.0"));
        assert_eq!(record["remediationStatus"], "new");
        assert!(record.get("messageGroupId").is_none(), "standard queues have no group");
        assert_eq!(record["body"], original["body"]);
        assert_eq!(record["attributes"], original["attributes"]);
        assert_eq!(record["messageAttributes"], original["messageAttributes"]);
        assert_eq!(attributes.get("errorCode").map(String::as_str), Some(code));
        assert_eq!(attributes.get("tenantId").map(String::as_str), tenant);
    }
    let (unsupported, _) = &quarantined[&ids[4]];
    assert_eq!(unsupported["schemaVersion"], "2.0");
    assert_eq!(unsupported["operation"], "invoice.create");
    let (rejected, _) = &quarantined[&ids[5]];
    assert!(rejected["errorDetail"].as_str().unwrap().contains("422"));
}

#[tokio::test]
async fn fifo_batch_holds_back_the_rest_of_a_failed_group() {
    let setup = setup().await;
    let event = event("sqs-fifo.json");
    let ids = ids(&event);
    let failed = failures(setup.invoke(&event, &[], TIMEOUT).await);
    // account-1: led-1 done, led-3 fails (503), led-4 held back. account-2 all done.
    // account-3: the invalid body is quarantined and led-6 still runs.
    assert_eq!(failed, [ids[2].clone(), ids[4].clone()]);
    let keys: Vec<String> =
        setup.downstream.received().iter().filter_map(|r| r.idempotency_key.clone()).collect();
    assert!(!keys.contains(&"led-4".to_owned()), "led-4 was sent after led-3 failed: {keys:?}");
    for key in ["led-1", "led-2", "led-3", "led-5", "led-6"] {
        assert_eq!(keys.iter().filter(|k| *k == key).count(), 1, "{key} in {keys:?}");
    }
    let position = |key: &str| keys.iter().position(|k| k == key).unwrap();
    assert!(position("led-1") < position("led-3"));
    assert!(position("led-2") < position("led-5"));
    let quarantined = setup.quarantined(1).await;
    let (record, _) = &quarantined[&ids[3]];
    assert_eq!(record["errorCode"], "invalid_json");
    assert_eq!(record["messageGroupId"], "account-3");
}

#[tokio::test]
async fn without_a_quarantine_queue_poison_messages_are_retried_not_lost() {
    let setup = setup().await;
    setup.aws.delete_queue(&setup.quarantine_url).await.unwrap();
    let event = event("sqs-standard.json");
    let ids = ids(&event);
    let failed = failures(setup.invoke(&event, &[], TIMEOUT).await);
    assert_eq!(failed, ids[2..].to_vec(), "the four poison messages and the two retries");
    let delivered: Vec<_> =
        setup.downstream.received().into_iter().filter(|r| r.status == 204).collect();
    assert_eq!(
        delivered.len(),
        2,
        "only messages 0 and 1 were acknowledged, and they were delivered"
    );
}

#[tokio::test]
async fn a_downstream_that_is_down_retries_everything_it_should_have_received() {
    let setup = setup().await;
    let mut event = event("sqs-standard.json");
    let all = event["Records"].as_array().unwrap().clone();
    event["Records"] = json!([all[0], all[1], all[5], all[6], all[7]]);
    let ids = ids(&event);
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/work", listener.local_addr().unwrap())
    };
    let url = setup.downstream.url();
    let host = LambdaHost::start(
        &binary("batch-consumer").unwrap(),
        &[
            ("DOWNSTREAM_URL", closed.as_str()),
            ("QUARANTINE_QUEUE_URL", setup.quarantine_url.as_str()),
        ],
    )
    .await
    .unwrap();
    let failed = failures(host.invoke(&event, TIMEOUT).await);
    assert_eq!(failed, ids);
    assert!(setup.quarantined(1).await.is_empty());
    assert!(setup.downstream.received().is_empty(), "{url} was not used");
}

#[tokio::test]
async fn a_slow_downstream_is_cut_at_the_deadline_and_retried() {
    let setup = setup().await;
    let mut event = event("sqs-standard.json");
    let slow =
        event["Records"][0]["body"].as_str().unwrap().replace("invoice.create", "invoice.slow");
    event["Records"][0]["body"] = json!(slow);
    let ids = ids(&event);
    let started = std::time::Instant::now();
    let outcome = setup
        .invoke(
            &event,
            &[("DEADLINE_MARGIN_MS", "1500"), ("DOWNSTREAM_TIMEOUT_MS", "60000")],
            Duration::from_secs(4),
        )
        .await;
    let elapsed = started.elapsed();
    let failed = failures(outcome);
    assert!(failed.contains(&ids[0]), "the slow message is retried: {failed:?}");
    assert!(!failed.contains(&ids[1]), "the fast one is done: {failed:?}");
    assert!(
        elapsed < Duration::from_secs(4),
        "answered before the 4 s deadline, after {elapsed:?}"
    );
}

#[tokio::test]
async fn a_record_without_message_id_fails_the_invocation() {
    let setup = setup().await;
    let mut event = event("sqs-standard.json");
    event["Records"][3].as_object_mut().unwrap().remove("messageId");
    match setup.invoke(&event, &[], TIMEOUT).await {
        Outcome::Error(error) => {
            assert_eq!(error["errorType"], "MissingMessageId");
            assert!(error["errorMessage"].as_str().unwrap().contains("record 3"), "{error}");
        }
        other => panic!("expected an invocation error, got {other:?}"),
    }
    assert!(
        setup.downstream.received().is_empty(),
        "nothing is processed when the batch cannot be reported"
    );
}

#[tokio::test]
async fn an_event_that_is_not_from_sqs_fails_with_a_clear_message() {
    let setup = setup().await;
    let schedule = event("schedule.json");
    match setup.invoke(&schedule, &[], TIMEOUT).await {
        Outcome::Error(error) => {
            let message = error["errorMessage"].as_str().unwrap();
            assert!(message.contains("not an SQS event"), "{message}");
        }
        other => panic!("expected an invocation error, got {other:?}"),
    }
}

#[tokio::test]
async fn an_invalid_variable_fails_the_init_naming_it_and_its_value() {
    let setup = setup().await;
    let host = LambdaHost::start(
        &binary("batch-consumer").unwrap(),
        &[
            ("DOWNSTREAM_URL", "ftp://nowhere"),
            ("QUARANTINE_QUEUE_URL", setup.quarantine_url.as_str()),
        ],
    )
    .await
    .unwrap();
    let outcome = host.invoke(&event("sqs-standard.json"), Duration::from_secs(10)).await;
    assert!(matches!(outcome, Outcome::Exited(status) if !status.success()), "{outcome:?}");
    assert!(host.logs().join("\n").contains(r#"DOWNSTREAM_URL=\"ftp://nowhere\" is invalid"#));
}

#[tokio::test]
async fn retried_messages_on_a_real_queue_are_held_back_by_the_backoff() {
    let setup = setup().await;
    let queue = unique("source");
    let url = setup.aws.create_queue(&queue).await.unwrap();
    let arn = setup.aws.queue_arn(&url).await.unwrap();
    let bodies = [
        r#"{"schemaVersion":"1","operation":"invoice.create","tenantId":"t","idempotencyKey":"k1"}"#,
        r#"{"schemaVersion":"1","operation":"invoice.fail","tenantId":"t","idempotencyKey":"k2"}"#,
    ];
    for body in bodies {
        setup.aws.sqs.send_message().queue_url(&url).message_body(body).send().await.unwrap();
    }
    // Received as Lambda's poller would, with a 1 s visibility timeout.
    let received = setup
        .aws
        .sqs
        .receive_message()
        .queue_url(&url)
        .max_number_of_messages(10)
        .message_system_attribute_names(aws_sdk_sqs::types::MessageSystemAttributeName::All)
        .visibility_timeout(1)
        .send()
        .await
        .unwrap()
        .messages
        .unwrap_or_default();
    assert_eq!(received.len(), 2);
    let records: Vec<Value> = received
        .iter()
        .map(|m| {
            let attributes: serde_json::Map<String, Value> = m
                .attributes()
                .map(|a| a.iter().map(|(k, v)| (k.as_str().to_owned(), json!(v))).collect())
                .unwrap_or_default();
            json!({
                "messageId": m.message_id(), "receiptHandle": m.receipt_handle(), "body": m.body(),
                "attributes": attributes, "messageAttributes": {}, "md5OfBody": m.md5_of_body(),
                "eventSource": "aws:sqs", "eventSourceARN": arn, "awsRegion": "us-east-1"
            })
        })
        .collect();
    let event = json!({ "Records": records });
    let failed = failures(setup.invoke(&event, &[("RETRY_BASE_SECONDS", "20")], TIMEOUT).await);
    let failing = received.iter().find(|m| m.body() == Some(bodies[1])).unwrap();
    assert_eq!(failed, [failing.message_id().unwrap().to_owned()]);

    // Without the backoff both would be visible again after 1 s; the retried one now waits 10-20 s.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let visible = setup.aws.receive_all(&url, 2).await.unwrap();
    let visible: Vec<_> = visible.iter().filter_map(|m| m.body()).collect();
    assert_eq!(visible, [bodies[0]], "only the acknowledged-by-omission message is visible again");
}
