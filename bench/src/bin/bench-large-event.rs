//! batch-consumer on the largest event Lambda sends it: a batch filling the
//! 6 MB synchronous invocation payload with messages near SQS's 1 MiB limit.
//! Each run is a fresh function process; it reports the event's size, the
//! records processed, the invocation's duration and the process's peak RSS
//! (`VmHWM`), to compare with the function's memory size.
//!
//! Runs inside `scripts/emulators.sh run` (the quarantine queue is moto's),
//! with the release build of batch-consumer.
//!
//! usage: `bench-large-event [--runs 3] [--out FILE] -- BATCH_CONSUMER`

use std::time::Duration;

use e2e_tests::downstream::Downstream;
use e2e_tests::fixtures::{Aws, BoxError, sqs_record, unique};
use e2e_tests::runtime_host::{LambdaHost, Outcome};
use serde_json::{Value, json};
use sqs_backpressure_bench::args::{BenchArgs, summary};

const USAGE: &str = "bench-large-event [--runs 3] [--out FILE] -- BATCH_CONSUMER";
/// Lambda's payload limit for a synchronous invocation.
const PAYLOAD_LIMIT: usize = 6 * 1024 * 1024;
/// Each body: a work request padded to just under 1 MiB.
const BODY_BYTES: usize = 1_000_000;

fn event(arn: &str) -> Value {
    let mut records = Vec::new();
    let mut size = 0;
    for i in 0.. {
        let padding = "x".repeat(BODY_BYTES - 120);
        let body = json!({"schemaVersion": "1", "operation": "ledger.post", "tenantId": "t",
                          "idempotencyKey": format!("large-{i}"), "padding": padding})
        .to_string();
        let record = sqs_record(&format!("m-{i}"), json!(body), arn);
        let grown = size + record.to_string().len() + 1;
        if grown + 64 > PAYLOAD_LIMIT {
            break;
        }
        size = grown;
        records.push(record);
    }
    json!({"Records": records})
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let args = BenchArgs::from_env(USAGE)?;
    let runs = args.number("runs", 3)?;
    if args.program.as_os_str().is_empty() {
        return Err(USAGE.into());
    }
    let program = args.program.clone();
    let aws = Aws::from_env().await?;
    let quarantine = aws.create_queue(&unique("large-quarantine")).await?;
    let source = aws.create_queue(&unique("large-work")).await?;
    let arn = aws.queue_arn(&source).await?;
    let downstream = Downstream::start().await?;
    let event = event(&arn);
    let event_bytes = event.to_string().len();
    let records = event["Records"].as_array().map_or(0, Vec::len);
    let url = downstream.url();
    let env = [
        ("DOWNSTREAM_URL", url.as_str()),
        ("QUARANTINE_QUEUE_URL", quarantine.as_str()),
        ("AWS_LAMBDA_LOG_FORMAT", "JSON"),
    ];
    let (mut peak_mib, mut duration_ms) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let host = LambdaHost::start(&program, &env).await?;
        let body = hyper::body::Bytes::from(event.to_string());
        let (outcome, took) = host.invoke_timed(body, Duration::from_secs(60)).await;
        let Outcome::Response(response) = &outcome else {
            return Err(format!("no batch response: {outcome:?}; logs {:?}", host.logs()).into());
        };
        let failures = response["batchItemFailures"].as_array().map_or(0, Vec::len);
        if failures > 0 {
            return Err(format!("{failures} of {records} records failed: {:?}", host.logs()).into());
        }
        let peak = host.peak_rss_kib().ok_or("no peak RSS")?;
        peak_mib.push(peak as f64 / 1024.0);
        duration_ms.push(took.ok_or("no duration")?.as_secs_f64() * 1e3);
    }
    args.report(&json!({
        "event_bytes": event_bytes,
        "records": records,
        "body_bytes": BODY_BYTES,
        "delivered": downstream.received().len(),
        "peak_rss_mib": summary(&peak_mib),
        "invocation_ms": summary(&duration_ms),
    }))
}
