//! Quarantine records an operator may find that cannot be replayed: each
//! stays on its queue, with its reason on record.

use std::time::Duration;

use e2e_tests::fixtures::unique;
use serde_json::Value;

use crate::operator_cli::{audit_lines, stderr};

use crate::operator_cli_faults::{SETTLED, setup};

/// Quarantine records an operator may find: some cannot be replayed and must
/// stay, each with its reason on record; the others go.
#[tokio::test]
async fn hostile_records_that_cannot_be_replayed_stay_with_their_reason() {
    let setup = setup().await;
    let work_arn = setup.aws.queue_arn(&setup.work).await.unwrap();
    let fifo_arn = format!("{}.fifo", &work_arn);
    let record = |id: &str, arn: &str, body: Value, attributes: Value| {
        serde_json::json!({"messageId": id, "sourceQueueArn": arn, "errorCode": "downstream_rejected",
            "errorDetail": "x", "lastSeen": "2026-11-30T12:00:00.000Z", "remediationStatus": "new",
            "body": body, "attributes": {}, "messageAttributes": attributes})
        .to_string()
    };
    let text = |value: &str| serde_json::json!({"t": {"dataType": "String", "stringValue": value}});
    let bodies = vec![
        record("ok", &work_arn, Value::String("{\"a\":1}".into()), serde_json::json!({})),
        record("huge", &work_arn, Value::String("h".repeat(200_000)), text("é😀")),
        record("null-body", &work_arn, Value::Null, serde_json::json!({})),
        record(
            "bad-base64",
            &work_arn,
            Value::String("b".into()),
            serde_json::json!({"b": {"dataType": "Binary", "binaryValue": "%%%"}}),
        ),
        record("refused-character", &work_arn, Value::String("c".into()), text("\u{1}")),
        record("not-an-arn", "not-an-arn", Value::String("d".into()), serde_json::json!({})),
        record("fifo-without-group", &fifo_arn, Value::String("e".into()), serde_json::json!({})),
        "{\"not\": \"a record\"}".to_owned(),
    ];
    let quarantine = setup.aws.create_queue(&unique("quarantine")).await.unwrap();
    setup.aws.send_batch(&quarantine, &bodies).await.unwrap();
    // The FIFO queue the record names must exist for its lookup to succeed.
    let fifo_name = fifo_arn.rsplit(':').next().unwrap().to_owned();
    setup
        .aws
        .sqs
        .create_queue()
        .queue_name(fifo_name)
        .attributes(aws_sdk_sqs::types::QueueAttributeName::FifoQueue, "true")
        .send()
        .await
        .unwrap();
    let output = setup
        .via_proxy(&[
            "replay",
            "--queue-url",
            &quarantine,
            "--yes",
            "--audit",
            setup.audit.to_str().unwrap(),
        ])
        .await;
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let lines = audit_lines(&setup.audit);
    let result_of = |id: &str| {
        lines
            .iter()
            .find(|l| l["originalMessageId"] == id)
            .map(|l| (l["result"].clone(), l["reason"].clone()))
    };
    for id in ["ok", "huge"] {
        assert_eq!(result_of(id).unwrap().0, "replayed", "{id}");
    }
    for (id, reason) in [
        ("null-body", "no body"),
        ("bad-base64", "attribute b"),
        ("refused-character", "InvalidMessageContents"),
        ("not-an-arn", "not an SQS queue ARN"),
        ("fifo-without-group", "no group id"),
    ] {
        let (result, why) =
            result_of(id).unwrap_or_else(|| panic!("{id} not on record: {lines:?}"));
        assert_eq!(result, "send_failed", "{id}");
        assert!(why.as_str().unwrap().contains(reason), "{id}: {why}");
    }
    assert_eq!(lines.iter().filter(|l| l["result"] == "send_failed").count(), 6, "{lines:?}");
    let every = Duration::from_millis(200);
    setup.aws.wait_for_counts(&quarantine, (6, 0), SETTLED, every).await.unwrap();
    let arrived = setup.aws.receive_all(&setup.work, 2).await.unwrap();
    let mut sizes: Vec<usize> = arrived.iter().map(|m| m.body().unwrap().len()).collect();
    sizes.sort_unstable();
    assert_eq!(sizes, [7, 200_000], "the two replayable ones, bodies whole");
}
