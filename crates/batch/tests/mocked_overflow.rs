//! Quarantine records too large for their queue, against `aws-smithy-mocks`:
//! the body goes to S3 and is confirmed before the record naming it is sent,
//! and the queue's `MaximumMessageSize` is read once, before the first write.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use aws_sdk_s3::operation::put_object::{PutObjectError, PutObjectOutput};
use aws_sdk_sqs::operation::get_queue_attributes::{
    GetQueueAttributesError, GetQueueAttributesOutput,
};
use aws_sdk_sqs::operation::send_message_batch::SendMessageBatchOutput;
use aws_sdk_sqs::types::{QueueAttributeName, SendMessageBatchResultEntry};
use aws_smithy_mocks::{Rule, RuleMode, mock, mock_client};
use backpressure_batch::ErrorCode;
use backpressure_batch::Labels;
use backpressure_batch::quarantine::S3Overflow;
use backpressure_batch::quarantine::SqsQuarantine;
use backpressure_batch::quarantine::{
    QuarantineError, QuarantineRecord, QuarantineStore, record_for,
};
use backpressure_batch::record::SqsRecord;
use backpressure_core::queue::QueueRef;
use sha2::Digest;

const QUARANTINE: &str = "https://sqs.us-east-1.amazonaws.com/123456789012/quarantine";

fn record(id: &str, body: &str) -> QuarantineRecord {
    let sqs = SqsRecord::new(id)
        .with_body(body)
        .with_source_arn("arn:aws:sqs:us-east-1:123456789012:orders");
    let (code, labels) = (&ErrorCode::InvalidJson, &Labels::default());
    record_for(&sqs, code, "bad", labels, "test", SystemTime::UNIX_EPOCH)
}

/// Every body `SendMessageBatch` was given, in order, and a rule accepting each entry.
fn sends() -> (Rule, Arc<Mutex<Vec<String>>>) {
    let bodies: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = bodies.clone();
    let rule = mock!(aws_sdk_sqs::Client::send_message_batch).then_compute_output(move |input| {
        let mut output = SendMessageBatchOutput::builder().set_failed(Some(vec![]));
        for entry in input.entries() {
            log.lock().unwrap().push(entry.message_body().to_owned());
            let ok = SendMessageBatchResultEntry::builder()
                .id(entry.id())
                .message_id("sqs-id")
                .md5_of_message_body("x")
                .build()
                .unwrap();
            output = output.successful(ok);
        }
        output.build().unwrap()
    });
    (rule, bodies)
}

/// Each `PutObject`'s key and SHA-256 checksum, in order.
type Puts = Arc<Mutex<Vec<(String, String)>>>;

/// The puts seen, and a rule that accepts them or fails them all.
fn puts(fail: bool) -> (Rule, Puts) {
    let seen: Puts = Arc::default();
    let log = seen.clone();
    let matching = mock!(aws_sdk_s3::Client::put_object).match_requests(move |input| {
        let key = input.key().unwrap_or_default().to_owned();
        log.lock().unwrap().push((key, input.checksum_sha256().unwrap_or_default().to_owned()));
        true
    });
    let rule = if fail {
        matching.then_error(|| PutObjectError::unhandled("AccessDenied"))
    } else {
        matching.then_output(|| PutObjectOutput::builder().build())
    };
    (rule, seen)
}

fn quarantine(sqs: &[&Rule], s3: &Rule, limit: usize) -> SqsQuarantine {
    let sqs = mock_client!(aws_sdk_sqs, RuleMode::MatchAny, sqs);
    let s3 = mock_client!(aws_sdk_s3, RuleMode::MatchAny, [s3]);
    SqsQuarantine::new(sqs, QueueRef::parse(QUARANTINE).unwrap(), limit).overflow(S3Overflow::new(
        s3,
        "bodies",
        "quarantine/",
    ))
}

#[tokio::test]
async fn a_body_too_large_for_the_queue_goes_to_s3_first_and_the_record_names_it() {
    let (send, bodies) = sends();
    let (put, seen) = puts(false);
    let big = "é".repeat(150_000);
    let records = [record("big-1", &big), record("small-1", "x")];
    let results = quarantine(&[&send], &put, 262_144).store(&records).await;
    assert!(results.iter().all(Result::is_ok), "{results:?}");

    let sha256 = sha2::Sha256::digest(big.as_bytes());
    let checksum = aws_smithy_types::base64::encode(sha256);
    assert_eq!(*seen.lock().unwrap(), [("quarantine/orders/big-1".to_owned(), checksum)]);
    let bodies = bodies.lock().unwrap();
    let sent: Vec<serde_json::Value> =
        bodies.iter().map(|b| serde_json::from_str(b).unwrap()).collect();
    let big_record = sent.iter().find(|r| r["messageId"] == "big-1").unwrap();
    assert_eq!(big_record["body"], serde_json::Value::Null);
    assert_eq!(big_record["bodyObject"]["bucket"], "bodies");
    assert_eq!(big_record["bodyObject"]["key"], "quarantine/orders/big-1");
    assert_eq!(big_record["bodyObject"]["bytes"], big.len());
    assert_eq!(
        big_record["bodyObject"]["sha256"],
        sha256.iter().map(|b| format!("{b:02x}")).collect::<String>()
    );
    let small = sent.iter().find(|r| r["messageId"] == "small-1").unwrap();
    assert_eq!(small["body"], "x", "a record that fits keeps its body");
    assert!(small.get("bodyObject").is_none());
}

#[tokio::test]
async fn a_body_s3_does_not_confirm_sends_no_record_and_is_retried() {
    let (send, bodies) = sends();
    let (put, seen) = puts(true);
    let records = [record("big-1", &"x".repeat(300_000)), record("small-1", "x")];
    let results = quarantine(&[&send], &put, 262_144).store(&records).await;
    assert!(
        matches!(&results[0], Err(QuarantineError::Overflow { uri, .. })
            if uri == "s3://bodies/quarantine/orders/big-1"),
        "{results:?}"
    );
    assert!(results[1].is_ok(), "the rest of the batch is quarantined");
    assert_eq!(seen.lock().unwrap().len(), 1);
    let bodies = bodies.lock().unwrap();
    assert_eq!(bodies.len(), 1, "only the small record was sent");
    assert!(!bodies[0].contains("bodyObject"));
}

#[tokio::test]
async fn the_queue_limit_is_read_once_and_a_failed_read_retries_the_write() {
    let reads = Arc::new(Mutex::new(0));
    let (count, fail_first) = (reads.clone(), Arc::new(Mutex::new(true)));
    let failing = fail_first.clone();
    let denied = mock!(aws_sdk_sqs::Client::get_queue_attributes)
        .match_requests(move |_| std::mem::take(&mut *failing.lock().unwrap()))
        .then_error(|| GetQueueAttributesError::unhandled("AccessDenied"));
    let read = mock!(aws_sdk_sqs::Client::get_queue_attributes)
        .match_requests(move |input| {
            *count.lock().unwrap() += 1;
            input.attribute_names() == [QueueAttributeName::MaximumMessageSize]
        })
        .then_output(|| {
            let attributes =
                HashMap::from([(QueueAttributeName::MaximumMessageSize, "1024".to_owned())]);
            GetQueueAttributesOutput::builder().set_attributes(Some(attributes)).build()
        });
    let (send, bodies) = sends();
    let (put, seen) = puts(false);
    let sqs = mock_client!(aws_sdk_sqs, RuleMode::MatchAny, [&denied, &read, &send]);
    let s3 = mock_client!(aws_sdk_s3, RuleMode::MatchAny, [&put]);
    let quarantine = SqsQuarantine::reading_limit(sqs, QueueRef::parse(QUARANTINE).unwrap())
        .overflow(S3Overflow::new(s3, "bodies", ""));
    let records = [record("m-1", &"x".repeat(2_000))];

    let first = quarantine.store(&records).await;
    assert!(matches!(first[0], Err(QuarantineError::Limit(_))), "{first:?}");
    assert!(first[0].as_ref().unwrap_err().to_string().contains("MaximumMessageSize"));
    assert!(bodies.lock().unwrap().is_empty() && seen.lock().unwrap().is_empty(), "nothing sent");

    for _ in 0..2 {
        let results = quarantine.store(&records).await;
        assert!(results[0].is_ok(), "{results:?}");
    }
    assert_eq!(*reads.lock().unwrap(), 1, "read once, then kept");
    assert_eq!(quarantine.max_message_bytes().await.unwrap(), 1024);
    assert_eq!(seen.lock().unwrap().len(), 2, "a 2,000-byte body is over the 1,024-byte queue");
}
