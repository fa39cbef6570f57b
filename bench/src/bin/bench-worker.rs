//! sqs-worker next to a plain Python boto3 long-poll worker, both draining
//! the same work from moto and POSTing each message to the downstream, and the
//! emulator's own ceiling: a bare receive/delete loop with no work.
//!
//! moto's ReceiveMessage and DeleteMessage cost grows with the queue's length
//! (each received message recounts the queue; each delete scans it), so a
//! large backlog would measure moto. Each run instead feeds `--messages` work
//! requests in waves of 50 to a worker already polling: a wave is sent, the
//! harness waits until the queue is empty (its counts read every 50 ms), then
//! sends the next. Messages per second = messages / the feed's wall time, the
//! same feeding for the ceiling. CPU time is the worker's own over the feed
//! (`/proc/<pid>`, every thread), so start-up is not in it; peak RSS is
//! `VmHWM`. Then sqs-worker alone holds `--in-flight` messages a downstream
//! answers only once all are in flight (the queue's count): its peak RSS with
//! all of them received and unsettled. `--messages 0` runs that part alone,
//! `--in-flight 0` the rest alone.
//!
//! `--preload 1` (for an emulator fast enough to hold a backlog, fauxqs): each
//! run's queue is loaded with all `--messages` first, then the worker is
//! started and timed from its start until the queue is empty; CPU is the whole
//! process's, start-up included. The ceiling then is a bare loop draining the
//! same backlog.
//!
//! `--pollers N` (1): sqs-worker's `WORKER_POLLERS` (moto can hand one message
//! to two concurrent receives; its default, 2, on an emulator that does not).
//! `--emulator-pid PID`: the emulator's CPU over each run beside the worker's,
//! as a share of one core, to say which of the two limited the rate.
//!
//! Runs inside `scripts/emulators.sh run` (the SDK and boto3 read the
//! endpoint variables it sets).
//!
//! usage: bench-worker --downstream URL --python-worker "PYTHON SCRIPT" [--messages 1000]
//!        [--runs 3] [--in-flight 1000] [--preload 1] [--pollers 1] [--label-emulator NAME]
//!        [--emulator-pid PID] [--out FILE] -- SQS_WORKER

use std::path::Path;
use std::time::Duration;

use aws_sdk_sqs::types::DeleteMessageBatchRequestEntry;
use e2e_tests::downstream::Downstream;
use e2e_tests::fixtures::{Aws, BoxError, unique};
use e2e_tests::process::Process;
use futures::{StreamExt, TryStreamExt};
use serde_json::{Value, json};
use sqs_backpressure_bench::args::{BenchArgs, summary};
use sqs_backpressure_bench::proc_stats::{peak_rss_kib, process_cpu_seconds};
use tokio::time::Instant;

const USAGE: &str = "bench-worker --downstream URL --python-worker \"PYTHON SCRIPT\" \
                     [--messages 1000] [--runs 3] [--in-flight 1000] [--preload 1] \
                     [--pollers 1] [--label-emulator NAME] [--emulator-pid PID] [--out FILE] \
                     -- SQS_WORKER";
/// Generous bounds for a run that must end, not speed targets.
const DRAINED_WITHIN: Duration = Duration::from_secs(600);
/// How often the queue's counts are read while a worker drains it.
const OBSERVE_EVERY: Duration = Duration::from_millis(50);
/// Messages per wave of the feed.
const WAVE: usize = 50;

/// One worker to measure: how to start it on a queue.
struct Subject {
    label: String,
    program: String,
    args: Vec<String>,
    env: Vec<(String, String)>,
}

impl Subject {
    fn start(&self, queue_url: &str, extra: &[(&str, &str)]) -> Result<Process, BoxError> {
        let mut env: Vec<(&str, &str)> =
            self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        env.push(("QUEUE_URL", queue_url));
        env.extend_from_slice(extra);
        let args: Vec<&str> = self.args.iter().map(String::as_str).collect();
        Process::spawn(Path::new(&self.program), &args, &env)
    }
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let args = BenchArgs::from_env(USAGE)?;
    let messages = args.number("messages", 1_000)?;
    let runs = args.number("runs", 3)?;
    let in_flight = args.number("in-flight", 1_000)?;
    let preload = args.number("preload", 0)? > 0;
    let emulator = args.option("label-emulator").unwrap_or("moto").to_owned();
    let pollers = args.number("pollers", 1)?;
    let emulator_pid = args.option("emulator-pid").map(str::parse::<u32>).transpose()?;
    let downstream = args.option("downstream").ok_or(USAGE)?.to_owned();
    let python: Vec<String> =
        args.option("python-worker").ok_or(USAGE)?.split_whitespace().map(str::to_owned).collect();
    let aws = Aws::from_env().await?;
    let quarantine = aws.create_queue(&unique("bench-quarantine")).await?;

    let common = vec![("DOWNSTREAM_URL".to_owned(), downstream)];
    let mut ours_env = common.clone();
    ours_env.extend([
        ("QUARANTINE_QUEUE_URL".to_owned(), quarantine.clone()),
        ("WORKER_POLLERS".to_owned(), pollers.to_string()),
        ("RUST_LOG".to_owned(), "warn".to_owned()),
    ]);
    let ours = Subject {
        label: format!("sqs-worker ({pollers} poller{})", if pollers == 1 { "" } else { "s" }),
        program: args.program.display().to_string(),
        args: args.args.clone(),
        env: ours_env,
    };
    let (program, script) = python.split_first().ok_or(USAGE)?;
    let theirs = Subject {
        label: "Python boto3 long-poll worker + requests".into(),
        program: program.clone(),
        args: script.to_vec(),
        env: common,
    };

    let mut rows = Vec::new();
    if messages > 0 {
        rows.push(ceiling(&aws, messages, runs, preload, &emulator).await?);
        for subject in [&ours, &theirs] {
            rows.push(throughput(&aws, subject, messages, runs, preload, emulator_pid).await?);
        }
    }
    // As configured by default (CONSUMER_CONCURRENCY records at the downstream at once, the
    // rest waiting, leased), then with every held message at the downstream at once.
    let (mut held, mut all_at_once) = (Value::Null, Value::Null);
    if in_flight > 0 {
        held = hold_in_flight(&aws, &ours, &quarantine, in_flight, None).await?;
        all_at_once = hold_in_flight(&aws, &ours, &quarantine, in_flight, Some(in_flight)).await?;
    }
    args.report(&json!({
        "emulator": emulator,
        "preloaded": preload,
        "messages": messages,
        "runs": runs,
        "rows": rows,
        "in_flight": held,
        "in_flight_all_at_the_downstream": all_at_once,
    }))
}

/// A bare receive/delete loop: what the emulator allows with no work at all.
async fn ceiling(
    aws: &Aws,
    messages: usize,
    runs: usize,
    preload: bool,
    emulator: &str,
) -> Result<Value, BoxError> {
    let mut rates = Vec::new();
    for _ in 0..runs {
        let (url, elapsed) = if preload {
            let url = loaded_queue(aws, messages, "bench.ok").await?;
            let started = Instant::now();
            let bare = tokio::spawn(receive_and_delete(aws.clone(), url.clone()));
            wait_empty(aws, &url).await?;
            bare.abort();
            (url, started.elapsed())
        } else {
            let url = aws.create_queue(&unique("bench-work")).await?;
            let bare = tokio::spawn(receive_and_delete(aws.clone(), url.clone()));
            let elapsed = feed(aws, &url, messages, "bench.ok").await?;
            bare.abort();
            (url, elapsed)
        };
        rates.push(messages as f64 / elapsed.as_secs_f64());
        aws.delete_queue(&url).await?;
    }
    eprintln!("bench-worker: bare receive/delete loop {:.0} messages/s", rates[0]);
    Ok(
        json!({ "label": format!("{emulator} ceiling: bare receive/delete loop"), "messages_per_second": summary(&rates) }),
    )
}

async fn receive_and_delete(aws: Aws, url: String) -> Result<(), BoxError> {
    loop {
        let received = aws
            .sqs
            .receive_message()
            .queue_url(&url)
            .max_number_of_messages(10)
            .wait_time_seconds(20)
            .send()
            .await?;
        let entries = received.messages().iter().enumerate().map(|(i, m)| {
            DeleteMessageBatchRequestEntry::builder()
                .id(i.to_string())
                .set_receipt_handle(m.receipt_handle.clone())
                .build()
        });
        let entries = entries.collect::<Result<Vec<_>, _>>()?;
        if !entries.is_empty() {
            aws.sqs
                .delete_message_batch()
                .queue_url(&url)
                .set_entries(Some(entries))
                .send()
                .await?;
        }
    }
}

async fn throughput(
    aws: &Aws,
    subject: &Subject,
    messages: usize,
    runs: usize,
    preload: bool,
    emulator_pid: Option<u32>,
) -> Result<Value, BoxError> {
    let (mut rates, mut cpu_us, mut rss) = (Vec::new(), Vec::new(), Vec::new());
    let mut emulator_share = Vec::new();
    let emulator_cpu = || emulator_pid.map(process_cpu_seconds).transpose();
    for _ in 0..runs {
        let emulator_before = emulator_cpu()?;
        let (url, mut process, elapsed, cpu) = if preload {
            let url = loaded_queue(aws, messages, "bench.ok").await?;
            let started = Instant::now();
            let process = subject.start(&url, &[])?;
            let pid = process.id().ok_or("the worker exited at once")?;
            wait_empty(aws, &url).await?;
            let elapsed = started.elapsed();
            (url, process, elapsed, process_cpu_seconds(pid)?)
        } else {
            let url = aws.create_queue(&unique("bench-work")).await?;
            let process = subject.start(&url, &[])?;
            let pid = process.id().ok_or("the worker exited at once")?;
            // Started, imported and long-polling before the clock starts.
            tokio::time::sleep(Duration::from_secs(3)).await;
            let cpu_before = process_cpu_seconds(pid)?;
            let elapsed = feed(aws, &url, messages, "bench.ok").await?;
            (url, process, elapsed, process_cpu_seconds(pid)? - cpu_before)
        };
        let pid = process.id().ok_or("the worker exited")?;
        if let (Some(before), Some(after)) = (emulator_before, emulator_cpu()?) {
            emulator_share.push((after - before) / elapsed.as_secs_f64());
        }
        rates.push(messages as f64 / elapsed.as_secs_f64());
        cpu_us.push(cpu / messages as f64 * 1e6);
        rss.push(peak_rss_kib(pid)? as f64 / 1024.0);
        process.signal("KILL").await?;
        let _ = process.exit(Duration::from_secs(10)).await;
        aws.delete_queue(&url).await?;
    }
    let emulator_note = emulator_share
        .first()
        .map(|share| format!(", the emulator at {:.0} % of a core", share * 100.0))
        .unwrap_or_default();
    eprintln!(
        "bench-worker: {}: {:.0} messages/s, {:.0} µs CPU/message, {:.1} MiB{emulator_note}",
        subject.label, rates[0], cpu_us[0], rss[0]
    );
    let mut row = json!({
        "label": subject.label,
        "messages_per_second": summary(&rates),
        "cpu_us_per_message": summary(&cpu_us),
        "peak_rss_mib": summary(&rss),
    });
    if !emulator_share.is_empty() {
        row["emulator_cpu_share_of_a_core"] = summary(&emulator_share);
    }
    Ok(row)
}

/// Sends `messages` work requests in waves of `WAVE`, each once the queue is
/// empty again; returns the wall time until the last wave is gone.
async fn feed(
    aws: &Aws,
    url: &str,
    messages: usize,
    operation: &str,
) -> Result<Duration, BoxError> {
    let started = Instant::now();
    let mut sent = 0;
    while sent < messages {
        let wave = WAVE.min(messages - sent);
        send(aws, url, sent..sent + wave, operation).await?;
        sent += wave;
        wait_empty(aws, url).await?;
    }
    Ok(started.elapsed())
}

/// sqs-worker holding `count` slow messages at once: its peak RSS, and the
/// most the queue counted in flight.
async fn hold_in_flight(
    aws: &Aws,
    subject: &Subject,
    quarantine: &str,
    count: usize,
    concurrency: Option<usize>,
) -> Result<Value, BoxError> {
    let slow = Downstream::start().await?;
    let url = loaded_queue(aws, count, "bench.hold").await?;
    let (limit, slow_url) = (count.to_string(), slow.url());
    let concurrency = concurrency.map(|c| c.to_string());
    let mut env = vec![
        ("WORKER_MAX_IN_FLIGHT", limit.as_str()),
        ("DOWNSTREAM_URL", &slow_url),
        ("DOWNSTREAM_TIMEOUT_MS", "900000"),
        ("QUARANTINE_QUEUE_URL", quarantine),
    ];
    if let Some(concurrency) = &concurrency {
        env.push(("CONSUMER_CONCURRENCY", concurrency));
    }
    let mut process = subject.start(&url, &env)?;
    let pid = process.id().ok_or("the worker exited at once")?;
    let give_up = Instant::now() + DRAINED_WITHIN;
    let mut most = 0;
    while most < count as u64 {
        most = most.max(aws.counts(&url).await?.1);
        if Instant::now() > give_up {
            return Err(format!("at most {most} in flight after {DRAINED_WITHIN:?}").into());
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let rss_all_held = peak_rss_kib(pid)? as f64 / 1024.0;
    slow.release_held();
    wait_empty(aws, &url).await?;
    let rss = peak_rss_kib(pid)? as f64 / 1024.0;
    process.signal("TERM").await?;
    let status = process.exit(Duration::from_secs(120)).await?;
    aws.delete_queue(&url).await?;
    eprintln!("bench-worker: {most} in flight at most, peak RSS {rss:.1} MiB, exit {status}");
    Ok(json!({
        "label": subject.label,
        "consumer_concurrency": concurrency.as_deref().unwrap_or("32 (default)"),
        "messages": count,
        "most_in_flight": most,
        "peak_rss_mib_all_held": rss_all_held,
        "peak_rss_mib": rss,
        "exit_code": status.code(),
    }))
}

/// A fresh queue holding `messages` work requests for `operation`.
async fn loaded_queue(aws: &Aws, messages: usize, operation: &str) -> Result<String, BoxError> {
    let url = aws.create_queue(&unique("bench-work")).await?;
    send(aws, &url, 0..messages, operation).await?;
    Ok(url)
}

/// Sends work requests numbered `keys`, ten to a batch, five batches at once.
async fn send(
    aws: &Aws,
    url: &str,
    keys: std::ops::Range<usize>,
    operation: &str,
) -> Result<(), BoxError> {
    let bodies: Vec<String> = keys
        .map(|i| {
            json!({"schemaVersion": "1", "operation": operation, "tenantId": "bench",
                "idempotencyKey": format!("k{i}")})
            .to_string()
        })
        .collect();
    futures::stream::iter(bodies.chunks(10))
        .map(|chunk| aws.send_batch(url, chunk))
        .buffer_unordered(16)
        .try_collect::<Vec<()>>()
        .await?;
    Ok(())
}

async fn wait_empty(aws: &Aws, url: &str) -> Result<(), BoxError> {
    aws.wait_for_counts(url, (0, 0), DRAINED_WITHIN, OBSERVE_EVERY).await
}
