//! The deployed wiring, run: each binary started with the environment read
//! back from the deployed function or task definition (nothing else but the
//! emulator's address), against the deployed queues, table and bucket.

use std::collections::BTreeMap;
use std::time::Duration;

use aws_sdk_sqs::types::MessageSystemAttributeName;
use backpressure_batch::idempotency::record_id;
use e2e_tests::downstream::Downstream;
use e2e_tests::fixtures::{Aws, binary, sqs_record};
use e2e_tests::idempotency_table::Table;
use e2e_tests::process::Process;
use e2e_tests::runtime_host::LambdaHost;
use serde_json::{Value, json};

use super::wiring::{Checks, Deployed};

const SETTLED: Duration = Duration::from_secs(60);
const GOOD: usize = 5;

/// Five work requests the downstream accepts, one body that is not JSON and
/// one request it rejects: five delivered, two quarantined.
fn bodies() -> Vec<String> {
    let request = |operation: &str, key: String| {
        json!({"schemaVersion": "1", "operation": operation, "tenantId": "t", "idempotencyKey": key})
            .to_string()
    };
    let mut bodies: Vec<String> =
        (0..GOOD).map(|i| request("ledger.post", format!("ok-{i}"))).collect();
    bodies.push("not json".into());
    bodies.push(request("ledger.reject", "rejected-0".into()));
    bodies
}

/// The emulator's clients: every API at the one endpoint the stack is on.
pub(crate) async fn clients(endpoint: &str) -> (Aws, aws_sdk_dynamodb::Client) {
    let aws = Aws::from_env().await.unwrap();
    let config = aws_config::load_from_env().await;
    let sqs = aws_sdk_sqs::config::Builder::from(&config).endpoint_url(endpoint).build();
    let s3 = aws_sdk_s3::config::Builder::from(&config)
        .endpoint_url(endpoint)
        .force_path_style(true)
        .build();
    let ddb = aws_sdk_dynamodb::config::Builder::from(&config).endpoint_url(endpoint).build();
    let aws = Aws {
        sqs: aws_sdk_sqs::Client::from_conf(sqs),
        s3: aws_sdk_s3::Client::from_conf(s3),
        ..aws
    };
    (aws, aws_sdk_dynamodb::Client::from_conf(ddb))
}

async fn send(aws: &Aws, url: &str) {
    aws.send_batch(url, &bodies()).await.unwrap();
}

/// A read-back environment as the pairs a process is started with.
pub(crate) fn pairs(env: &BTreeMap<String, String>) -> Vec<(&str, &str)> {
    env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

fn delivered(downstream: &Downstream) -> BTreeMap<String, usize> {
    let mut seen = BTreeMap::new();
    for received in downstream.received() {
        *seen.entry(received.idempotency_key.unwrap_or_default()).or_default() += 1;
    }
    seen
}

/// What every run must end with: the five delivered once each, the two in the
/// deployed quarantine queue with their reasons, the work queue empty, and
/// with idempotency on, a completed record for each of the five.
async fn outcomes(
    deployed: &Deployed<'_>,
    aws: &Aws,
    ddb: aws_sdk_dynamodb::Client,
    downstream: &Downstream,
    checks: &mut Checks,
) {
    let expected: BTreeMap<String, usize> = (0..GOOD).map(|i| (format!("ok-{i}"), 1)).collect();
    let mut seen = delivered(downstream);
    seen.remove("rejected-0");
    checks.eq("run: delivered once each", seen, expected);
    let quarantine = deployed.physical("QuarantineQueue");
    let records = aws.quarantined(&quarantine, 2).await.unwrap();
    let mut codes: Vec<String> =
        records.iter().map(|q| q.record["errorCode"].as_str().unwrap_or("?").to_owned()).collect();
    codes.sort();
    checks.eq(
        "run: quarantined in the deployed queue",
        codes,
        vec!["downstream_rejected".to_owned(), "invalid_json".to_owned()],
    );
    let work = deployed.work_queue_url();
    aws.wait_for_counts(&work, (0, 0), SETTLED, Duration::from_millis(250)).await.unwrap();
    checks.eq("run: work queue (visible, in flight)", aws.counts(&work).await.unwrap(), (0, 0));
    if deployed.plan.condition("HasIdempotency") {
        let table = Table { client: ddb, name: deployed.physical("IdempotencyTable") };
        let stored = table.records().await.unwrap();
        let queue = work.rsplit('/').next().unwrap();
        let completed = (0..GOOD)
            .filter(|i| {
                stored
                    .get(&record_id("", queue, &format!("ok-{i}")))
                    .is_some_and(|r| r["status"] == "COMPLETED")
            })
            .count();
        checks.eq("run: completed records in the deployed table", completed, GOOD);
    }
}

/// `count` messages received from `work`, and each as the record an event
/// source mapping would hand the function.
pub(crate) async fn received(
    aws: &Aws,
    work: &str,
    arn: &str,
    count: usize,
) -> (Vec<aws_sdk_sqs::types::Message>, Vec<Value>) {
    let mut messages = Vec::new();
    while messages.len() < count {
        let received = aws
            .sqs
            .receive_message()
            .queue_url(work)
            .max_number_of_messages(10)
            .message_system_attribute_names(MessageSystemAttributeName::All)
            .send()
            .await
            .unwrap();
        messages.extend(received.messages.unwrap_or_default());
    }
    let records: Vec<Value> = messages
        .iter()
        .map(|m| {
            let mut record = sqs_record(m.message_id().unwrap(), json!(m.body().unwrap()), arn);
            record["receiptHandle"] = json!(m.receipt_handle().unwrap());
            record
        })
        .collect();
    (messages, records)
}

/// batch-consumer under the Lambda Runtime API host with the deployed
/// function's environment, given what the mapping would hand it: the messages
/// received from the deployed work queue; what it does not report failed is
/// deleted, as the mapping does.
pub(crate) async fn lambda_consumer(
    deployed: &Deployed<'_>,
    endpoint: &str,
    downstream: &Downstream,
    checks: &mut Checks,
) {
    let (aws, ddb) = clients(endpoint).await;
    let work = deployed.physical("WorkQueue");
    let arn = deployed.queue_attribute("WorkQueue", "QueueArn");
    send(&aws, &work).await;
    let (messages, records) = received(&aws, &work, &arn, bodies().len()).await;
    let env = deployed.function_environment("ConsumerFunction");
    let mut env = pairs(&env);
    for service in ["SQS", "S3", "DYNAMODB", "CLOUDWATCH"] {
        env.push((endpoint_variable(service), endpoint));
    }
    let host = LambdaHost::start(&binary("batch-consumer").unwrap(), &env).await.unwrap();
    let outcome = host.invoke(&json!({ "Records": records }), Duration::from_secs(60)).await;
    let failed =
        outcome.batch_item_failures().unwrap_or_else(|| panic!("no batch response: {outcome:?}"));
    checks.eq("run: batchItemFailures", failed.clone(), Vec::<String>::new());
    for message in
        messages.iter().filter(|m| !failed.iter().any(|f| Some(f.as_str()) == m.message_id()))
    {
        aws.sqs
            .delete_message()
            .queue_url(&work)
            .receipt_handle(message.receipt_handle().unwrap())
            .send()
            .await
            .unwrap();
    }
    outcomes(deployed, &aws, ddb, downstream, checks).await;
}

pub(crate) fn endpoint_variable(service: &str) -> &'static str {
    match service {
        "SQS" => "AWS_ENDPOINT_URL_SQS",
        "S3" => "AWS_ENDPOINT_URL_S3",
        "DYNAMODB" => "AWS_ENDPOINT_URL_DYNAMODB",
        _ => "AWS_ENDPOINT_URL_CLOUDWATCH",
    }
}

/// sqs-worker as a process with the deployed task definition's environment,
/// stopped with SIGTERM once the work is done, as ECS stops a task.
pub(crate) async fn worker(
    deployed: &Deployed<'_>,
    endpoint: &str,
    downstream: &Downstream,
    checks: &mut Checks,
) {
    let (aws, ddb) = clients(endpoint).await;
    send(&aws, &deployed.work_queue_url()).await;
    let env = deployed.container_environment();
    let mut env = pairs(&env);
    // A short long poll: the one an idle worker abandons at SIGTERM (below) ends sooner.
    env.push(("RECEIVE_WAIT_SECONDS", "1"));
    let mut worker = Process::start(&binary("sqs-worker").unwrap(), &env).unwrap();
    let give_up = tokio::time::Instant::now() + SETTLED;
    while delivered(downstream).len() < GOOD + 1 {
        assert!(tokio::time::Instant::now() < give_up, "never delivered: {:#?}", worker.lines());
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    aws.wait_for_counts(&deployed.work_queue_url(), (0, 0), SETTLED, Duration::from_millis(250))
        .await
        .unwrap();
    worker.signal("TERM").await.unwrap();
    let status = worker.exit(SETTLED).await.unwrap();
    checks.eq("run: worker exit after SIGTERM", status.code(), Some(0));
    // Idle at SIGTERM, the worker abandoned its long poll, which goes on at SQS
    // for the rest of its wait and would take the next messages sent (the
    // publisher's, below) to the gone connection for a visibility timeout.
    tokio::time::sleep(Duration::from_secs(2)).await;
    outcomes(deployed, &aws, ddb, downstream, checks).await;
}

/// backlog-publisher under the Lambda Runtime API host with the deployed
/// function's environment, on its scheduled event: BacklogPerTask lands in
/// CloudWatch under the dimensions the stack's output (and scaling policy) names.
pub(crate) async fn publisher(deployed: &Deployed<'_>, backlog: usize, checks: &mut Checks) {
    let aws = Aws::from_env().await.unwrap();
    let work = deployed.work_queue_url();
    let bodies: Vec<String> = (0..backlog).map(|i| format!("backlog {i}")).collect();
    aws.send_batch(&work, &bodies).await.unwrap();
    let env = deployed.function_environment("PublisherFunction");
    let env = pairs(&env);
    let host = LambdaHost::start(&binary("backlog-publisher").unwrap(), &env).await.unwrap();
    let event: Value =
        serde_json::from_str(include_str!("../../../../events/schedule.json")).unwrap();
    let outcome = host.invoke(&event, Duration::from_secs(60)).await;
    assert!(matches!(outcome, e2e_tests::runtime_host::Outcome::Response(_)), "{outcome:?}");
    let output = deployed.read["outputs"]["BacklogPerTaskDimensions"].as_str().unwrap().to_owned();
    let dimensions: Vec<(&str, &str)> =
        output.split(',').filter_map(|pair| pair.split_once('=')).collect();
    let namespace = deployed.plan.value("MetricNamespace");
    let points = aws
        .metric_averages(&namespace, "BacklogPerTask", &dimensions, Duration::from_secs(600))
        .await
        .unwrap();
    let cluster = deployed.plan.value("EcsClusterName");
    let service = deployed.plan.value("EcsServiceName");
    let described =
        aws.ecs.describe_services().cluster(&cluster).services(&service).send().await.unwrap();
    let running = described.services()[0].running_count();
    let what = format!(
        "run: BacklogPerTask under the output's dimensions ({backlog} messages, {running} tasks)"
    );
    let published = points.last().copied();
    if running > 0 {
        checks.eq(&what, published, Some(backlog as f64 / f64::from(running)));
    } else {
        // The zero guard: strictly above the target, so target tracking adds a task.
        let target: f64 = deployed.plan.value("TargetBacklogPerTask").parse().unwrap();
        checks.eq(
            &format!("{what}: above the target {target}"),
            published.is_some_and(|p| p > target),
            true,
        );
    }
}
