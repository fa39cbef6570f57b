//! The sample events must stay shaped exactly as Lambda delivers SQS events,
//! which `aws_lambda_events` models, and our response as Lambda reads it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use aws_lambda_events::sqs::{SqsBatchResponse, SqsEvent as AwsSqsEvent};
use std::time::Duration;

use backpressure_batch::quarantine::{QuarantineError, QuarantineRecord, QuarantineStore};
use backpressure_batch::record::SqsEvent;
use backpressure_batch::{BatchProcessor, Message, Processor, Verdict, record::SqsRecord};
use md5::{Digest, Md5};
use tokio::time::Instant;

/// A body of the shape the records below carry.
#[derive(serde::Deserialize)]
struct Work {
    #[allow(dead_code)] // decoded, never read
    operation: String,
}

impl backpressure_batch::JsonBody for Work {}

#[test]
fn sample_events_are_sqs_events() {
    for (text, fifo) in [
        (include_str!("../../../events/sqs-standard.json"), false),
        (include_str!("../../../events/sqs-fifo.json"), true),
    ] {
        let aws: AwsSqsEvent = serde_json::from_str(text).unwrap();
        let ours: SqsEvent = serde_json::from_str(text).unwrap();
        assert_eq!(aws.records.len(), ours.records.len());
        for (theirs, mine) in aws.records.iter().zip(&ours.records) {
            assert_eq!(theirs.message_id, mine.message_id);
            assert_eq!(theirs.body, mine.body);
            assert_eq!(theirs.event_source.as_deref(), Some("aws:sqs"));
            let md5 = format!("{:032x}", md5_of(theirs.body.as_deref().unwrap()));
            assert_eq!(
                theirs.md5_of_body.as_deref(),
                Some(md5.as_str()),
                "md5OfBody matches the body"
            );
            assert_eq!(mine.message_group_id().is_some(), fifo);
        }
    }
}

/// Retries every message, so the response lists them all.
struct RetryAll;

impl Processor<Work> for RetryAll {
    async fn process(&self, _: &Message<'_, Work>) -> Verdict {
        Verdict::retry("retry everything")
    }
}

/// Nothing here is quarantined; a store is still required.
struct Unused;

impl QuarantineStore for Unused {
    async fn store(&self, records: &[QuarantineRecord]) -> Vec<Result<(), QuarantineError>> {
        records.iter().map(|_| Err(QuarantineError::Unreported)).collect()
    }
}

fn work(id: &str) -> SqsRecord {
    SqsRecord::new(id)
        .with_body(r#"{"schemaVersion":"1","operation":"o","tenantId":"t","idempotencyKey":"k"}"#)
        .with_source_arn("arn:aws:sqs:us-east-1:123456789012:work")
}

#[tokio::test]
async fn our_response_is_what_lambda_reads() {
    let batch = BatchProcessor::builder(RetryAll).quarantine(Unused).build().unwrap();
    let records = [work("a"), work("b")];
    let report = batch.process(&records, Instant::now() + Duration::from_secs(10)).await.unwrap();
    let response = report.response();
    let text = serde_json::to_string(&response).unwrap();
    let parsed: SqsBatchResponse = serde_json::from_str(&text).unwrap();
    let ids: Vec<_> =
        parsed.batch_item_failures.iter().map(|f| f.item_identifier.as_str()).collect();
    assert_eq!(ids, ["a", "b"]);
    assert_eq!(text, r#"{"batchItemFailures":[{"itemIdentifier":"a"},{"itemIdentifier":"b"}]}"#);
}

/// MD5 (RFC 1321), to check the sample files' md5OfBody.
fn md5_of(input: &str) -> u128 {
    u128::from_be_bytes(Md5::digest(input.as_bytes()).into())
}
