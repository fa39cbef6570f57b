//! `make demo`: runs both functions against the emulators, through the Lambda
//! Runtime API, on the sample events, and prints what they did: the metrics
//! backlog-publisher put to CloudWatch, and batch-consumer's partial batch
//! responses and quarantine records, and the same batch redelivered with an
//! idempotency table; then sqs-worker draining a queue and
//! stopping gracefully on SIGTERM; last, the operator's CLI counting
//! quarantine records and replaying the fixable ones behind a canary.

use std::time::Duration;

use e2e_tests::downstream::Downstream;
use e2e_tests::fixtures::{Aws, BoxError, binary, profile_dir};
use e2e_tests::log_view::{readable, retry_causes};
use e2e_tests::process::Process;
use e2e_tests::runtime_host::{LambdaHost, Outcome};
use e2e_tests::template_defaults;

#[path = "demo/publisher.rs"]
mod publisher;
#[path = "demo/redelivery.rs"]
mod redelivery;

use publisher::publisher;
use redelivery::redelivered;

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let aws = Aws::from_env().await?;
    publisher(&aws).await?;
    consumer(&aws).await?;
    redelivered(&aws).await?;
    worker(&aws).await?;
    operator(&aws).await
}

/// The operator's part: records quarantined by sqs-worker (4 rejected by the
/// downstream, 2 not JSON), `stats`, then the downstream "fixed" and the
/// rejected ones replayed behind a canary while the worker runs again.
async fn operator(aws: &Aws) -> Result<(), BoxError> {
    println!("\n#### sqs-backpressure (the operator's CLI)");
    let downstream = Downstream::start().await?;
    let queue_url = aws.create_queue("orders-replay-work").await?;
    let quarantine_url = aws.create_queue("orders-replay-quarantine").await?;
    for (i, tenant) in ["tenant-a", "tenant-c", "tenant-c", "tenant-d"].iter().enumerate() {
        let body = serde_json::json!({"schemaVersion": "1", "operation": "invoice.reject",
            "tenantId": tenant, "idempotencyKey": format!("replay-{i}")});
        aws.sqs.send_message().queue_url(&queue_url).message_body(body.to_string()).send().await?;
    }
    for i in 0..2 {
        let body = format!("not json {i}");
        aws.sqs.send_message().queue_url(&queue_url).message_body(body).send().await?;
    }
    let worker_env = |downstream_url: &str| {
        vec![
            ("QUEUE_URL".to_owned(), queue_url.clone()),
            ("QUARANTINE_QUEUE_URL".to_owned(), quarantine_url.clone()),
            ("DOWNSTREAM_URL".to_owned(), downstream_url.to_owned()),
            ("RECEIVE_WAIT_SECONDS".to_owned(), "1".to_owned()),
            ("WORKER_POLLERS".to_owned(), "1".to_owned()),
            ("DRAIN_SECONDS".to_owned(), "3".to_owned()),
        ]
    };
    let every = Duration::from_millis(200);
    let run_worker = |downstream_url: String| {
        let env = worker_env(&downstream_url);
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        Process::start(&binary("sqs-worker")?, &env)
    };
    println!(
        "\n== {queue_url}: 4 invoice.reject requests (the downstream answers 422) and 2 bodies that are not JSON"
    );
    let mut worker = run_worker(downstream.url())?;
    aws.wait_for_counts(&quarantine_url, (6, 0), Duration::from_secs(60), every).await?;
    worker.signal("TERM").await?;
    worker.exit(Duration::from_secs(30)).await?;
    println!("== sqs-worker quarantined all 6 into {quarantine_url}");

    cli("sqs-backpressure stats", &["stats", "--queue-url", &quarantine_url]).await?;
    println!(
        "\n== The downstream's validation is fixed (invoice.reject → 204); sqs-worker runs again on it"
    );
    let mut worker = run_worker(downstream.fixed_url())?;
    let audit = profile_dir()?.join("demo-audit.jsonl").display().to_string();
    match std::fs::remove_file(&audit) {
        Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
            return Err(format!("cannot remove the last run's {audit}: {error}").into());
        }
        _ => {}
    }
    cli(
        "sqs-backpressure replay --error-code downstream_rejected --canary 1 --canary-wait 5 --rate 2 --yes",
        &["replay", "--queue-url", &quarantine_url, "--error-code", "downstream_rejected", "--canary", "1",
          "--canary-wait", "5", "--rate", "2", "--yes", "--audit", &audit],
    )
    .await?;
    aws.wait_for_counts(&queue_url, (0, 0), Duration::from_secs(60), every).await?;
    worker.signal("TERM").await?;
    worker.exit(Duration::from_secs(30)).await?;
    let delivered = downstream.received().iter().filter(|r| r.status == 204).count();
    println!("\n== Work queue drained; the downstream accepted {delivered} replayed request(s)");
    cli("sqs-backpressure stats (what is left)", &["stats", "--queue-url", &quarantine_url])
        .await?;
    println!("\n== The audit trail, {audit}:");
    let trail = std::fs::read_to_string(&audit)
        .map_err(|error| format!("cannot read the audit trail {audit}: {error}"))?;
    for line in trail.lines() {
        let line: serde_json::Value = serde_json::from_str(line)?;
        println!(
            "    {} {} {} → {} by {}",
            line["result"].as_str().unwrap_or_default(),
            line["originalMessageId"].as_str().unwrap_or_default(),
            line["errorCode"].as_str().unwrap_or_default(),
            line["newMessageId"].as_str().unwrap_or_default(),
            line["operator"].as_str().unwrap_or_default()
        );
    }
    Ok(())
}

/// Runs the CLI and prints what it printed; an error unless it exits 0.
async fn cli(title: &str, args: &[&str]) -> Result<(), BoxError> {
    println!("\n== $ {title}");
    let output =
        tokio::process::Command::new(binary("sqs-backpressure")?).args(args).output().await?;
    for line in String::from_utf8_lossy(&output.stdout)
        .lines()
        .chain(String::from_utf8_lossy(&output.stderr).lines())
    {
        println!("  | {line}");
    }
    if output.status.success() {
        Ok(())
    } else {
        Err(format!("sqs-backpressure {}: {}", args[0], output.status).into())
    }
}

async fn worker(aws: &Aws) -> Result<(), BoxError> {
    println!("\n#### sqs-worker");
    let downstream = Downstream::start().await?;
    let queue_url = aws.create_queue("orders-worker-queue").await?;
    let quarantine_url = aws.create_queue("orders-worker-quarantine").await?;
    let request = |operation: &str, key: String| {
        serde_json::json!({"schemaVersion": "1", "operation": operation, "tenantId": "tenant-a", "idempotencyKey": key})
            .to_string()
    };
    let mut bodies: Vec<String> =
        (0..20).map(|i| request("invoice.create", format!("worker-{i}"))).collect();
    bodies.extend((0..3).map(|i| format!("not json {i}")));
    for body in &bodies {
        aws.sqs.send_message().queue_url(&queue_url).message_body(body).send().await?;
    }
    println!("\n== Queue {queue_url}: 20 work requests and 3 poison messages");
    let url = downstream.url();
    let env = [
        ("QUEUE_URL", queue_url.as_str()),
        ("QUARANTINE_QUEUE_URL", quarantine_url.as_str()),
        ("DOWNSTREAM_URL", url.as_str()),
        ("DOWNSTREAM_TIMEOUT_MS", "30000"),
        ("RECEIVE_WAIT_SECONDS", "1"),
        // moto can hand one message to two concurrent receives; SQS does not.
        ("WORKER_POLLERS", "1"),
        ("VISIBILITY_TIMEOUT_SECONDS", "30"),
        ("DRAIN_SECONDS", "3"),
    ];
    println!("== Starting sqs-worker (WORKER_POLLERS=1, RECEIVE_WAIT_SECONDS=1, DRAIN_SECONDS=3)");
    let mut worker = Process::start(&binary("sqs-worker")?, &env)?;
    for (wanted, then) in [((0, 0), "drained"), ((0, 2), "2 slow messages in work")] {
        let every = Duration::from_millis(200);
        if let Err(error) =
            aws.wait_for_counts(&queue_url, wanted, Duration::from_secs(60), every).await
        {
            return Err(
                format!("the worker never had {then} ({error}): {:#?}", worker.lines()).into()
            );
        }
        println!("== Queue: {then}");
        if then == "drained" {
            for i in 0..2 {
                let body = request("invoice.slow", format!("slow-{i}"));
                aws.sqs.send_message().queue_url(&queue_url).message_body(body).send().await?;
            }
            println!("== Sent 2 work requests the downstream answers after 10 s");
        }
    }
    println!(
        "== SIGTERM, as ECS sends at scale-in: stop receiving, drain for 3 s, release the rest"
    );
    worker.signal("TERM").await?;
    let status = worker.exit(Duration::from_secs(30)).await?;
    println!("\n== sqs-worker's logs");
    for line in worker.lines() {
        println!("  | {}", readable(&line));
    }
    match status.code() {
        Some(code) => println!("\n  exit code: {code}"),
        None => println!("\n  ended by a signal, not an exit"),
    }
    let (visible, in_flight) = aws.counts(&queue_url).await?;
    println!(
        "  work queue afterwards: {visible} visible (released for another worker), {in_flight} in flight"
    );
    let quarantined = aws.quarantined(&quarantine_url, 3).await?;
    println!("  quarantine queue: {} records", quarantined.len());
    println!("  downstream: {} requests answered", downstream.received().len());
    Ok(())
}

/// In Lambda the functions log JSON (the template sets `LogFormat: JSON`);
/// here one plain line per event is easier to read.
const READABLE_LOGS: (&str, &str) = ("AWS_LAMBDA_LOG_FORMAT", "Text");

fn sample(name: &str) -> Result<serde_json::Value, BoxError> {
    let path = format!("{}/../events/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path)
        .map_err(|error| format!("cannot read the sample event {path}: {error}"))?;
    Ok(serde_json::from_str(&text).map_err(|error| format!("{path} is not JSON: {error}"))?)
}

async fn consumer(aws: &Aws) -> Result<(), BoxError> {
    println!("\n#### batch-consumer");
    let downstream = Downstream::start().await?;
    let quarantine_url = aws.create_queue("orders-quarantine").await?;
    let url = downstream.url();
    println!(
        "\n== A local downstream at {url}: *.reject → 422, *.throttle → 429, *.fail → 503, else 204"
    );
    println!("== Quarantine queue {quarantine_url}");
    let template = template_defaults::environment("ConsumerFunction")?;
    let mut env: Vec<(&str, &str)> =
        template.iter().map(|(name, value)| (name.as_str(), value.as_str())).collect();
    env.extend([
        ("DOWNSTREAM_URL", url.as_str()),
        ("QUARANTINE_QUEUE_URL", quarantine_url.as_str()),
        READABLE_LOGS,
    ]);
    for name in ["sqs-standard.json", "sqs-fifo.json"] {
        let event = sample(name)?;
        println!("\n== Invoking batch-consumer with events/{name} (its logs follow)");
        let host = LambdaHost::start(&binary("batch-consumer")?, &env).await?;
        let outcome = host.invoke(&event, Duration::from_secs(30)).await;
        let Outcome::Response(body) = outcome else {
            return Err(
                format!("the consumer did not answer with a batch response: {outcome:?}").into()
            );
        };
        println!("\n  response: {body}");
        let records = event["Records"].as_array().cloned().unwrap_or_default();
        let failed: Vec<&str> = body["batchItemFailures"]
            .as_array()
            .map(|f| f.iter().filter_map(|f| f["itemIdentifier"].as_str()).collect())
            .unwrap_or_default();
        let quarantined: Vec<serde_json::Value> = aws
            .receive_all(&quarantine_url, records.len())
            .await?
            .iter()
            .filter_map(|m| serde_json::from_str(m.body()?).ok())
            .collect();
        let logs = host.logs();
        let causes = retry_causes(logs.iter().map(String::as_str));
        println!("\n  outcome per message (retried ones are in batchItemFailures):");
        for record in &records {
            let id = record["messageId"].as_str().unwrap_or_default();
            let work: serde_json::Value =
                serde_json::from_str(record["body"].as_str().unwrap_or_default())
                    .unwrap_or(serde_json::Value::Null);
            let group = record["attributes"]["MessageGroupId"]
                .as_str()
                .map(|g| format!(" [{g}]"))
                .unwrap_or_default();
            let outcome = if failed.contains(&id) {
                let cause = causes.get(id).copied().unwrap_or("see the logs above");
                format!("retry ({cause})")
            } else if let Some(q) = quarantined.iter().find(|q| q["messageId"] == id) {
                format!("quarantined: {}", q["errorCode"].as_str().unwrap_or_default())
            } else {
                "done (delivered)".to_owned()
            };
            let operation = work["operation"].as_str().unwrap_or("(not a work request)");
            println!("    {id}{group} {operation:<20} → {outcome}");
        }
        println!("\n  quarantine records read back from the queue:");
        for record in &quarantined {
            println!(
                "    {} errorCode={} tenantId={} receiveCount={} firstSeen={} messageGroupId={}\n      errorDetail: {}",
                record["messageId"].as_str().unwrap_or_default(),
                record["errorCode"],
                record["tenantId"],
                record["receiveCount"],
                record["firstSeen"],
                record.get("messageGroupId").unwrap_or(&serde_json::Value::Null),
                record["errorDetail"].as_str().unwrap_or_default(),
            );
        }
    }
    println!("\n== Deliveries the downstream received");
    for request in downstream.received() {
        println!(
            "    HTTP {} Idempotency-Key={} X-Tenant-Id={} X-Correlation-Id={}",
            request.status,
            request.idempotency_key.unwrap_or_default(),
            request.tenant_id.unwrap_or_default(),
            request.correlation_id.unwrap_or_default()
        );
    }
    Ok(())
}
