//! Cold start as Lambda bills it, over several fresh processes: process start
//! → first `GET /runtime/invocation/next` (init), and the first invocation's
//! duration. Works for any program speaking the Runtime API, so the Python
//! anchor is timed by the same host.
//!
//! usage: bench-cold-start --label L [--runs 10] (--event FILE | --batch N)
//!        [--out FILE] [--env NAME=VALUE ...] -- PROGRAM [ARGS ...]

use std::time::Duration;

use backpressure_core::fixtures::work_batch;
use e2e_tests::bench::{BenchArgs, summary};
use e2e_tests::fixtures::BoxError;
use e2e_tests::runtime_host::{LambdaHost, Outcome};
use hyper::body::Bytes;
use serde_json::json;

const USAGE: &str = "bench-cold-start --label L [--runs 10] (--event FILE | --batch N) \
                     [--out FILE] [--env NAME=VALUE ...] -- PROGRAM [ARGS ...]";

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let args = BenchArgs::from_env(USAGE)?;
    let runs = args.number("runs", 10)?;
    let event = match (args.option("event"), args.option("batch")) {
        (Some(path), None) => Bytes::from(std::fs::read(path)?),
        (None, Some(n)) => Bytes::from(work_batch(n.parse()?).to_string()),
        _ => return Err(format!("give --event or --batch; usage: {USAGE}").into()),
    };
    let (mut init, mut first) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let host =
            LambdaHost::start_command(&args.program, &args.arg_refs(), &args.env_pairs()).await?;
        let ready = host.wait_until_ready(Duration::from_secs(30)).await.ok_or_else(|| {
            format!("{} never asked for an invocation: {:?}", args.program.display(), host.logs())
        })?;
        let (outcome, duration) = host.invoke_timed(event.clone(), Duration::from_secs(60)).await;
        let Outcome::Response(response) = outcome else {
            return Err(
                format!("the first invocation failed: {outcome:?} {:?}", host.logs()).into()
            );
        };
        let failures = response["batchItemFailures"].as_array().map_or(0, Vec::len);
        if failures > 0 {
            return Err(format!("the first invocation reported {failures} failures").into());
        }
        init.push(ready.as_secs_f64() * 1e3);
        first.push(duration.ok_or("the host saw no duration")?.as_secs_f64() * 1e3);
    }
    args.report(&json!({
        "label": args.option("label").unwrap_or("?"),
        "runs": runs,
        "init_ms": summary(&init),
        "first_invocation_ms": summary(&first),
    }))
}
