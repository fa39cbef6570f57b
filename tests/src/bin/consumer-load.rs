//! The consumer on a 5,000-message standard batch of about 6 MB (Lambda's
//! payload limit), delivering to a local downstream: wall time of the
//! invocation and the function's peak memory, over several runs.
//!
//! usage: consumer-load BINARY [RUNS] [NAME=VALUE ...]

use std::time::{Duration, Instant};

use e2e_tests::cli::MeasureArgs;
use e2e_tests::downstream::Downstream;
use e2e_tests::fixtures::BoxError;
use e2e_tests::runtime_host::{LambdaHost, Outcome};
use serde_json::{Value, json};

const MESSAGES: usize = 5_000;
/// Lambda's synchronous invocation payload limit, 6 MB.
const PAYLOAD_LIMIT: usize = 6_291_456;

fn batch() -> Value {
    let filler = "x".repeat(500);
    let records: Vec<Value> = (0..MESSAGES)
        .map(|i| {
            let body = json!({
                "schemaVersion": "1", "operation": "invoice.create", "tenantId": format!("tenant-{}", i % 50),
                "idempotencyKey": format!("load-{i}"), "note": filler,
            })
            .to_string();
            json!({
                "messageId": format!("00000000-0000-4000-8000-{i:012}"),
                "receiptHandle": format!("AQEB{i:0>120}"),
                "body": body,
                "attributes": {"ApproximateReceiveCount": "1", "SentTimestamp": "1764500000000",
                               "SenderId": "AROAIWPX5BD2BHG722MW4:sender", "ApproximateFirstReceiveTimestamp": "1764500000042"},
                "messageAttributes": {},
                "md5OfBody": "00000000000000000000000000000000",
                "eventSource": "aws:sqs",
                "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:load-work",
                "awsRegion": "us-east-1"
            })
        })
        .collect();
    json!({ "Records": records })
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let args = MeasureArgs::from_env("consumer-load BINARY [RUNS] [NAME=VALUE ...]", 3)?;
    let event = batch();
    let size = event.to_string().len();
    if size > PAYLOAD_LIMIT {
        return Err(format!("the batch is {size} bytes, above Lambda's {PAYLOAD_LIMIT}").into());
    }
    println!("batch: {MESSAGES} messages, {size} bytes");
    for run in 1..=args.runs {
        let downstream = Downstream::start().await?;
        let url = downstream.url();
        let mut env = vec![
            ("DOWNSTREAM_URL", url.as_str()),
            (
                "QUARANTINE_QUEUE_URL",
                "https://sqs.us-east-1.amazonaws.com/123456789012/load-quarantine",
            ),
            ("RETRY_BASE_SECONDS", "0"),
            ("AWS_LAMBDA_LOG_LEVEL", "error"),
        ];
        env.extend(args.env_pairs());
        let host = LambdaHost::start(&args.binary, &env).await?;
        host.wait_until_ready(Duration::from_secs(10)).await.ok_or("the consumer never polled")?;
        let started = Instant::now();
        let outcome = host.invoke(&event, Duration::from_secs(300)).await;
        let elapsed = started.elapsed();
        let failures = match &outcome {
            Outcome::Response(body) => body["batchItemFailures"].as_array().map_or(0, Vec::len),
            other => return Err(format!("the consumer failed: {other:?}").into()),
        };
        let delivered = downstream.received().len();
        println!(
            "run {run}: {:.0} ms, {:.0} messages/s, peak RSS {} KiB, delivered {delivered}, batchItemFailures {failures}",
            elapsed.as_secs_f64() * 1e3,
            MESSAGES as f64 / elapsed.as_secs_f64(),
            host.peak_rss_kib().unwrap_or_default(),
        );
    }
    Ok(())
}
