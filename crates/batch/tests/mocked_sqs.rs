//! The SQS adapters against `aws-smithy-mocks`: what the quarantine store
//! reports for entries SQS accepted, refused, or never saw.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use aws_sdk_sqs::operation::send_message_batch::{
    SendMessageBatchError, SendMessageBatchInput, SendMessageBatchOutput,
};
use aws_sdk_sqs::types::{BatchResultErrorEntry, SendMessageBatchResultEntry};
use aws_smithy_mocks::{Rule, RuleMode, mock, mock_client};
use backpressure_batch::ErrorCode;
use backpressure_batch::Labels;
use backpressure_batch::quarantine::SqsQuarantine;
use backpressure_batch::quarantine::{QuarantineError, QuarantineStore};
use backpressure_batch::quarantine::{QuarantineRecord, record_for};
use backpressure_batch::record::SqsRecord;
use backpressure_core::queue::QueueRef;

const QUARANTINE: &str = "https://sqs.us-east-1.amazonaws.com/123456789012/quarantine";

fn record(id: usize, body: &str) -> QuarantineRecord {
    let sqs = SqsRecord::new(format!("m{id}"))
        .with_body(body)
        .with_source_arn("arn:aws:sqs:us-east-1:123456789012:work");
    let labels = Labels::default().tenant_id(Some("t-1".into()));
    record_for(&sqs, &ErrorCode::InvalidJson, "bad", &labels, "test", SystemTime::UNIX_EPOCH)
}

type Calls = Arc<Mutex<Vec<SendMessageBatchInput>>>;

/// Accepts every entry except the ids in `refuse`.
fn send_rule(refuse: &'static [&'static str]) -> (Rule, Calls) {
    let calls: Calls = Arc::default();
    let log = calls.clone();
    let rule = mock!(aws_sdk_sqs::Client::send_message_batch).then_compute_output(move |input| {
        log.lock().unwrap().push(input.clone());
        let mut output =
            SendMessageBatchOutput::builder().set_successful(Some(vec![])).set_failed(Some(vec![]));
        for entry in input.entries() {
            if refuse.contains(&entry.id()) {
                output = output.failed(
                    BatchResultErrorEntry::builder()
                        .id(entry.id())
                        .code("InternalError")
                        .sender_fault(false)
                        .build()
                        .unwrap(),
                );
            } else {
                output = output.successful(
                    SendMessageBatchResultEntry::builder()
                        .id(entry.id())
                        .message_id("sqs-id")
                        .md5_of_message_body("x")
                        .build()
                        .unwrap(),
                );
            }
        }
        output.build().unwrap()
    });
    (rule, calls)
}

fn store(rule: &Rule, queue: &str, max_bytes: usize) -> SqsQuarantine {
    let client = mock_client!(aws_sdk_sqs, RuleMode::MatchAny, [rule]);
    SqsQuarantine::new(client, QueueRef::parse(queue).unwrap(), max_bytes)
}

#[tokio::test]
async fn twenty_five_records_go_in_three_calls_each_with_filter_attributes() {
    let (rule, calls) = send_rule(&[]);
    let records: Vec<_> = (0..25).map(|i| record(i, "not json")).collect();
    let results = store(&rule, QUARANTINE, 262_144).store(&records).await;
    assert!(results.iter().all(Result::is_ok));
    let calls = calls.lock().unwrap();
    let mut sizes: Vec<usize> = calls.iter().map(|c| c.entries().len()).collect();
    sizes.sort_unstable();
    assert_eq!(sizes, [5, 10, 10]);
    let entry = &calls[0].entries()[0];
    let attributes = entry.message_attributes().unwrap();
    assert_eq!(attributes["errorCode"].string_value(), Some("invalid_json"));
    assert_eq!(attributes["tenantId"].string_value(), Some("t-1"));
    let body: serde_json::Value = serde_json::from_str(entry.message_body()).unwrap();
    assert_eq!(body["remediationStatus"], "new");
    assert_eq!(entry.message_group_id(), None, "a standard quarantine queue takes no group");
}

#[tokio::test]
async fn an_entry_sqs_refuses_is_not_confirmed() {
    let (rule, _) = send_rule(&["q1"]);
    let records: Vec<_> = (0..3).map(|i| record(i, "x")).collect();
    let results = store(&rule, QUARANTINE, 262_144).store(&records).await;
    assert!(results[0].is_ok() && results[2].is_ok());
    assert!(
        matches!(&results[1], Err(QuarantineError::Rejected { code, .. }) if code == "InternalError")
    );
}

#[tokio::test]
async fn a_failed_call_fails_every_entry_in_it() {
    let rule = mock!(aws_sdk_sqs::Client::send_message_batch)
        .then_error(|| SendMessageBatchError::unhandled("AWS.SimpleQueueService.NonExistentQueue"));
    let records: Vec<_> = (0..2).map(|i| record(i, "x")).collect();
    let results = store(&rule, QUARANTINE, 262_144).store(&records).await;
    assert!(results.iter().all(|r| matches!(r, Err(QuarantineError::Call(_)))), "{results:?}");
}

#[tokio::test]
async fn a_record_too_large_for_the_queue_is_not_sent() {
    let (rule, calls) = send_rule(&[]);
    let records = vec![record(0, &"x".repeat(300_000)), record(1, "small")];
    let results = store(&rule, QUARANTINE, 262_144).store(&records).await;
    assert!(
        matches!(results[0], Err(QuarantineError::TooLarge { limit: 262_144, .. })),
        "{results:?}"
    );
    assert!(results[1].is_ok());
    assert_eq!(calls.lock().unwrap().iter().map(|c| c.entries().len()).sum::<usize>(), 1);
}

#[tokio::test]
async fn a_fifo_quarantine_queue_gets_a_group_and_a_deduplication_id() {
    let (rule, calls) = send_rule(&[]);
    let results = store(&rule, "https://sqs.us-east-1.amazonaws.com/1/quarantine.fifo", 262_144)
        .store(&[record(7, "x")])
        .await;
    assert!(results[0].is_ok());
    let entry = calls.lock().unwrap()[0].entries()[0].clone();
    assert_eq!(entry.message_deduplication_id(), Some("m7"));
    assert_eq!(entry.message_group_id(), Some("invalid_json"));
}
