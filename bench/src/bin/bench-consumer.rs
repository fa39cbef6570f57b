//! Consumer throughput: a warm function given a 5,000-message standard batch
//! of about 6 MB (Lambda's payload limit) of valid work requests, delivered to
//! the downstream in `DOWNSTREAM_URL`. Reports messages per second (from the
//! invocation's duration as the host saw it) and the process's peak RSS.
//! Each run is a fresh process, warmed by one 10-message invocation first.
//! Also the CPU time the process spent on the batch, all threads together.
//!
//! usage: bench-consumer --label L [--runs 3] [--messages 5000] [--out FILE]
//!        --env DOWNSTREAM_URL=... [--env NAME=VALUE ...] -- PROGRAM [ARGS ...]

use std::time::Duration;

use e2e_tests::fixtures::BoxError;
use hyper::body::Bytes;
use serde_json::json;
use sqs_backpressure_bench::args::{BenchArgs, invoke_ok, start_ready, summary};
use sqs_backpressure_bench::fixtures::{PAYLOAD_LIMIT, work_batch};

/// Lambda's longest timeout.
const TIMEOUT: Duration = Duration::from_secs(900);
const USAGE: &str = "bench-consumer --label L [--runs 3] [--messages 5000] [--out FILE] \
                     --env DOWNSTREAM_URL=... [--env NAME=VALUE ...] -- PROGRAM [ARGS ...]";

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let args = BenchArgs::from_env(USAGE)?;
    let runs = args.number("runs", 3)?;
    let messages = args.number("messages", 5_000)?;
    let batch = Bytes::from(work_batch(messages).to_string());
    if batch.len() > PAYLOAD_LIMIT {
        return Err(
            format!("the batch is {} bytes, above Lambda's {PAYLOAD_LIMIT}", batch.len()).into()
        );
    }
    let warm_up = Bytes::from(work_batch(10).to_string());
    let (mut rates, mut millis, mut rss, mut cpu) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        let (host, _) = start_ready(&args.program, &args.arg_refs(), &args.env_pairs()).await?;
        invoke_ok(&host, warm_up.clone(), TIMEOUT).await?;
        let cpu_before = host.cpu_time().ok_or("no CPU time for the process")?;
        let elapsed = invoke_ok(&host, batch.clone(), TIMEOUT).await?.as_secs_f64();
        let cpu_used = host.cpu_time().ok_or("no CPU time for the process")? - cpu_before;
        cpu.push(cpu_used.as_secs_f64() * 1e3);
        millis.push(elapsed * 1e3);
        rates.push(messages as f64 / elapsed);
        rss.push(host.peak_rss_kib().ok_or("no VmHWM for the process")? as f64 / 1024.0);
    }
    args.report(&json!({
        "label": args.option("label").unwrap_or("?"),
        "messages": messages,
        "batch_bytes": batch.len(),
        "runs": runs,
        "messages_per_second": summary(&rates),
        "invocation_ms": summary(&millis),
        "peak_rss_mib": summary(&rss),
        "cpu_ms": summary(&cpu),
    }))
}
