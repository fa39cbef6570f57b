//! A queue fed by SNS with `ENVELOPE` forgotten, or mistyped: batch-consumer
//! says so at once. The mistyped variable is a warning naming the right one,
//! the start line says which envelope is in force, and each message
//! quarantined names the wrapper and the setting that opens it.

use std::time::Duration;

use e2e_tests::downstream::Downstream;
use e2e_tests::fixtures::{Aws, binary, sqs_record, unique};
use e2e_tests::runtime_host::LambdaHost;
use serde_json::json;

use crate::worker_setup::request;

#[tokio::test]
async fn an_sns_queue_with_envelope_mistyped_is_said_at_start_and_in_each_record() {
    let aws = Aws::from_env().await.unwrap();
    let quarantine_url = aws.create_queue(&unique("quarantine")).await.unwrap();
    let downstream = Downstream::start().await.unwrap();
    let url = downstream.url();
    let env = [
        ("QUARANTINE_QUEUE_URL", quarantine_url.as_str()),
        ("DOWNSTREAM_URL", url.as_str()),
        ("ENVELOP", "sns"),
    ];
    let host = LambdaHost::start(&binary("batch-consumer").unwrap(), &env).await.unwrap();
    let notification = json!({"Type": "Notification", "MessageId": "sns-1",
        "TopicArn": "arn:aws:sns:us-east-1:123456789012:orders",
        "Message": request("order.create", "k-1"), "Timestamp": "2026-12-07T00:00:00.000Z"});
    let source = "arn:aws:sqs:us-east-1:123456789012:orders";
    let event = json!({"Records": [sqs_record("m-1", json!(notification.to_string()), source)]});
    let outcome = host.invoke(&event, Duration::from_secs(20)).await;
    assert_eq!(outcome.batch_item_failures(), Some(vec![]), "quarantined: {outcome:?}");
    let logs = host.logs().join("\n");
    assert!(logs.contains("did you mean ENVELOPE?"), "the typo named: {logs}");
    assert!(logs.contains(r#""envelope":"none""#), "the start line's envelope: {logs}");
    let quarantined = aws.quarantined(&quarantine_url, 1).await.unwrap();
    let detail = quarantined[0].record["errorDetail"].as_str().unwrap();
    assert!(detail.contains("the body is an SNS notification: set ENVELOPE=sns"), "{detail}");
    assert!(downstream.received().is_empty(), "nothing POSTed");
}
