//! What quarantining a record through S3 costs, against a record that fits
//! its queue: the time of one `QuarantineStore::store` call (the body hashed
//! and written with `PutObject`, then the record with `SendMessageBatch`),
//! and the bytes each service is sent, from which the closing note prices
//! the requests. Against moto on loopback the times are this code's own
//! (hashing, encoding, two calls one after the other), not S3's latency.
//!
//! usage: `bench-overflow [--runs 20] [--out FILE]` (inside `scripts/emulators.sh run`)

use std::time::{Instant, SystemTime};

use aws_sdk_sqs::types::QueueAttributeName;
use backpressure_batch::ErrorCode;
use backpressure_batch::Labels;
use backpressure_batch::quarantine::SqsQuarantine;
use backpressure_batch::quarantine::{QuarantineRecord, QuarantineStore, record_for};
use backpressure_batch::record::SqsRecord;
use backpressure_batch::{quarantine::QueueRef, quarantine::S3Overflow};
use e2e_tests::fixtures::{Aws, BoxError, unique};
use serde_json::json;
use sqs_backpressure_bench::args::{BenchArgs, summary};

const USAGE: &str = "bench-overflow [--runs 20] [--out FILE]";

fn record(id: &str, body: &str, arn: &str) -> Result<QuarantineRecord, BoxError> {
    let record: SqsRecord = serde_json::from_value(json!({
        "messageId": id, "body": body, "attributes": {}, "messageAttributes": {},
        "eventSourceARN": arn
    }))?;
    let (code, detail) = (&ErrorCode::InvalidJson, "the body is not JSON");
    let labels = Labels::default();
    Ok(record_for(&record, code, detail, &labels, "bench-overflow", SystemTime::now()))
}

async fn queue(aws: &Aws, max: u32) -> Result<QueueRef, BoxError> {
    let output = aws
        .sqs
        .create_queue()
        .queue_name(unique("overflow-bench"))
        .attributes(QueueAttributeName::MaximumMessageSize, max.to_string())
        .send()
        .await?;
    Ok(QueueRef::parse(output.queue_url().ok_or("no queue URL")?)?)
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let args = BenchArgs::from_env(USAGE)?;
    let runs = args.number("runs", 20)?;
    let aws = Aws::from_env().await?;
    let bucket = unique("overflow-bench").to_lowercase();
    aws.create_bucket(&bucket).await?;
    let arn = "arn:aws:sqs:us-east-1:123456789012:orders";
    let cases = [
        ("200 KB body, fits a 1 MiB queue", 200_000, 1_048_576, false),
        ("300 KB body, 256 KiB queue, body to S3", 300_000, 262_144, true),
        ("1 MiB body, 1 MiB queue, body to S3", 1_048_576, 1_048_576, true),
    ];
    let mut report = Vec::new();
    for (name, bytes, max, overflow) in cases {
        let mut quarantine = SqsQuarantine::reading_limit(aws.sqs.clone(), queue(&aws, max).await?);
        if overflow {
            quarantine = quarantine.overflow(S3Overflow::new(aws.s3.clone(), &bucket, ""));
        }
        let body = "x".repeat(bytes);
        let (mut ms, mut record_bytes) = (Vec::new(), 0);
        for run in 0..runs {
            let record = record(&format!("m-{run}"), &body, arn)?;
            let started = Instant::now();
            let results = quarantine.store(std::slice::from_ref(&record)).await;
            ms.push(started.elapsed().as_secs_f64() * 1e3);
            if let Some(Err(error)) = results.into_iter().next() {
                return Err(format!("{name}: {error}").into());
            }
            let sent = if overflow {
                let object = S3Overflow::new(aws.s3.clone(), &bucket, "").object_for(&record);
                QuarantineRecord { body: None, body_object: Some(object), ..record.clone() }
            } else {
                record.clone()
            };
            record_bytes = sent.to_sqs_json()?.len();
        }
        report.push(json!({
            "case": name,
            "body_bytes": bytes,
            "sqs_record_bytes": record_bytes,
            "s3_object_bytes": if overflow { bytes } else { 0 },
            "store_ms": summary(&ms),
        }));
    }
    args.report(&json!({ "runs": runs, "cases": report }))
}
