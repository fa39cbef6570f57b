//! `make soak`: one warm process of each function serves thousands of
//! consecutive invocations with mixed outcomes and injected faults (through
//! the fault proxy). Reports resident memory at invocation 100 and at the
//! end, open file descriptors, and every message id counted: none lost, none
//! misreported. Exits non-zero when a promise is broken.
//!
//! usage: soak [--invocations 2000] [--out FILE]

use std::collections::HashMap;
use std::time::{Duration, Instant};

use e2e_tests::downstream::Downstream;
use e2e_tests::fault_proxy::{Fault, FaultProxy, Rule};
use e2e_tests::fixtures::{Aws, BoxError, binary, sqs_record, unique};
use e2e_tests::runtime_host::{LambdaHost, Outcome};
use serde_json::{Value, json};
use sqs_backpressure_bench::args::BenchArgs;

const USAGE: &str = "soak [--invocations 2000] [--out FILE]";
const CALL_TIMEOUT_MS: &str = "500";
const INVOCATION_TIMEOUT: Duration = Duration::from_secs(30);
/// The issue's bound on memory growth between invocation 100 and the end.
const MAX_RSS_GROWTH: f64 = 0.05;

/// What one warm process did over the run.
#[derive(Debug, Default)]
struct Report {
    function: &'static str,
    invocations: usize,
    rss_at_100_kib: u64,
    rss_at_end_kib: u64,
    fds_at_100: usize,
    fds_at_end: usize,
    /// Message ids (consumer) or target results (publisher) checked.
    counted: usize,
    lost: usize,
    misreported: usize,
    faults_injected: usize,
    seconds: f64,
}

impl Report {
    fn rss_growth(&self) -> f64 {
        self.rss_at_end_kib as f64 / self.rss_at_100_kib.max(1) as f64 - 1.0
    }

    fn holds(&self) -> bool {
        self.rss_growth() <= MAX_RSS_GROWTH
            && self.fds_at_end <= self.fds_at_100
            && self.lost == 0
            && self.misreported == 0
    }

    fn row(&self) -> String {
        format!(
            "| {} | {} | {} | {} KiB | {} KiB | {:+.2} % | {} → {} | {} | {} | {} | {:.0} s |",
            self.function,
            self.invocations,
            self.faults_injected,
            self.rss_at_100_kib,
            self.rss_at_end_kib,
            self.rss_growth() * 100.0,
            self.fds_at_100,
            self.fds_at_end,
            self.counted,
            self.lost,
            self.misreported,
            self.seconds,
        )
    }

    fn sample(&mut self, host: &LambdaHost, invocation: usize) {
        if invocation == 100 {
            self.rss_at_100_kib = host.rss_kib().unwrap_or(0);
            self.fds_at_100 = host.open_fds().unwrap_or(0);
        }
    }

    fn finish(&mut self, host: &LambdaHost, started: Instant) {
        self.rss_at_end_kib = host.rss_kib().unwrap_or(0);
        self.fds_at_end = host.open_fds().unwrap_or(0);
        self.seconds = started.elapsed().as_secs_f64();
    }
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let args = BenchArgs::from_env(USAGE)?;
    let invocations = args.number("invocations", 2_000)?;
    if invocations <= 100 {
        return Err("--invocations must be above 100 (memory is first read at 100)".into());
    }
    let aws = Aws::from_env().await?;
    let publisher = soak_publisher(&aws, invocations).await?;
    eprintln!("soak: publisher done");
    let consumer = soak_consumer(&aws, invocations).await?;
    let mut table = String::from(
        "| Function | Invocations | With a fault | RSS at 100 | RSS at end | Growth | Open fds (100 → end) | Counted | Lost | Misreported | Took |\n\
         | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    for report in [&publisher, &consumer] {
        table.push_str(&report.row());
        table.push('\n');
    }
    println!("{table}");
    if let Some(out) = args.option("out") {
        if let Some(parent) = std::path::Path::new(out).parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(out, &table)?;
    }
    if publisher.holds() && consumer.holds() {
        Ok(())
    } else {
        Err("soak: a promise broke (memory growth above 5 %, a descriptor leak, or a lost or misreported message)".into())
    }
}

// ---------------------------------------------------------------- publisher

/// The publisher with two targets (the first with a dead-letter queue); a
/// fault on most tenth invocations.
async fn soak_publisher(aws: &Aws, invocations: usize) -> Result<Report, BoxError> {
    let (queue_a, queue_b) = (unique("soak-a"), unique("soak-b"));
    let (url_a, dlq_a) = aws.create_queue_with_dlq(&queue_a).await?;
    let url_b = aws.create_queue(&queue_b).await?;
    aws.send_messages(&url_a, 8).await?;
    aws.send_messages(&url_b, 8).await?;
    aws.send_messages(&dlq_a, 1).await?;
    let (cluster_a, cluster_b) = (unique("soak-ca"), unique("soak-cb"));
    aws.create_service(&cluster_a, "svc", 2).await?;
    aws.create_service(&cluster_b, "svc", 2).await?;
    let targets = format!(
        r#"[{{"queueUrl":"{url_a}","cluster":"{cluster_a}","service":"svc"}},
            {{"queueUrl":"{url_b}","cluster":"{cluster_b}","service":"svc"}}]"#
    );
    let proxies = FaultProxy::for_each_endpoint().await?;
    let mut env = vec![
        ("TARGETS", targets.as_str()),
        ("METRIC_NAMESPACE", "SqsBackpressureSoak"),
        ("API_CALL_TIMEOUT_MS", CALL_TIMEOUT_MS),
    ];
    env.extend(proxies.iter().map(|(name, proxy)| (*name, proxy.url())));
    let host = LambdaHost::start(&binary("backlog-publisher")?, &env).await?;
    let event: Value = serde_json::from_str(include_str!("../../../events/schedule.json"))?;
    let mut report = Report { function: "backlog-publisher", invocations, ..Report::default() };
    let started = Instant::now();
    for i in 1..=invocations {
        for (_, proxy) in &proxies {
            proxy.clear();
        }
        let (sqs, ecs, cloudwatch) = (&proxies[0].1, &proxies[1].1, &proxies[2].1);
        // The errorType expected, and which targets' names it must mention.
        let expected: (&str, Option<&str>) = match i % 10 {
            _ if i % 100 == 99 => {
                cloudwatch.inject(Rule::new("PutMetricData", Fault::Hang));
                ("PutMetricDataFailed", None)
            }
            6 => {
                sqs.inject(
                    Rule::new("GetQueueAttributes", Fault::Deny)
                        .when_body_contains(&format!("{queue_a}\"")),
                );
                ("TargetsNotPublished", Some(queue_a.as_str()))
            }
            7 => {
                sqs.inject(
                    Rule::new("GetQueueAttributes", Fault::Throttle)
                        .when_body_contains(&format!("{queue_a}-dlq")),
                );
                ("DeadLetterQueueUnreadable", Some(queue_a.as_str()))
            }
            8 => {
                ecs.inject(
                    Rule::new("DescribeServices", Fault::ServerError)
                        .when_body_contains(&cluster_b),
                );
                ("TargetsNotPublished", Some(queue_b.as_str()))
            }
            9 => {
                cloudwatch
                    .inject(Rule::new("PutMetricData", Fault::Delay(Duration::from_millis(50))));
                ("success", None)
            }
            _ => ("success", None),
        };
        if expected != ("success", None) {
            report.faults_injected += 1;
        }
        let outcome = host.invoke(&event, INVOCATION_TIMEOUT).await;
        report.counted += 2;
        let correct = match (&outcome, expected) {
            (Outcome::Response(body), ("success", _)) => {
                let targets = body["targets"].as_array().cloned().unwrap_or_default();
                targets.len() == 2 && targets.iter().all(|t| t["backlogPerTask"] == 4.0)
            }
            (Outcome::Error(error), (error_type, named)) => {
                error["errorType"] == error_type
                    && named.is_none_or(|name| {
                        error["errorMessage"].as_str().unwrap_or_default().contains(name)
                    })
            }
            _ => false,
        };
        if !correct {
            report.misreported += 1;
            eprintln!("soak: publisher invocation {i} expected {expected:?}, got {outcome:?}");
        }
        if matches!(outcome, Outcome::TimedOut | Outcome::Exited(_)) {
            report.lost += 2;
        }
        report.sample(&host, i);
    }
    report.finish(&host, started);
    Ok(report)
}

// ---------------------------------------------------------------- consumer

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Done,
    Quarantined,
    Retried,
}

/// The consumer on batches of ten (six deliverable, one not JSON, one the
/// downstream rejects, one it fails, one it throttles), with faults on the
/// quarantine and backoff calls.
async fn soak_consumer(aws: &Aws, invocations: usize) -> Result<Report, BoxError> {
    let quarantine_url = aws.create_queue(&unique("soak-quarantine")).await?;
    let source_url = aws.create_queue(&unique("soak-source")).await?;
    let arn = aws.queue_arn(&source_url).await?;
    let downstream = Downstream::start().await?;
    let proxy = FaultProxy::start(&std::env::var("AWS_ENDPOINT_URL_SQS")?).await?;
    let url = downstream.url();
    let host = LambdaHost::start(
        &binary("batch-consumer")?,
        &[
            ("DOWNSTREAM_URL", url.as_str()),
            ("QUARANTINE_QUEUE_URL", quarantine_url.as_str()),
            ("API_CALL_TIMEOUT_MS", CALL_TIMEOUT_MS),
            ("AWS_ENDPOINT_URL_SQS", proxy.url()),
        ],
    )
    .await?;
    let mut report = Report { function: "batch-consumer", invocations, ..Report::default() };
    let mut expected: HashMap<String, Class> = HashMap::new();
    let mut retried: HashMap<String, usize> = HashMap::new();
    // Drained every 100 invocations: moto slows down as a queue grows.
    let mut quarantined: HashMap<String, usize> = HashMap::new();
    let started = Instant::now();
    for i in 1..=invocations {
        proxy.clear();
        let (poison_quarantined, rejected_quarantined) = inject_faults(&proxy, i);
        if i % 10 >= 7 || i % 100 == 99 {
            report.faults_injected += 1;
        }
        let promised = Promised { poison_quarantined, rejected_quarantined };
        let records = batch_of_ten(i, &arn, promised, &mut expected);
        let outcome = host.invoke(&json!({ "Records": records }), INVOCATION_TIMEOUT).await;
        match outcome.batch_item_failures() {
            Some(failures) => {
                for id in failures {
                    *retried.entry(id).or_default() += 1;
                }
            }
            None => {
                let other = outcome;
                // The whole batch comes back: counted as retried, but it is not what was promised.
                eprintln!("soak: consumer invocation {i}: {other:?}");
                report.misreported += 10;
            }
        }
        report.sample(&host, i);
        if i % 100 == 0 {
            for id in aws.drain_quarantined(&quarantine_url).await? {
                *quarantined.entry(id).or_default() += 1;
            }
        }
    }
    report.finish(&host, started);
    for id in aws.drain_quarantined(&quarantine_url).await? {
        *quarantined.entry(id).or_default() += 1;
    }

    let mut delivered: HashMap<String, usize> = HashMap::new();
    for request in downstream.received() {
        *delivered.entry(request.idempotency_key.unwrap_or_default()).or_default() += 1;
    }
    check_outcomes(&mut report, &expected, [&retried, &quarantined, &delivered]);
    Ok(report)
}

/// The faults of invocation `i` (entry 0 of the quarantine write is the
/// poison record, entry 1 the rejected one), and whether each of those two
/// quarantine writes is still promised to land.
fn inject_faults(proxy: &FaultProxy, i: usize) -> (bool, bool) {
    match i % 10 {
        _ if i % 100 == 99 => {
            proxy.inject(Rule::new("SendMessageBatch", Fault::Hang));
            (false, false)
        }
        7 => {
            proxy.inject(Rule::new("SendMessageBatch", Fault::FailEntries(vec![0])));
            (false, true)
        }
        8 => {
            proxy.inject(Rule::new("SendMessageBatch", Fault::Deny));
            (false, false)
        }
        9 => {
            proxy.inject(Rule::new("ChangeMessageVisibilityBatch", Fault::Throttle));
            (true, true)
        }
        _ => (true, true),
    }
}

/// Whether this invocation's quarantine writes land.
#[derive(Clone, Copy)]
struct Promised {
    poison_quarantined: bool,
    rejected_quarantined: bool,
}

/// Invocation `i`'s ten records, each id's promised class noted in `expected`.
fn batch_of_ten(
    i: usize,
    arn: &str,
    promised: Promised,
    expected: &mut HashMap<String, Class>,
) -> Vec<Value> {
    let Promised { poison_quarantined, rejected_quarantined } = promised;
    (0..10)
        .map(|j| {
            let id = format!("m{i}-{j}");
            let (body, class) = match j {
                5 => (
                    "not json".to_owned(),
                    if poison_quarantined { Class::Quarantined } else { Class::Retried },
                ),
                6 => (
                    work("invoice.reject", &id),
                    if rejected_quarantined { Class::Quarantined } else { Class::Retried },
                ),
                7 => (work("invoice.fail", &id), Class::Retried),
                8 => (work("invoice.throttle", &id), Class::Retried),
                _ => (work("invoice.create", &id), Class::Done),
            };
            expected.insert(id.clone(), class);
            sqs_record(&id, json!(body), arn)
        })
        .collect()
}

/// Every id: exactly one outcome, the one promised. `seen` counts, per id,
/// its retries, its quarantine records and its deliveries downstream.
fn check_outcomes(
    report: &mut Report,
    expected: &HashMap<String, Class>,
    seen: [&HashMap<String, usize>; 3],
) {
    // Every id: exactly one outcome, the one promised.
    let [retried, quarantined, delivered] = seen;
    for (id, class) in expected {
        report.counted += 1;
        let (r, q, d) = (
            retried.get(id).copied().unwrap_or(0),
            quarantined.get(id).copied().unwrap_or(0),
            delivered.get(id).copied().unwrap_or(0),
        );
        let observed = match (r, q, d) {
            (1, 0, _) => Some(Class::Retried),
            (0, 1, _) => Some(Class::Quarantined),
            (0, 0, 1) => Some(Class::Done),
            (0, 0, 0) => None,
            _ => {
                report.misreported += 1;
                eprintln!("soak: {id}: retried {r}, quarantined {q}, delivered {d}");
                continue;
            }
        };
        match observed {
            None => {
                report.lost += 1;
                eprintln!("soak: {id} has no outcome");
            }
            Some(observed) if observed != *class => {
                report.misreported += 1;
                eprintln!("soak: {id} expected {class:?}, observed {observed:?}");
            }
            Some(_) => {}
        }
    }
}

fn work(operation: &str, key: &str) -> String {
    json!({"schemaVersion": "1", "operation": operation, "tenantId": "t", "idempotencyKey": key})
        .to_string()
}
