//! Publisher fan-out against the emulators: one invocation with 1, 10 and 50
//! targets (one queue with a backlog and one ECS service each, one cluster),
//! its wall time as the host sees it, its peak RSS after the runs, and its API calls per operation, counted
//! by a proxy in a separate run so the timed runs go straight to the emulators.
//! Anchor: the same work done sequentially with boto3 (`--anchor`), timed in
//! Python around the loop with its clients already made.
//!
//! With `--starts N` it also times N cold starts on the first target set:
//! process start → first `GET /next`, and the first invocation. With
//! `--model-latency-ms N` it also runs against `LatencyModel` (every call
//! answered after N ms, concurrently), to show the fan-out's own scaling.
//!
//! usage: bench-publisher [--targets 1,10,50] [--runs 5] [--starts 10] [--model-latency-ms 20]
//!        [--anchor "python script.py"] [--out FILE] -- PUBLISHER

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use aws_sdk_cloudwatch::types::{Dimension, MetricDatum, StandardUnit};
use aws_sdk_sqs::types::QueueAttributeName;

use e2e_tests::fault_proxy::FaultProxy;
use e2e_tests::fixtures::{Aws, BoxError, ENDPOINT_VARS, unique};
use e2e_tests::runtime_host::LambdaHost;
use hyper::body::Bytes;
use serde_json::{Value, json};
use sqs_backpressure_bench::args::{BenchArgs, cold_starts, invoke_ok, start_ready, summary};
use sqs_backpressure_bench::latency_model::LatencyModel;

const USAGE: &str = "bench-publisher [--targets 1,10,50] [--runs 5] [--starts 10] [--model-latency-ms 20] \
                     [--anchor \"python script.py\"] [--out FILE] -- PUBLISHER";
/// What the publisher sends per target here (no DLQ, a backlog target set).
const DATUMS_PER_TARGET: usize = 7;

async fn targets(aws: &Aws, count: usize) -> Result<String, BoxError> {
    let cluster = unique("bench");
    let mut targets = Vec::with_capacity(count);
    for i in 0..count {
        let queue = aws.create_queue(&unique(&format!("bench-{i}"))).await?;
        aws.send_messages(&queue, 3).await?;
        let service = format!("worker-{i}");
        aws.create_service(&cluster, &service, 1).await?;
        targets.push(json!({"queueUrl": queue, "cluster": cluster, "service": service}));
    }
    Ok(Value::Array(targets).to_string())
}

async fn invoke(host: &LambdaHost) -> Result<f64, BoxError> {
    let event = Bytes::from_static(include_bytes!("../../../events/schedule.json"));
    Ok(invoke_ok(host, event, Duration::from_secs(60)).await?.as_secs_f64() * 1e3)
}

async fn start(args: &BenchArgs, env: &[(&str, &str)]) -> Result<LambdaHost, BoxError> {
    Ok(start_ready(&args.program, &args.arg_refs(), env).await?.0)
}

/// API calls of one invocation, by operation, through counting proxies.
async fn count_calls(args: &BenchArgs, base: &[(&str, &str)]) -> Result<Value, BoxError> {
    let proxies = FaultProxy::for_each_endpoint().await?;
    let mut env = base.to_vec();
    env.extend(proxies.iter().map(|(name, proxy)| (*name, proxy.url())));
    let host = start(args, &env).await?;
    invoke(&host).await?;
    let calls: BTreeMap<String, Value> = proxies
        .iter()
        .map(|(name, proxy)| {
            let service = name.trim_start_matches("AWS_ENDPOINT_URL_").to_lowercase();
            (service, json!({"total": proxy.total(), "operations": proxy.counts()}))
        })
        .collect();
    Ok(json!(calls))
}

fn millis(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1e3
}

/// How the emulators themselves scale with the work, whoever the client:
/// one `GetQueueAttributes` alone, then one per target all at once; and
/// `PutMetricData` with one target's datums, then every target's.
async fn emulator_probe(
    aws: &Aws,
    targets: &str,
    datums_per_target: usize,
) -> Result<Value, BoxError> {
    let queues: Vec<String> = serde_json::from_str::<Vec<Value>>(targets)?
        .iter()
        .filter_map(|t| t["queueUrl"].as_str().map(str::to_owned))
        .collect();
    let first = queues.first().ok_or("no queue")?.clone();
    let read = |queue: String| {
        let sqs = aws.sqs.clone();
        async move {
            sqs.get_queue_attributes()
                .queue_url(queue)
                .attribute_names(QueueAttributeName::All)
                .send()
                .await
        }
    };
    let mut alone = Vec::new();
    for _ in 0..5 {
        let started = Instant::now();
        read(first.clone()).await?;
        alone.push(millis(started));
    }
    let started = Instant::now();
    let mut reads = tokio::task::JoinSet::new();
    for queue in &queues {
        reads.spawn(read(queue.clone()));
    }
    while let Some(result) = reads.join_next().await {
        result??;
    }
    let together = millis(started);

    let datums = |count: usize| -> Vec<MetricDatum> {
        (0..count)
            .map(|i| {
                MetricDatum::builder()
                    .metric_name(format!("Probe{}", i % datums_per_target))
                    .set_dimensions(Some(
                        ["ClusterName", "ServiceName", "QueueName"]
                            .iter()
                            .map(|name| {
                                let value = format!("{name}-{}", i / datums_per_target);
                                Dimension::builder().name(*name).value(value).build()
                            })
                            .collect(),
                    ))
                    .value(1.0)
                    .unit(StandardUnit::Count)
                    .build()
            })
            .collect()
    };
    let mut put = BTreeMap::new();
    for count in [datums_per_target, datums_per_target * queues.len()] {
        let started = Instant::now();
        aws.cloudwatch
            .put_metric_data()
            .namespace("SqsBackpressure/Probe")
            .set_metric_data(Some(datums(count)))
            .send()
            .await?;
        put.insert(count.to_string(), millis(started));
    }
    Ok(json!({
        "get_queue_attributes_alone_ms": summary(&alone),
        "get_queue_attributes_all_at_once_ms": together,
        "queues": queues.len(),
        "put_metric_data_ms_by_datums": put,
    }))
}

/// Ours against the latency model: `count` targets, every call answered after
/// `delay`, concurrently. Warm runs only, after one first invocation.
async fn against_model(
    args: &BenchArgs,
    count: usize,
    delay: Duration,
    runs: usize,
) -> Result<Value, BoxError> {
    let model = LatencyModel::start(delay).await?;
    let targets: Vec<Value> = (0..count)
        .map(|i| {
            json!({"queueUrl": format!("https://sqs.us-east-1.amazonaws.com/123456789012/model-{i}"),
                   "cluster": "model", "service": format!("worker-{i}")})
        })
        .collect();
    let targets = Value::Array(targets).to_string();
    let mut env = args.env_pairs();
    env.extend([
        ("TARGETS", targets.as_str()),
        ("TARGET_BACKLOG_PER_TASK", "100"),
        ("AWS_LAMBDA_LOG_LEVEL", "error"),
    ]);
    env.extend(ENDPOINT_VARS.iter().map(|name| (*name, model.url())));
    let host = start(args, &env).await?;
    invoke(&host).await?;
    let mut warm = Vec::with_capacity(runs);
    for _ in 0..runs {
        warm.push(invoke(&host).await?);
    }
    Ok(json!({"latency_ms": delay.as_millis() as u64, "wall_ms": summary(&warm)}))
}

async fn anchor(command: &str, targets: &str, runs: usize) -> Result<Value, BoxError> {
    let mut words = command.split_whitespace();
    let program = words.next().ok_or("--anchor is empty")?;
    let output = tokio::process::Command::new(program)
        .args(words)
        .arg((runs + 1).to_string())
        .env("TARGETS", targets)
        .output()
        .await?;
    if !output.status.success() {
        return Err(
            format!("the anchor failed: {}", String::from_utf8_lossy(&output.stderr)).into()
        );
    }
    let result: Value = serde_json::from_slice(&output.stdout)?;
    let times: Vec<f64> = result["times_ms"]
        .as_array()
        .ok_or("the anchor printed no times_ms")?
        .iter()
        .filter_map(Value::as_f64)
        .collect();
    let (first, warm) = times.split_first().ok_or("the anchor made no run")?;
    Ok(json!({"first_ms": first, "wall_ms": summary(warm), "calls": result["calls"]}))
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let args = BenchArgs::from_env(USAGE)?;
    let runs = args.number("runs", 5)?;
    let counts: Vec<usize> = args
        .option("targets")
        .unwrap_or("1,10,50")
        .split(',')
        .map(str::parse)
        .collect::<Result<_, _>>()?;
    let aws = Aws::from_env().await?;
    let starts = args.number("starts", 0)?;
    let mut cold_start = Value::Null;
    let mut results = Vec::new();
    for count in counts {
        let targets = targets(&aws, count).await?;
        let mut env = args.env_pairs();
        env.extend([
            ("TARGETS", targets.as_str()),
            ("TARGET_BACKLOG_PER_TASK", "100"),
            ("METRIC_NAMESPACE", "SqsBackpressure/Bench"),
            ("AWS_LAMBDA_LOG_LEVEL", "error"),
        ]);
        if starts > 0 && cold_start.is_null() {
            let event = Bytes::from_static(include_bytes!("../../../events/schedule.json"));
            cold_start = cold_starts(&args.program, &args.arg_refs(), &env, &event, starts).await?;
        }
        let host = start(&args, &env).await?;
        let first = invoke(&host).await?;
        let mut warm = Vec::with_capacity(runs);
        for _ in 0..runs {
            warm.push(invoke(&host).await?);
        }
        let peak_rss_mib = host.peak_rss_kib().map(|kib| kib as f64 / 1024.0);
        drop(host);
        let calls = count_calls(&args, &env).await?;
        let probe = emulator_probe(&aws, &targets, DATUMS_PER_TARGET).await?;
        let model = match args.number("model-latency-ms", 0)? {
            0 => Value::Null,
            ms => against_model(&args, count, Duration::from_millis(ms as u64), runs).await?,
        };
        let anchor = match args.option("anchor") {
            Some(command) => anchor(command, &targets, runs).await?,
            None => Value::Null,
        };
        results.push(json!({
            "targets": count,
            "ours": {"first_ms": first, "wall_ms": summary(&warm), "calls": calls,
                     "peak_rss_mib": peak_rss_mib},
            "boto3": anchor,
            "emulator_probe": probe,
            "latency_model": model,
        }));
    }
    args.report(&json!({"label": args.option("label").unwrap_or("publisher-fan-out"),
                        "runs": runs, "cold_start": cold_start, "results": results}))
}
