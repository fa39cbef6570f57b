//! sqs-backpressure on a dead-letter queue the size an incident leaves: a
//! standard queue of `--messages` raw messages of ~1 KB, read whole by
//! `stats --json` (it must read all and exit 0), written out by `export` (each
//! message exactly once), and moved by `replay --to` to another queue (each
//! exactly once, the source empty afterwards). For each: wall time, messages
//! per second and peak RSS (`VmHWM`, read every 50 ms). Beside them, the
//! emulator's own ceiling for the replay's work: `--concurrency` bare
//! receive/send/delete loops on the same backlog, with no checks and no audit,
//! and for the reads bare receive loops (one, and three at once as the CLI
//! keeps three receives under way) holding every message.
//!
//! `bench/run.sh scale` runs it on fauxqs, started with SQS-sized receipt
//! handles (`FAUXQS_RECEIPT_HANDLE_CHARS`), so what is held per message is
//! measured at its real size.
//!
//! With `--emulator-pid`, each row also has the CPU seconds the CLI and the
//! emulator used during it: which of the two limited the rate.
//!
//! usage: bench-scale [--messages 100000] [--concurrency 4] [--emulator-pid PID]
//!        [--parts stats,export,replay,ceilings] [--out FILE] -- SQS_BACKPRESSURE

use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

use aws_sdk_sqs::types::{
    ChangeMessageVisibilityBatchRequestEntry, MessageSystemAttributeName,
    SendMessageBatchRequestEntry,
};
use e2e_tests::fixtures::{Aws, BoxError, unique};
use futures::{StreamExt, TryStreamExt};
use serde_json::{Value, json};
use sqs_backpressure_bench::args::BenchArgs;
use sqs_backpressure_bench::bare_move;
use sqs_backpressure_bench::proc_stats::{peak_rss_kib, process_cpu_seconds};
use tokio::time::Instant;

const USAGE: &str = "bench-scale [--messages 100000] [--concurrency 4] [--emulator-pid PID] \
                     [--parts stats,export,replay,ceilings] [--out FILE] -- SQS_BACKPRESSURE";

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let args = BenchArgs::from_env(USAGE)?;
    let messages = args.number("messages", 100_000)?;
    let concurrency = args.number("concurrency", 4)?;
    let aws = Aws::from_env().await?;
    let dlq = filled(&aws, messages).await?;
    let handle_chars = handle_length(&aws, &dlq).await?;
    let mut rows = Vec::new();
    let parts = args.option("parts").unwrap_or("stats,export,replay,ceilings");
    let part = |name: &str| parts.split(',').any(|p| p == name);

    if part("stats") {
        let (stats, stats_row) =
            run(&args, "stats --json", &["stats", "--queue-url", &dlq, "--json"]).await?;
        let stats: Value = serde_json::from_slice(&stats.stdout)?;
        rows.push(with(stats_row, json!({"read": stats["read"], "complete": stats["complete"]})));
    }
    if part("export") {
        let file = std::env::temp_dir().join(format!("{}.jsonl", unique("bench-scale-export")));
        let out = file.display().to_string();
        let (_, export_row) =
            run(&args, "export", &["export", "--queue-url", &dlq, "--out", &out]).await?;
        let (lines, distinct) = exported(&file)?;
        let _ = std::fs::remove_file(&file);
        rows.push(with(export_row, json!({"lines": lines, "distinct_messages": distinct})));
    }

    if part("replay") {
        let destination = aws.create_queue(&unique("bench-scale-destination")).await?;
        rows.push(replay(&args, &aws, &dlq, &destination, concurrency).await?);
        aws.delete_queue(&destination).await?;
    }
    aws.delete_queue(&dlq).await?;
    if part("ceilings") {
        rows.push(move_ceiling(&args, &aws, messages, concurrency).await?);
        // The CLI keeps three receives under way; the ceiling is the better of one loop and three.
        for loops in [1, 3] {
            rows.push(read_ceiling(&args, &aws, messages, loops).await?);
        }
    }
    args.report(&json!({"messages": messages, "receipt_handle_chars": handle_chars, "rows": rows}))
}

/// The CLI's unthrottled replay of `dlq` to `destination`, checked against its audit trail.
async fn replay(
    args: &BenchArgs,
    aws: &Aws,
    dlq: &str,
    destination: &str,
    concurrency: usize,
) -> Result<Value, BoxError> {
    let audit = std::env::temp_dir().join(format!("{}.jsonl", unique("bench-scale-audit")));
    let audit_path = audit.display().to_string();
    let replay_args = [
        "replay",
        "--queue-url",
        dlq,
        "--to",
        destination,
        "--yes",
        "--concurrency",
        &concurrency.to_string(),
        "--audit",
        &audit_path,
    ];
    let (_, replay_row) = run(args, "replay --to (unthrottled)", &replay_args).await?;
    let replayed = replayed_ids(&audit)?;
    let _ = std::fs::remove_file(&audit);
    let arrived = aws.counts(destination).await?;
    let left = aws.counts(dlq).await?;
    Ok(with(
        replay_row,
        json!({"replayed": replayed.0, "distinct_replayed": replayed.1,
               "arrived": arrived.0 + arrived.1, "left_on_source": left.0 + left.1}),
    ))
}

/// The emulator's ceiling for the same work, on the same backlog.
async fn move_ceiling(
    args: &BenchArgs,
    aws: &Aws,
    messages: usize,
    concurrency: usize,
) -> Result<Value, BoxError> {
    let again = filled(aws, messages).await?;
    let target = aws.create_queue(&unique("bench-scale-ceiling")).await?;
    let emulator = Emulator::before(args).await?;
    let started = Instant::now();
    let moved: usize = futures::stream::iter(0..concurrency)
        .map(|_| bare_move(aws, &again, &target))
        .buffer_unordered(concurrency)
        .try_collect::<Vec<usize>>()
        .await?
        .into_iter()
        .sum();
    let seconds = started.elapsed().as_secs_f64();
    let row = json!({"label": format!("emulator ceiling: {concurrency} bare receive/send/delete loops"),
        "messages": moved, "seconds": seconds, "messages_per_second": moved as f64 / seconds,
        "emulator_cpu_s": emulator.used()?});
    eprintln!("bench-scale: {row}");
    aws.delete_queue(&again).await?;
    aws.delete_queue(&target).await?;

    Ok(row)
}

/// The emulator's ceiling for a read: `loops` bare receive loops at once (the
/// CLI keeps 3 receives under way), each asking for what the CLI asks for
/// (every attribute, a lease longer than the read), until each gets an empty
/// answer; then every message released as the CLI releases them (visibility 0,
/// ten a call, 8 calls at once), since SQS has no read that leaves a message
/// where it was. No checks, no store, nothing written.
async fn read_ceiling(
    args: &BenchArgs,
    aws: &Aws,
    messages: usize,
    loops: usize,
) -> Result<Value, BoxError> {
    let held = filled(aws, messages).await?;
    let emulator = Emulator::before(args).await?;
    let started = Instant::now();
    let handles: Vec<String> = futures::stream::iter(0..loops)
        .map(|_| bare_read(aws, &held))
        .buffer_unordered(loops)
        .try_collect::<Vec<Vec<String>>>()
        .await?
        .concat();
    let read_seconds = started.elapsed().as_secs_f64();
    futures::stream::iter(handles.chunks(10))
        .map(|chunk| {
            let entries = chunk.iter().enumerate().map(|(i, handle)| {
                ChangeMessageVisibilityBatchRequestEntry::builder()
                    .id(i.to_string())
                    .receipt_handle(handle)
                    .visibility_timeout(0)
                    .build()
            });
            let entries = entries.collect::<Result<Vec<_>, _>>();
            async {
                let call = aws.sqs.change_message_visibility_batch().queue_url(&held);
                call.set_entries(Some(entries?)).send().await?;
                Ok::<(), BoxError>(())
            }
        })
        .buffer_unordered(8)
        .try_collect::<Vec<()>>()
        .await?;
    let seconds = started.elapsed().as_secs_f64();
    let read = handles.len();
    let row = json!({"label": format!("emulator ceiling: {loops} bare receive loop(s), then release"),
        "loops": loops, "messages": read, "seconds": seconds, "messages_per_second": read as f64 / seconds,
        "read_seconds": read_seconds, "emulator_cpu_s": emulator.used()?});
    eprintln!("bench-scale: {row}");
    aws.delete_queue(&held).await?;
    Ok(row)
}

/// Receives until an empty answer; the receipt handles.
async fn bare_read(aws: &Aws, queue: &str) -> Result<Vec<String>, BoxError> {
    let mut handles = Vec::new();
    loop {
        let received = aws
            .sqs
            .receive_message()
            .queue_url(queue)
            .max_number_of_messages(10)
            .visibility_timeout(3600)
            .wait_time_seconds(1)
            .message_system_attribute_names(MessageSystemAttributeName::All)
            .message_attribute_names("All")
            .send()
            .await?;
        if received.messages().is_empty() {
            return Ok(handles);
        }
        handles.extend(received.messages().iter().filter_map(|m| m.receipt_handle.clone()));
    }
}

/// The emulator's CPU seconds from now, when `--emulator-pid` names it.
struct Emulator {
    pid: Option<u32>,
    before: Option<f64>,
}

impl Emulator {
    /// Waits (up to 10 s) for the emulator to settle after the queue was filled (its CPU
    /// under a tenth of a core over a quarter second): each row starts from an idle emulator.
    async fn before(args: &BenchArgs) -> Result<Self, BoxError> {
        let pid = args.option("emulator-pid").map(str::parse::<u32>).transpose()?;
        if let Some(pid) = pid {
            let settling = Instant::now();
            let mut last = process_cpu_seconds(pid)?;
            while settling.elapsed() < Duration::from_secs(10) {
                tokio::time::sleep(Duration::from_millis(250)).await;
                let now = process_cpu_seconds(pid)?;
                if now - last < 0.025 {
                    break;
                }
                last = now;
            }
        }
        Ok(Self { pid, before: pid.map(process_cpu_seconds).transpose()? })
    }

    fn used(&self) -> Result<Option<f64>, BoxError> {
        match (self.pid, self.before) {
            (Some(pid), Some(before)) => Ok(Some(process_cpu_seconds(pid)? - before)),
            _ => Ok(None),
        }
    }
}

fn with(mut row: Value, more: Value) -> Value {
    if let (Some(row), Value::Object(more)) = (row.as_object_mut(), more) {
        row.extend(more);
    }
    row
}

/// Runs the CLI on the backlog; its wall time, rate and peak RSS. Fails unless it exits 0.
async fn run(
    args: &BenchArgs,
    label: &str,
    cli: &[&str],
) -> Result<(std::process::Output, Value), BoxError> {
    let mut command = tokio::process::Command::new(&args.program);
    command.args(cli).env("RUST_LOG", "warn");
    command.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
    let emulator = Emulator::before(args).await?;
    let started = Instant::now();
    let child = command.spawn()?;
    let pid = child.id().ok_or("the CLI exited at once")?;
    let watch = tokio::spawn(async move {
        let (mut peak, mut cpu) = (0, 0.0);
        while let (Ok(kib), Ok(seconds)) = (peak_rss_kib(pid), process_cpu_seconds(pid)) {
            (peak, cpu) = (kib, seconds);
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        (peak, cpu)
    });
    let output = child.wait_with_output().await?;
    let seconds = started.elapsed().as_secs_f64();
    let (peak_kib, cli_cpu) = watch.await?;
    let emulator_cpu = emulator.used()?;
    if !output.status.success() {
        return Err(format!(
            "{label}: {:?}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        )
        .into());
    }
    let row = json!({"label": label, "exit_code": output.status.code(), "seconds": seconds,
        "peak_rss_mib": peak_kib as f64 / 1024.0, "cli_cpu_s": cli_cpu, "emulator_cpu_s": emulator_cpu});
    eprintln!("bench-scale: {row}");
    Ok((output, row))
}

/// A fresh standard queue of `messages` ~1 KB raw messages.
async fn filled(aws: &Aws, messages: usize) -> Result<String, BoxError> {
    let url = aws.create_queue(&unique("bench-scale-dlq")).await?;
    let started = Instant::now();
    let padding = "p".repeat(960);
    futures::stream::iter((0..messages).collect::<Vec<_>>().chunks(10).map(<[usize]>::to_vec))
        .map(|chunk| {
            let (url, padding) = (url.clone(), padding.clone());
            async move {
                let entries = chunk
                    .iter()
                    .map(|n| {
                        let body = json!({"schemaVersion": "1", "operation": "invoice.create",
                            "tenantId": format!("tenant-{}", n % 7), "idempotencyKey": format!("k-{n}"),
                            "payload": padding});
                        SendMessageBatchRequestEntry::builder()
                            .id(format!("e{n}"))
                            .message_body(body.to_string())
                            .build()
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                let sent =
                    aws.sqs.send_message_batch().queue_url(&url).set_entries(Some(entries)).send().await?;
                if !sent.failed().is_empty() {
                    return Err::<(), BoxError>(format!("fill: {:?}", sent.failed()).into());
                }
                Ok(())
            }
        })
        .buffer_unordered(16)
        .try_collect::<Vec<()>>()
        .await?;
    let seconds = started.elapsed().as_secs_f64();
    eprintln!("bench-scale: {messages} messages sent in {seconds:.1} s");
    Ok(url)
}

/// The length of the receipt handles the emulator gives out (one receive, released).
async fn handle_length(aws: &Aws, url: &str) -> Result<usize, BoxError> {
    let received = aws.sqs.receive_message().queue_url(url).send().await?;
    let message = received.messages().first().ok_or("an empty queue")?;
    let handle = message.receipt_handle().unwrap_or_default();
    aws.sqs
        .change_message_visibility()
        .queue_url(url)
        .receipt_handle(handle)
        .visibility_timeout(0)
        .send()
        .await?;
    Ok(handle.len())
}

/// Lines of an export, and the distinct message ids among them.
fn exported(file: &Path) -> Result<(usize, usize), BoxError> {
    let text = std::fs::read_to_string(file)?;
    let mut ids = HashSet::new();
    let mut lines = 0;
    for line in text.lines() {
        let value: Value = serde_json::from_str(line)?;
        let id = value["queueMessageId"].as_str().or(value["messageId"].as_str());
        ids.insert(id.ok_or("an exported line without its message id")?.to_owned());
        lines += 1;
    }
    Ok((lines, ids.len()))
}

/// Audit lines `replayed`, and the distinct queue message ids among them.
fn replayed_ids(audit: &Path) -> Result<(usize, usize), BoxError> {
    let text = std::fs::read_to_string(audit)?;
    let mut ids = HashSet::new();
    let mut replayed = 0;
    for line in text.lines() {
        let value: Value = serde_json::from_str(line)?;
        if value["result"] == "replayed" {
            replayed += 1;
            ids.insert(value["queueMessageId"].as_str().unwrap_or_default().to_owned());
        }
    }
    Ok((replayed, ids.len()))
}
