//! Init against the floor: process start → first `GET /runtime/invocation/next`
//! of a bare `lambda_runtime` hello world (`bench/floor`), backlog-publisher
//! and batch-consumer, interleaved round by round (each round in a rotated
//! order, after one warm-up round that is not counted), so that the machine's
//! drift over the run falls on every binary alike. The figures that matter are
//! the ratios of each median to the floor's.
//!
//! Each function gets the template's default settings (idempotency and the
//! S3 overflow on, the publisher's load signal on) and an AWS endpoint on
//! loopback that accepts connections and never answers, so anything a
//! function sends during its init costs what it costs and fails no start.
//!
//! `--publisher` and `--consumer` may be given more than once, as
//! `LABEL=PATH` (two builds side by side, say); the label is the binary's
//! name otherwise.
//!
//! usage: bench-init --floor PATH --publisher [LABEL=]PATH --consumer [LABEL=]PATH
//!        [--downstream URL] [--rounds 15] [--out FILE]

use std::path::PathBuf;

use std::time::Duration;

use e2e_tests::fixtures::BoxError;
use serde_json::{Map, Value, json};
use sqs_backpressure_bench::args::{BenchArgs, median, start_ready, summary};
use tokio::net::TcpListener;

const USAGE: &str = "bench-init --floor PATH --publisher [LABEL=]PATH --consumer [LABEL=]PATH \
                     [--downstream URL] [--rounds 15] [--out FILE]";

/// One binary to start: its label, which function's settings it gets, its path.
struct Program {
    label: String,
    function: &'static str,
    path: PathBuf,
}

fn programs(args: &BenchArgs) -> Result<Vec<Program>, BoxError> {
    let floor = args.option("floor").ok_or_else(|| format!("--floor; usage: {USAGE}"))?;
    let mut programs =
        vec![Program { label: "floor".into(), function: "floor", path: floor.into() }];
    for function in ["publisher", "consumer"] {
        let given = args.options(function);
        if given.is_empty() {
            return Err(format!("--{function}; usage: {USAGE}").into());
        }
        for value in given {
            let (label, path) = match value.split_once('=') {
                Some((label, path)) => (label.to_owned(), PathBuf::from(path)),
                None => {
                    let path = PathBuf::from(value);
                    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
                    (name.unwrap_or_else(|| function.to_owned()), path)
                }
            };
            programs.push(Program { label, function, path });
        }
    }
    Ok(programs)
}

/// A Lambda function's settings as `template.yaml` sets them by default.
fn template_env(function: &str, endpoint: &str, downstream: &str) -> Vec<(String, String)> {
    let common = [
        ("AWS_REGION", "us-east-1"),
        ("AWS_ACCESS_KEY_ID", "bench"),
        ("AWS_SECRET_ACCESS_KEY", "bench"),
        ("AWS_ENDPOINT_URL", endpoint),
        ("AWS_LAMBDA_LOG_LEVEL", "error"),
        ("METRIC_NAMESPACE", "SqsBackpressure"),
        ("API_CALL_TIMEOUT_MS", "5000"),
        ("CONSUMER_CONCURRENCY", "32"),
    ];
    let own: &[(&str, &str)] = match function {
        "publisher" => &[
            ("QUEUE_URL", "https://sqs.us-east-1.amazonaws.com/123456789012/work"),
            ("ECS_CLUSTER_NAME", "workers"),
            ("ECS_SERVICE_NAME", "sqs-worker"),
            ("TARGET_BACKLOG_PER_TASK", "100"),
            ("TARGET_LOAD_PERCENT", "150"),
            ("AVG_PROCESSING_SECONDS", "1"),
        ],
        "consumer" => &[
            ("DOWNSTREAM_URL", downstream),
            ("QUARANTINE_QUEUE_URL", "https://sqs.us-east-1.amazonaws.com/123456789012/quarantine"),
            ("QUARANTINE_OVERFLOW_BUCKET", "quarantine-overflow"),
            ("IDEMPOTENCY_TABLE", "idempotency"),
            ("IDEMPOTENCY_MISSING_KEY", "process"),
        ],
        _ => &[],
    };
    let all = if function == "floor" { &[][..] } else { &common[..] };
    all.iter().chain(own).map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

/// An endpoint that takes connections and never answers.
async fn silent_endpoint() -> Result<String, BoxError> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let address = listener.local_addr()?;
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    Ok(format!("http://{address}"))
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let args = BenchArgs::from_env(USAGE)?;
    let rounds = args.number("rounds", 15)?;
    let programs = programs(&args)?;
    let endpoint = silent_endpoint().await?;
    let downstream = args.option("downstream").unwrap_or("http://127.0.0.1:9/work").to_owned();
    let envs: Vec<Vec<(String, String)>> =
        programs.iter().map(|p| template_env(p.function, &endpoint, &downstream)).collect();

    let mut samples = vec![Vec::with_capacity(rounds); programs.len()];
    for round in 0..=rounds {
        for k in 0..programs.len() {
            let i = (round + k) % programs.len();
            let env: Vec<(&str, &str)> =
                envs[i].iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            let (host, ready) = start_ready(&programs[i].path, &[], &env).await?;
            drop(host);
            if round > 0 {
                samples[i].push(ready.as_secs_f64() * 1e3);
            }
            // The killed process's exit and the host's sockets settle before the next start.
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    let floor = median(&samples[0]).ok_or("no samples")?;
    let mut functions = Map::new();
    for (program, init) in programs.iter().zip(&samples) {
        let ratio = median(init).map(|m| m / floor);
        functions.insert(
            program.label.clone(),
            json!({"function": program.function, "program": program.path.display().to_string(),
                   "init_ms": summary(init), "ratio_to_floor": ratio}),
        );
    }
    let result = json!({"label": "init against the floor", "rounds": rounds, "functions": Value::Object(functions)});
    args.report(&result)
}
