//! sqs-backpressure reading a FIFO queue of `--messages` messages in `--groups`
//! groups: `stats` as it reads by default (how much it sees, and that it says
//! so with exit 5), then `stats --rotate-groups` (the whole queue, how long),
//! then a check that every group is still whole and in its order. Run on an
//! SQS emulator; `bench/run.sh fifo-scan` runs it on LocalStack's SQS and on moto.
//!
//! usage: bench-fifo-scan [--messages 10000] [--groups 50] [--out FILE] -- SQS_BACKPRESSURE

use aws_sdk_sqs::types::{QueueAttributeName, SendMessageBatchRequestEntry};
use e2e_tests::fixtures::{Aws, BoxError, unique};
use futures::{StreamExt, TryStreamExt};
use serde_json::{Value, json};
use sqs_backpressure_bench::args::BenchArgs;
use tokio::time::Instant;

const USAGE: &str =
    "bench-fifo-scan [--messages 10000] [--groups 50] [--out FILE] -- SQS_BACKPRESSURE";

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let args = BenchArgs::from_env(USAGE)?;
    let messages = args.number("messages", 10_000)?;
    let groups = args.number("groups", 50)?;
    if args.program.as_os_str().is_empty() {
        return Err(USAGE.into());
    }
    let cli = args.program.clone();
    let aws = Aws::from_env().await?;
    let url = aws
        .sqs
        .create_queue()
        .queue_name(format!("{}.fifo", unique("bench-fifo")))
        .attributes(QueueAttributeName::FifoQueue, "true")
        .send()
        .await?
        .queue_url
        .ok_or("no queue URL")?;
    let started = Instant::now();
    fill(&aws, &url, messages, groups).await?;
    let fill_s = started.elapsed().as_secs_f64();
    let held = stats(&cli, &url, false).await?;
    let moved = stats(&cli, &url, true).await?;
    let started = Instant::now();
    let order = drain_in_order(&aws, &url, groups).await?;
    let drain_s = started.elapsed().as_secs_f64();
    args.report(&json!({
        "messages": messages, "groups": groups, "fill_s": fill_s,
        "default": held, "rotate_groups": moved, "drain_s": drain_s, "after": order,
    }))
}

/// `n` messages, group `g{i % groups}`, each body its group and its place in it.
async fn fill(aws: &Aws, url: &str, n: usize, groups: usize) -> Result<(), BoxError> {
    let chunks: Vec<Vec<usize>> =
        (0..n).collect::<Vec<_>>().chunks(10).map(<[usize]>::to_vec).collect();
    futures::stream::iter(chunks)
        .map(|chunk| async move {
            let entries = chunk
                .iter()
                .map(|i| {
                    let (group, place) = (i % groups, i / groups);
                    SendMessageBatchRequestEntry::builder()
                        .id(format!("e{i}"))
                        .message_body(format!("g{group}:{place:06}"))
                        .message_group_id(format!("g{group}"))
                        .message_deduplication_id(format!("d{i}"))
                        .build()
                })
                .collect::<Result<Vec<_>, _>>()?;
            let sent = aws
                .sqs
                .send_message_batch()
                .queue_url(url)
                .set_entries(Some(entries))
                .send()
                .await?;
            if sent.failed().is_empty() {
                Ok(())
            } else {
                Err::<(), BoxError>("fill failed".into())
            }
        })
        // Sends of one group in order: one batch at a time keeps each group's order.
        .buffered(1)
        .try_collect::<Vec<()>>()
        .await?;
    Ok(())
}

async fn stats(cli: &std::path::Path, url: &str, rotate: bool) -> Result<Value, BoxError> {
    let mut command = tokio::process::Command::new(cli);
    command.args(["stats", "--queue-url", url, "--json", "--visibility-timeout", "3600"]);
    if rotate {
        command.arg("--rotate-groups");
    }
    let started = Instant::now();
    let output = command.output().await?;
    let seconds = started.elapsed().as_secs_f64();
    let json: Value = serde_json::from_slice(&output.stdout).unwrap_or(Value::Null);
    Ok(json!({
        "exit": output.status.code(), "seconds": seconds, "read": json["read"],
        "queueCounted": json["queueCounted"], "complete": json["complete"], "moved": json["moved"],
        "stderr": String::from_utf8_lossy(&output.stderr).lines().last().unwrap_or_default(),
    }))
}

/// Receives and deletes everything: whether each group is whole and in order.
async fn drain_in_order(aws: &Aws, url: &str, groups: usize) -> Result<Value, BoxError> {
    let seen = aws.drain_by_group(url).await?;
    let in_order = seen.values().filter(|bodies| bodies.windows(2).all(|w| w[0] < w[1])).count();
    let total: usize = seen.values().map(Vec::len).sum();
    Ok(
        json!({"messages": total, "groups": seen.len(), "groups_in_order": in_order, "groups_expected": groups}),
    )
}
