//! Payloads an Extended Client offloaded to S3, against `aws-smithy-mocks`:
//! read before decoding; a missing, oversized or binary object quarantined
//! naming its bucket and key; a denied, throttled or failing read retried;
//! the object deleted only when asked and only once its message was processed.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use std::sync::{Arc, Mutex};
use std::time::Duration;

use aws_sdk_s3::error::ErrorMetadata;
use aws_sdk_s3::operation::delete_object::DeleteObjectOutput;
use aws_sdk_s3::operation::get_object::{GetObjectError, GetObjectOutput};
use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_s3::types::error::NoSuchKey;
use aws_smithy_mocks::{MockResponse, Rule, RuleMode, mock, mock_client};
use backpressure_batch::{
    BatchProcessor, ErrorCode, JsonBody, Message, Verdict, envelope::OffloadedPayloads,
    record::SqsRecord, report::Outcome, report::RetryCause,
};
use tokio::time::Instant;

#[derive(Debug, Clone, serde::Deserialize)]
struct Order {
    order: String,
}
impl JsonBody for Order {}

fn pointer(id: &str, key: &str) -> SqsRecord {
    let body = format!(
        r#"["software.amazon.payloadoffloading.PayloadS3Pointer",{{"s3BucketName":"big","s3Key":"{key}"}}]"#
    );
    SqsRecord::new(id).with_body(body).with_attribute("ExtendedPayloadSize", "300000")
}

fn error(code: &str) -> GetObjectError {
    GetObjectError::generic(ErrorMetadata::builder().code(code).message("from the mock").build())
}

/// Answers each key as the test names it.
fn objects() -> Rule {
    mock!(aws_sdk_s3::Client::get_object).then_compute_response(|input| {
        let text = |body: &'static str| {
            MockResponse::Output(
                GetObjectOutput::builder()
                    .content_length(body.len() as i64)
                    .body(ByteStream::from_static(body.as_bytes()))
                    .build(),
            )
        };
        match input.key().unwrap_or_default() {
            "order" => text(r#"{"order":"o-1"}"#),
            "not-json" => text("<xml/>"),
            "huge" => MockResponse::Output(
                GetObjectOutput::builder()
                    .content_length(10_000)
                    .body(ByteStream::from_static(&[b' '; 10_000]))
                    .build(),
            ),
            "binary" => MockResponse::Output(
                GetObjectOutput::builder().body(ByteStream::from_static(&[0xff, 0xfe])).build(),
            ),
            "gone" => MockResponse::Error(GetObjectError::NoSuchKey(
                NoSuchKey::builder()
                    .meta(ErrorMetadata::builder().code("NoSuchKey").build())
                    .build(),
            )),
            "no-bucket" => MockResponse::Error(error("NoSuchBucket")),
            "denied" => MockResponse::Error(error("AccessDenied")),
            "throttled" => MockResponse::Error(error("SlowDown")),
            _ => MockResponse::Error(error("InternalError")),
        }
    })
}

/// The keys `DeleteObject` was called with.
fn deletes() -> (Rule, Arc<Mutex<Vec<String>>>) {
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = seen.clone();
    let rule = mock!(aws_sdk_s3::Client::delete_object)
        .match_requests(move |input| {
            log.lock().unwrap().push(input.key().unwrap_or_default().to_owned());
            true
        })
        .then_output(|| DeleteObjectOutput::builder().build());
    (rule, seen)
}

async fn run(keys: &[&str], delete: bool) -> (Vec<Outcome>, Vec<String>, Vec<String>) {
    let (get, delete_rule) = (objects(), deletes());
    // The SDK's own retries are its business; one answer per key is this test's.
    let s3 = mock_client!(aws_sdk_s3, RuleMode::MatchAny, &[&get, &delete_rule.0], |config| {
        config.retry_config(aws_sdk_s3::config::retry::RetryConfig::disabled())
    });
    let mut payloads = OffloadedPayloads::new(s3).max_bytes(1_000);
    if delete {
        payloads = payloads.delete_when_processed();
    }
    let processed: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = processed.clone();
    let processor = move |message: &Message<'_, Order>| {
        log.lock().unwrap().push(message.decoded.order.clone());
        assert!(message.body.contains("PayloadS3Pointer"), "the body stays the pointer");
        std::future::ready(Verdict::Done)
    };
    let batch = BatchProcessor::builder(processor).offloaded_payloads(payloads).build().unwrap();
    let records: Vec<SqsRecord> =
        keys.iter().enumerate().map(|(i, key)| pointer(&format!("m{i}"), key)).collect();
    let report = batch.process(&records, Instant::now() + Duration::from_secs(30)).await.unwrap();
    let outcomes = report.outcomes.iter().map(|o| o.outcome.clone()).collect();
    let deleted = delete_rule.1.lock().unwrap().clone();
    let processed = processed.lock().unwrap().clone();
    (outcomes, processed, deleted)
}

fn code_and_detail(outcome: &Outcome) -> (ErrorCode, String) {
    match outcome {
        // No quarantine store here: a permanent failure is returned for the redrive policy.
        Outcome::QuarantineFailed { code, detail } => (code.clone(), detail.clone()),
        other => panic!("not a permanent failure: {other:?}"),
    }
}

#[tokio::test]
async fn an_offloaded_payload_is_read_and_processed_as_the_message() {
    let (outcomes, processed, deleted) = run(&["order"], false).await;
    assert_eq!(outcomes, [Outcome::Done]);
    assert_eq!(processed, ["o-1"]);
    assert!(deleted.is_empty(), "kept unless asked");
}

#[tokio::test]
async fn what_can_never_be_read_is_a_permanent_failure_naming_bucket_and_key() {
    let (outcomes, processed, _) =
        run(&["gone", "no-bucket", "huge", "binary", "not-json"], false).await;
    assert!(processed.is_empty());
    let found: Vec<_> = outcomes.iter().map(code_and_detail).collect();
    assert_eq!(found[0].0, ErrorCode::OffloadedPayloadMissing);
    assert!(found[0].1.starts_with("s3://big/gone could not be read: NoSuchKey"), "{}", found[0].1);
    assert_eq!(found[1].0, ErrorCode::OffloadedPayloadMissing);
    assert_eq!(found[2].0, ErrorCode::OffloadedPayloadTooLarge);
    let huge = "s3://big/huge is 10000 bytes, above the 1000 this consumer reads";
    assert!(found[2].1.starts_with(huge), "{}", found[2].1);
    assert_eq!(found[3].0, ErrorCode::OffloadedPayloadNotText);
    assert_eq!(found[4].0, ErrorCode::InvalidJson, "the payload's own code once it was read");
}

#[tokio::test]
async fn what_may_pass_is_retried_and_never_acknowledged() {
    let (outcomes, processed, _) = run(&["denied", "throttled", "failing"], true).await;
    assert!(processed.is_empty());
    for outcome in &outcomes {
        let Outcome::Retry { cause, detail, .. } = outcome else { panic!("{outcome:?}") };
        assert_eq!(*cause, RetryCause::OffloadedPayload);
        assert!(detail.starts_with("s3://big/"), "{detail}");
    }
}

#[tokio::test]
async fn the_object_is_deleted_when_asked_and_only_after_processing() {
    let (outcomes, _, deleted) = run(&["order", "not-json", "denied"], true).await;
    assert_eq!(outcomes[0], Outcome::Done);
    assert_eq!(deleted, ["order"], "a quarantined or retried message keeps its object");
}
