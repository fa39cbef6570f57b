//! Cold start as Lambda bills it, over several fresh processes: process start
//! → first `GET /runtime/invocation/next` (init), and the first invocation's
//! duration. Works for any program speaking the Runtime API, so the Python
//! anchor is timed by the same host.
//!
//! usage: bench-cold-start --label L [--runs 10] (--event FILE | --batch N)
//!        [--out FILE] [--env NAME=VALUE ...] -- PROGRAM [ARGS ...]

use e2e_tests::fixtures::BoxError;
use hyper::body::Bytes;
use serde_json::json;
use sqs_backpressure_bench::args::{BenchArgs, cold_starts};
use sqs_backpressure_bench::fixtures::work_batch;

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
    let mut result =
        cold_starts(&args.program, &args.arg_refs(), &args.env_pairs(), &event, runs).await?;
    result["label"] = json!(args.option("label").unwrap_or("?"));
    args.report(&result)
}
