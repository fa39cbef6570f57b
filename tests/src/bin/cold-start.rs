//! Measures a function's cold start as Lambda sees it: from spawning the
//! process to its first `GET /runtime/invocation/next`, over several starts.
//!
//! usage: cold-start BINARY [RUNS] [NAME=VALUE ...]

use std::time::Duration;

use e2e_tests::cli::MeasureArgs;
use e2e_tests::fixtures::BoxError;
use e2e_tests::runtime_host::LambdaHost;

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let args = MeasureArgs::from_env("cold-start BINARY [RUNS] [NAME=VALUE ...]", 10)?;
    let (binary, runs, env) = (&args.binary, args.runs, args.env_pairs());

    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let host = LambdaHost::start(binary, &env).await?;
        let elapsed = host.wait_until_ready(Duration::from_secs(10)).await.ok_or_else(|| {
            format!("{} never asked for an invocation: {:?}", binary.display(), host.logs())
        })?;
        times.push(elapsed.as_secs_f64() * 1e3);
    }
    let mut sorted = times.clone();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    let listed: Vec<String> = times.iter().map(|t| format!("{t:.2}")).collect();
    println!(
        "{}: process start → first /next over {runs} starts (ms): {}",
        binary.display(),
        listed.join(" ")
    );
    println!(
        "median {median:.2} ms, min {:.2} ms, max {:.2} ms",
        sorted[0],
        sorted[sorted.len() - 1]
    );
    Ok(())
}
