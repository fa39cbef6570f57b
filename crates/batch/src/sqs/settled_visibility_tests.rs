//! The visibility of a settled batch's retried messages, through the batch
//! processor against `aws-smithy-mocks`: the report lists only the changes
//! SQS confirmed, and a refused or failed change loses no message.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use crate::{Backoff, BatchProcessor, Message, Verdict, record::SqsRecord};
use aws_sdk_sqs::operation::change_message_visibility_batch::{
    ChangeMessageVisibilityBatchError, ChangeMessageVisibilityBatchInput,
    ChangeMessageVisibilityBatchOutput,
};
use aws_sdk_sqs::types::{BatchResultErrorEntry, ChangeMessageVisibilityBatchResultEntry};
use aws_smithy_mocks::{Rule, RuleMode, mock, mock_client};
use tokio::time::Instant;

/// A body of the shape the records below carry.
#[derive(serde::Deserialize)]
struct Work {
    #[allow(dead_code)] // decoded, never read
    operation: String,
}

impl crate::JsonBody for Work {}

fn record(id: &str) -> SqsRecord {
    SqsRecord::new(id)
        .with_body(r#"{"schemaVersion":"1","operation":"o","tenantId":"t","idempotencyKey":"k"}"#)
        .with_receipt_handle(format!("rh-{id}"))
        .with_source_arn("arn:aws:sqs:us-east-1:123456789012:work")
}

async fn settle(rule: &Rule) -> (Vec<String>, Vec<String>) {
    let client = mock_client!(aws_sdk_sqs, RuleMode::MatchAny, [rule]);
    let retry = |_: &Message<'_, Work>| async { Verdict::retry("later") };
    let batch = BatchProcessor::builder(retry)
        .retries(client, Backoff { base: Duration::from_secs(10), max: Duration::from_secs(900) })
        .build()
        .unwrap();
    let records = [record("a"), record("b")];
    let report = batch.process(&records, Instant::now() + Duration::from_secs(10)).await.unwrap();
    let changed = report.visibility_changes.iter().map(|c| c.receipt_handle.clone()).collect();
    (changed, report.batch_item_failures)
}

/// SQS's answer: `refused` entries failed, every other entry of `input` changed.
fn answer(
    input: &ChangeMessageVisibilityBatchInput,
    refused: &[&str],
) -> ChangeMessageVisibilityBatchOutput {
    let (mut changed, mut failed) = (Vec::new(), Vec::new());
    for entry in input.entries() {
        if refused.contains(&entry.id()) {
            let error = BatchResultErrorEntry::builder().id(entry.id()).sender_fault(true);
            failed.push(error.code("ReceiptHandleIsInvalid").build().unwrap());
        } else {
            changed.push(
                ChangeMessageVisibilityBatchResultEntry::builder().id(entry.id()).build().unwrap(),
            );
        }
    }
    let output = ChangeMessageVisibilityBatchOutput::builder().set_successful(Some(changed));
    output.set_failed(Some(failed)).build().unwrap()
}

#[tokio::test]
async fn the_report_lists_only_the_visibility_changes_sqs_confirmed() {
    let all = mock!(aws_sdk_sqs::Client::change_message_visibility_batch)
        .then_compute_output(|input| answer(input, &[]));
    assert_eq!(
        settle(&all).await,
        (vec!["rh-a".into(), "rh-b".into()], vec!["a".into(), "b".into()])
    );

    let refusing_b = mock!(aws_sdk_sqs::Client::change_message_visibility_batch)
        .then_compute_output(|input| answer(input, &["1"]));
    assert_eq!(settle(&refusing_b).await, (vec!["rh-a".into()], vec!["a".into(), "b".into()]));

    let unanswered =
        mock!(aws_sdk_sqs::Client::change_message_visibility_batch).then_output(|| {
            let none = ChangeMessageVisibilityBatchOutput::builder().set_successful(Some(vec![]));
            none.set_failed(Some(vec![])).build().unwrap()
        });
    let (changed, retried) = settle(&unanswered).await;
    assert!(changed.is_empty(), "an answer naming no entry confirmed nothing: {changed:?}");
    assert_eq!(retried, ["a", "b"]);

    let throttled = mock!(aws_sdk_sqs::Client::change_message_visibility_batch)
        .then_error(|| ChangeMessageVisibilityBatchError::unhandled("throttled"));
    let (changed, retried) = settle(&throttled).await;
    assert!(changed.is_empty(), "a failed call confirmed nothing: {changed:?}");
    assert_eq!(retried, ["a", "b"], "both still reported for retry: nothing lost");
}
