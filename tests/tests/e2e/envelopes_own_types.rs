//! Processors of the user's own types on queues other services feed, as a
//! Lambda function (under the Runtime API host) and as a worker (on moto),
//! with `ENVELOPE` and no other change: the ledger example on SNS, the
//! thumbnail worker on an SNS-fed queue and on EventBridge events, the
//! uploads example (the library's `S3Notification`) on S3 notifications
//! both ways.

use std::time::Duration;

use e2e_tests::fixtures::{Aws, Sqs, binary, sqs_record, unique};
use e2e_tests::process::Process;
use e2e_tests::runtime_host::LambdaHost;
use serde_json::{Value, json};

use crate::envelopes::{bucket_notifying, codes, delivered, publish, stop, topic_to_queue};
use crate::worker_setup::{Setup, setup_on};

/// An example worker's variables on the setup's queues, with `envelope`.
fn example_env<'a>(
    setup: &'a Setup,
    endpoint: &'a str,
    envelope: &'a str,
) -> Vec<(&'a str, &'a str)> {
    vec![
        ("AWS_ENDPOINT_URL_SQS", endpoint),
        ("QUEUE_URL", setup.work_url.as_str()),
        ("QUARANTINE_QUEUE_URL", setup.quarantine_url.as_str()),
        ("RECEIVE_WAIT_SECONDS", "1"),
        ("ENVELOPE", envelope),
    ]
}

/// Runs the example `name` on the setup's queues until they are empty, then
/// drains it: its log lines.
async fn run_example(setup: &Setup, name: &str, envelope: &str) -> Vec<String> {
    let endpoint = setup.sqs.endpoint().unwrap();
    let env = example_env(setup, &endpoint, envelope);
    let worker = Process::start(&binary(&format!("examples/{name}")).unwrap(), &env).unwrap();
    setup.wait_until_empty().await;
    stop(worker).await
}

#[tokio::test]
async fn the_example_lambda_runs_its_own_type_on_sns_notifications() {
    let aws = Aws::from_env().await.unwrap();
    let quarantine_url = aws.create_queue(&unique("quarantine")).await.unwrap();
    let env = [("QUARANTINE_QUEUE_URL", quarantine_url.as_str()), ("ENVELOPE", "sns")];
    let host = LambdaHost::start(&binary("examples/ledger").unwrap(), &env).await.unwrap();
    let sns = |id: &str, message: &str| {
        json!({"Type": "Notification", "MessageId": id, "TopicArn": "arn:aws:sns:us-east-1:123456789012:ledger",
               "Message": message, "Timestamp": "2026-12-07T10:00:00.000Z"})
        .to_string()
    };
    let source = "arn:aws:sqs:us-east-1:123456789012:ledger-sns";
    let event = json!({"Records": [
        sqs_record("posted", json!(sns("n-1", r#"{"account":"acct-1","cents":250}"#)), source),
        sqs_record("zero", json!(sns("n-2", r#"{"account":"acct-1","cents":0}"#)), source),
    ]});
    let outcome = host.invoke(&event, Duration::from_secs(30)).await;
    assert_eq!(outcome.batch_item_failures(), Some(vec![]), "{outcome:?}");
    let expected = [("zero".to_owned(), "zero_amount".to_owned())];
    assert_eq!(codes(&aws, &quarantine_url, 1).await, expected, "its own code, from inside");
}

#[tokio::test]
async fn the_example_worker_runs_its_own_type_on_eventbridge_events() {
    let setup = setup_on(Sqs::Moto, false).await;
    let event = |detail: Value| {
        json!({"version": "0", "id": unique("e"), "detail-type": "Image Uploaded", "source": "com.example",
               "account": "123456789012", "time": "2026-12-07T10:00:00Z", "region": "us-east-1",
               "resources": [], "detail": detail})
        .to_string()
    };
    setup
        .send(&[
            event(json!({"image": "dog.png", "width": 300})),
            event(json!({"image": "x", "width": 9000})),
        ])
        .await;
    let lines = run_example(&setup, "worker", "eventbridge").await;
    let made = lines.iter().filter(|l| l.contains("thumbnail made") && l.contains("dog.png"));
    assert_eq!(made.count(), 1, "{lines:#?}");
    let quarantined = setup.aws.quarantined(&setup.quarantine_url, 1).await.unwrap();
    assert_eq!(quarantined[0].record["errorCode"], "too_wide");
}

#[tokio::test]
async fn the_uploads_example_runs_on_s3_notifications_as_a_worker() {
    let setup = setup_on(Sqs::Moto, false).await;
    let bucket = bucket_notifying(&setup).await;
    let s3 = &setup.aws.s3;
    for key in ["reports/q4 summary.csv", "tools/setup.exe"] {
        s3.put_object()
            .bucket(&bucket)
            .key(key)
            .body(b"12345".to_vec().into())
            .send()
            .await
            .unwrap();
    }
    delivered(&setup, 3).await;
    let lines = run_example(&setup, "uploads", "s3").await;
    let indexed: Vec<&String> = lines.iter().filter(|l| l.contains("upload indexed")).collect();
    assert_eq!(indexed.len(), 1, "{lines:#?}");
    assert!(
        indexed[0].contains("reports/q4 summary.csv") && indexed[0].contains("size=5"),
        "{}",
        indexed[0]
    );
    assert!(lines.iter().any(|l| l.contains("skipped=1")), "the test event: {lines:#?}");
    let quarantined = setup.aws.quarantined(&setup.quarantine_url, 1).await.unwrap();
    assert_eq!(quarantined[0].record["errorCode"], "refused_type");
}

#[tokio::test]
async fn the_uploads_example_runs_on_s3_notifications_as_a_lambda() {
    let aws = Aws::from_env().await.unwrap();
    let quarantine_url = aws.create_queue(&unique("quarantine")).await.unwrap();
    let env = [("QUARANTINE_QUEUE_URL", quarantine_url.as_str()), ("ENVELOPE", "s3")];
    let host = LambdaHost::start(&binary("examples/uploads").unwrap(), &env).await.unwrap();
    let fixture = |name: &str| -> Value {
        let path = format!("{}/../events/envelopes/{name}", env!("CARGO_MANIFEST_DIR"));
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    };
    let mut event = fixture("powertools-s3-sqs.json");
    let test_event = fixture("aws-docs-s3-test-event-sqs.json")["Records"][0].clone();
    event["Records"].as_array_mut().unwrap().push(test_event);
    let outcome = host.invoke(&event, Duration::from_secs(30)).await;
    assert_eq!(outcome.batch_item_failures(), Some(vec![]), "{outcome:?}");
    let logs = host.logs();
    assert!(
        logs.iter().any(|l| l.contains("upload indexed") && l.contains("test.pdf")),
        "{logs:#?}"
    );
    assert!(aws.quarantined(&quarantine_url, 0).await.unwrap().is_empty());
}

#[tokio::test]
async fn the_example_worker_runs_its_own_type_on_an_sns_fed_queue() {
    let setup = setup_on(Sqs::Moto, false).await;
    let (sns, topic) = topic_to_queue(&setup).await;
    publish(&sns, &topic, r#"{"image":"cat.png","width":200}"#).await;
    publish(&sns, &topic, "not json").await;
    delivered(&setup, 2).await;
    let lines = run_example(&setup, "worker", "sns").await;
    let made = lines.iter().filter(|l| l.contains("thumbnail made") && l.contains("cat.png"));
    assert_eq!(made.count(), 1, "{lines:#?}");
    let quarantined = setup.aws.quarantined(&setup.quarantine_url, 1).await.unwrap();
    let record = &quarantined[0].record;
    assert_eq!(record["errorCode"], "invalid_json");
    let detail = record["errorDetail"].as_str().unwrap();
    assert!(detail.starts_with("in the SNS Message: "), "{detail}");
    let body = record["body"].as_str().unwrap();
    assert!(body.contains("\"Type\""), "the record keeps the body as delivered: {body}");
}
