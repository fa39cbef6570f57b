//! sqs-backpressure replay of `--records` quarantine records against an SQS emulator:
//! how close `--rate` holds (achieved rate from the audit file's send start
//! times: sends − 1 over first to last start), and the unthrottled rate
//! (records over the first send's start to the last audit line). Each run
//! fills a fresh quarantine queue with records as the consumer writes them
//! and replays them to a fresh work queue; every record must arrive there
//! once (the queue's count) and the quarantine queue must end empty.
//!
//! `bench/run.sh replay` runs it on LocalStack's SQS: moto's receive cost grows
//! with the queue's length (3 s a call with 3,000 messages queued, measured),
//! so 10,000 records on moto would measure moto. A bare receive/send/delete
//! loop in Rust over the same records gives the emulator's single-loop ceiling.
//!
//! usage: bench-replay [--records 10000] [--rates 200,0] [--concurrency 4] [--out FILE] -- SQS_BACKPRESSURE

use aws_sdk_sqs::types::SendMessageBatchRequestEntry;
use e2e_tests::fixtures::{Aws, BoxError, unique};
use futures::{StreamExt, TryStreamExt};
use serde_json::{Value, json};
use sqs_backpressure_bench::args::BenchArgs;
use sqs_backpressure_bench::bare_move;
use tokio::time::Instant;

const USAGE: &str = "bench-replay [--records 10000] [--rates 200,0] [--concurrency 4] [--out FILE] -- SQS_BACKPRESSURE";

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let args = BenchArgs::from_env(USAGE)?;
    let records = args.number("records", 10_000)?;
    let concurrency = args.number("concurrency", 4)?;
    let rates: Vec<f64> = args
        .option("rates")
        .unwrap_or("200,0")
        .split(',')
        .map(|r| r.parse().map_err(|e| format!("--rates {r:?}: {e}")))
        .collect::<Result<_, _>>()?;
    let aws = Aws::from_env().await?;
    let mut rows = Vec::new();
    for rate in rates {
        rows.push(replay(&aws, &args, records, rate, concurrency).await?);
    }
    rows.push(ceiling(&aws, records).await?);
    args.report(&json!({"records": records, "rows": rows}))
}

/// A quarantine queue holding `records` records whose source is a new work queue.
async fn filled(aws: &Aws, records: usize) -> Result<(String, String), BoxError> {
    let quarantine = aws.create_queue(&unique("bench-replay-quarantine")).await?;
    let work = aws.create_queue(&unique("bench-replay-work")).await?;
    let arn = aws.queue_arn(&work).await?;
    let started = Instant::now();
    futures::stream::iter((0..records).collect::<Vec<_>>().chunks(10).map(<[usize]>::to_vec))
        .map(|chunk| {
            let (quarantine, arn) = (quarantine.clone(), arn.clone());
            async move {
                let entries = chunk
                    .iter()
                    .map(|n| {
                        let body = json!({"schemaVersion": "1", "operation": "invoice.create",
                            "tenantId": format!("tenant-{}", n % 7), "idempotencyKey": format!("k-{n}")});
                        let record = json!({"messageId": format!("m-{n}"), "sourceQueueArn": arn,
                            "errorCode": "downstream_rejected", "errorDetail": "HTTP 422",
                            "tenantId": format!("tenant-{}", n % 7), "operation": "invoice.create",
                            "lastSeen": "2026-11-30T12:00:00.000Z", "remediationStatus": "new",
                            "body": body.to_string(), "attributes": {},
                            "messageAttributes": {"source": {"dataType": "String", "stringValue": "billing"}}});
                        SendMessageBatchRequestEntry::builder()
                            .id(format!("e{n}"))
                            .message_body(record.to_string())
                            .build()
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                let sent = aws.sqs.send_message_batch().queue_url(&quarantine).set_entries(Some(entries)).send().await?;
                if !sent.failed().is_empty() {
                    return Err::<(), BoxError>(format!("fill: {:?}", sent.failed()).into());
                }
                Ok(())
            }
        })
        .buffer_unordered(8)
        .try_collect::<Vec<()>>()
        .await?;
    eprintln!("bench-replay: {records} records in {:.1} s", started.elapsed().as_secs_f64());
    Ok((quarantine, work))
}

async fn replay(
    aws: &Aws,
    args: &BenchArgs,
    records: usize,
    rate: f64,
    concurrency: usize,
) -> Result<Value, BoxError> {
    let (quarantine, work) = filled(aws, records).await?;
    let audit = std::env::temp_dir().join(format!("{}.jsonl", unique("bench-replay-audit")));
    let mut command = tokio::process::Command::new(&args.program);
    command.args([
        "replay",
        "--queue-url",
        &quarantine,
        "--yes",
        "--concurrency",
        &concurrency.to_string(),
    ]);
    command.arg("--audit").arg(&audit);
    if rate > 0.0 {
        command.args(["--rate", &rate.to_string()]);
    }
    command.env("RUST_LOG", "warn");
    let started = Instant::now();
    let output = command.output().await?;
    let wall = started.elapsed();
    if !output.status.success() {
        return Err(format!(
            "replay: {:?}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        )
        .into());
    }
    let lines: Vec<Value> = std::fs::read_to_string(&audit)?
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    let _ = std::fs::remove_file(&audit);
    let millis = |line: &Value, field: &str| -> Result<i64, BoxError> {
        let text = line[field].as_str().ok_or("audit line without time")?;
        Ok(text.parse::<jiff::Timestamp>()?.as_millisecond())
    };
    let mut starts = lines.iter().map(|l| millis(l, "started")).collect::<Result<Vec<_>, _>>()?;
    starts.sort_unstable();
    starts.dedup();
    let ends = lines.iter().map(|l| millis(l, "time")).collect::<Result<Vec<_>, _>>()?;
    let first = *starts.first().ok_or("no send")?;
    let last_start = *starts.last().ok_or("no send")?;
    let last_end = ends.into_iter().max().ok_or("no line")?;
    let replayed = lines.iter().filter(|l| l["result"] == "replayed").count();
    let (work_count, _) = aws.counts(&work).await?;
    let (left, in_flight) = aws.counts(&quarantine).await?;
    let send_rate = if last_start > first {
        // Each start is one send of a batch; the messages of all but the last batch span it.
        let last_batch =
            lines.iter().filter(|l| millis(l, "started").ok() == Some(last_start)).count();
        (replayed - last_batch) as f64 / ((last_start - first) as f64 / 1000.0)
    } else {
        f64::NAN
    };
    let overall = replayed as f64 / ((last_end - first) as f64 / 1000.0);
    let row = json!({
        "label": if rate > 0.0 { format!("--rate {rate}") } else { format!("unthrottled, --concurrency {concurrency}") },
        "rate": rate,
        "replayed": replayed,
        "arrived": work_count,
        "left_in_quarantine": left + in_flight,
        "send_rate": send_rate,
        "messages_per_second": overall,
        "deviation_percent": if rate > 0.0 { (send_rate / rate - 1.0) * 100.0 } else { f64::NAN },
        "process_wall_s": wall.as_secs_f64(),
    });
    eprintln!("bench-replay: {row}");
    aws.delete_queue(&quarantine).await?;
    aws.delete_queue(&work).await?;
    Ok(row)
}

/// The emulator's own ceiling for the same work: receive 10, send them, delete them, one loop, no checks.
async fn ceiling(aws: &Aws, records: usize) -> Result<Value, BoxError> {
    let (quarantine, work) = filled(aws, records).await?;
    let started = Instant::now();
    let moved = bare_move(aws, &quarantine, &work).await?;
    let elapsed = started.elapsed();
    let row = json!({
        "label": "emulator ceiling: bare receive/send/delete loop (Rust SDK, one loop, no audit)",
        "replayed": moved,
        "messages_per_second": moved as f64 / elapsed.as_secs_f64(),
    });
    eprintln!("bench-replay: {row}");
    aws.delete_queue(&quarantine).await?;
    aws.delete_queue(&work).await?;
    Ok(row)
}
