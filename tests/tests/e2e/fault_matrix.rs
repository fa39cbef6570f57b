//! The fault matrix: every AWS operation each function calls × {none, deny,
//! throttle, 500, hang, partial batch failure where it applies}, each cell a
//! fresh function process whose calls pass through the fault proxy. Every
//! cell's observed outcome is asserted, printed as a table, and must appear
//! in the "Failure behaviour" table (docs/failure-behaviour.md).

use std::time::Duration;

use e2e_tests::downstream::Downstream;
use e2e_tests::fault_proxy::{Fault, FaultProxy, Rule};
use e2e_tests::fixtures::{Aws, PublisherTarget, binary, sqs_record, unique};
use e2e_tests::runtime_host::{LambdaHost, Outcome};
use futures::StreamExt;
use serde_json::{Value, json};

const NAMESPACE: &str = "SqsBackpressureFaultMatrix";
/// Each call's budget: an attempt gets half of it, which moto answers within
/// even while other tests' stacks keep it busy.
const CALL_TIMEOUT_MS: &str = "5000";
/// The invocation's own timeout: every cell must answer well before it.
const INVOCATION_TIMEOUT: Duration = Duration::from_secs(15);

/// The faults of a call; a write's include its answer lost once after it
/// landed (the SDK's retry then lands too).
fn faults(batch: bool, write: bool) -> Vec<Option<Fault>> {
    let mut faults = vec![
        None,
        Some(Fault::Deny),
        Some(Fault::Throttle),
        Some(Fault::ServerError),
        Some(Fault::Hang),
    ];
    if batch {
        faults.push(Some(Fault::FailEntries(vec![0])));
    }
    if write {
        faults.push(Some(Fault::LoseAnswer));
    }
    faults
}

/// A rule for `fault`: a lost answer only once, so that the retry is answered.
fn rule(operation: &str, fault: &Fault) -> Rule {
    let rule = Rule::new(operation, fault.clone());
    if *fault == Fault::LoseAnswer { rule.times(1) } else { rule }
}

fn fault_name(fault: Option<&Fault>) -> &'static str {
    fault.map_or("none", Fault::name)
}

/// One observed cell, as a row of the failure-behaviour table, with what
/// went against the table's promise (every cell runs, and all such are
/// reported together, before the table is compared with the docs).
struct Row {
    function: &'static str,
    operation: &'static str,
    fault: &'static str,
    outcome: String,
    broken: Vec<String>,
}

impl Row {
    fn markdown(&self) -> String {
        format!("| {} | {} | {} | {} |", self.function, self.operation, self.fault, self.outcome)
    }
}

/// Invokes, and says so when the answer came after the invocation's deadline
/// (the host itself waits a little longer, to tell late from never).
async fn answered_in_time(host: &LambdaHost, event: &Value, broken: &mut Vec<String>) -> Outcome {
    let (outcome, took) =
        host.invoke_timed(hyper::body::Bytes::from(event.to_string()), INVOCATION_TIMEOUT).await;
    if let Some(took) = took.filter(|took| *took >= INVOCATION_TIMEOUT) {
        broken.push(format!("answered after the deadline ({took:?}): {outcome:?}"));
    }
    outcome
}

/// Notes the outcome when it is not the one expected.
fn compare(outcome: &str, expected: &str, broken: &mut Vec<String>) {
    if outcome != expected {
        broken.push(format!("observed \"{outcome}\", expected \"{expected}\""));
    }
}

// ---------------------------------------------------------------- publisher

#[derive(Clone, Copy, PartialEq)]
enum PublisherOp {
    WorkQueue,
    DeadLetterQueue,
    DescribeServices,
    PutMetricData,
}

impl PublisherOp {
    const ALL: [Self; 4] =
        [Self::WorkQueue, Self::DeadLetterQueue, Self::DescribeServices, Self::PutMetricData];

    fn label(self) -> &'static str {
        match self {
            Self::WorkQueue => "GetQueueAttributes (work queue)",
            Self::DeadLetterQueue => "GetQueueAttributes (dead-letter queue)",
            Self::DescribeServices => "DescribeServices",
            Self::PutMetricData => "PutMetricData",
        }
    }

    /// What docs/failure-behaviour.md promises for this call failing in any way.
    fn expected(self) -> &'static str {
        match self {
            Self::WorkQueue | Self::DescribeServices => {
                "TargetsNotPublished; faulted target: nothing published; other target: published"
            }
            Self::DeadLetterQueue => {
                "DeadLetterQueueUnreadable; faulted target: published without DlqBacklog; other target: published"
            }
            Self::PutMetricData => {
                "PutMetricDataFailed; faulted target: nothing published; other target: nothing published"
            }
        }
    }
}

/// A target whose queue holds 8 messages for 2 tasks; with a dead-letter
/// queue holding 3 when `with_dlq`.
async fn publisher_target(aws: &Aws, with_dlq: bool) -> PublisherTarget {
    let cluster = unique("mxc");
    let target = PublisherTarget::create(aws, &cluster, 8, 2).await.unwrap();
    if !with_dlq {
        return target;
    }
    let dlq = aws.create_queue(&format!("{}-dlq", target.queue)).await.unwrap();
    aws.send_messages(&dlq, 3).await.unwrap();
    let policy = format!(
        r#"{{"deadLetterTargetArn":"{}","maxReceiveCount":"5"}}"#,
        aws.queue_arn(&dlq).await.unwrap()
    );
    aws.sqs
        .set_queue_attributes()
        .queue_url(&target.queue_url)
        .attributes(aws_sdk_sqs::types::QueueAttributeName::RedrivePolicy, policy)
        .send()
        .await
        .unwrap();
    target
}

/// What was published for a target, in the table's words.
async fn published(aws: &Aws, target: &PublisherTarget) -> &'static str {
    let has = |metric: &'static str| async move {
        !target.metric(aws, NAMESPACE, metric).await.unwrap().is_empty()
    };
    match (has("BacklogPerTask").await, has("ScalingLoad").await, has("DlqBacklog").await) {
        (false, false, false) => "nothing published",
        (true, true, true) => "published with DlqBacklog",
        (true, true, false) => "published without DlqBacklog",
        _ => "partly published: BacklogPerTask and ScalingLoad not together",
    }
}

async fn publisher_cell(aws: &Aws, op: PublisherOp, fault: Option<Fault>) -> Row {
    let faulted = publisher_target(aws, true).await;
    let other = publisher_target(aws, false).await;
    let proxies = FaultProxy::for_each_endpoint().await.unwrap();
    if let Some(fault) = &fault {
        let (proxy, rule) = match op {
            PublisherOp::WorkQueue => (
                0,
                Rule::new("GetQueueAttributes", fault.clone())
                    .when_body_contains(&format!("{}\"", faulted.queue)),
            ),
            PublisherOp::DeadLetterQueue => (
                0,
                Rule::new("GetQueueAttributes", fault.clone())
                    .when_body_contains(&format!("{}-dlq", faulted.queue)),
            ),
            PublisherOp::DescribeServices => (
                1,
                Rule::new("DescribeServices", fault.clone()).when_body_contains(&faulted.cluster),
            ),
            PublisherOp::PutMetricData => (2, rule("PutMetricData", fault)),
        };
        proxies[proxy].1.inject(rule);
    }
    let targets = format!("[{},{}]", faulted.json(), other.json());
    let mut env = vec![
        ("TARGETS", targets.as_str()),
        ("METRIC_NAMESPACE", NAMESPACE),
        ("API_CALL_TIMEOUT_MS", CALL_TIMEOUT_MS),
        // The load on, so that a failed read is seen to publish none of it either.
        ("TARGET_LOAD_PERCENT", "80"),
        ("CONSUMER_CONCURRENCY", "32"),
        ("AVG_PROCESSING_SECONDS", "1"),
    ];
    env.extend(proxies.iter().map(|(name, proxy)| (*name, proxy.url())));
    let host = LambdaHost::start(&binary("backlog-publisher").unwrap(), &env).await.unwrap();
    let event: Value = serde_json::from_str(include_str!("../../../events/schedule.json")).unwrap();
    let mut broken = Vec::new();
    let answer = match answered_in_time(&host, &event, &mut broken).await {
        Outcome::Response(_) => "success".to_owned(),
        Outcome::Error(error) => error["errorType"].as_str().unwrap_or("?").to_owned(),
        other => format!("no answer before the deadline ({other:?})"),
    };
    let outcome = format!(
        "{answer}; faulted target: {}; other target: {}",
        published(aws, &faulted).await,
        match published(aws, &other).await {
            "nothing published" => "nothing published",
            _ => "published",
        }
    );
    let expected = match fault {
        // The retry is answered; CloudWatch holds the sample twice, which
        // leaves its average, minimum and maximum as they were.
        None | Some(Fault::LoseAnswer) => {
            "success; faulted target: published with DlqBacklog; other target: published"
        }
        Some(_) => op.expected(),
    };
    compare(&outcome, expected, &mut broken);
    Row {
        function: "backlog-publisher",
        operation: op.label(),
        fault: fault_name(fault.as_ref()),
        outcome,
        broken,
    }
}

// ---------------------------------------------------------------- consumer

#[derive(Clone, Copy, PartialEq)]
enum ConsumerOp {
    Quarantine,
    Visibility,
}

impl ConsumerOp {
    fn label(self) -> &'static str {
        match self {
            Self::Quarantine => "SendMessageBatch (quarantine)",
            Self::Visibility => "ChangeMessageVisibilityBatch (backoff)",
        }
    }

    fn operation(self) -> &'static str {
        match self {
            Self::Quarantine => "SendMessageBatch",
            Self::Visibility => "ChangeMessageVisibilityBatch",
        }
    }

    fn expected(self, fault: Option<&Fault>) -> &'static str {
        match (self, fault) {
            (Self::Quarantine, Some(Fault::FailEntries(_))) => {
                "done: ok; quarantined: poison-b; retried: poison-a, failing"
            }
            // Landed twice: two records of each; the replay sends each once.
            (Self::Visibility, _) | (Self::Quarantine, None | Some(Fault::LoseAnswer)) => {
                "done: ok; quarantined: poison-a, poison-b; retried: failing"
            }
            (Self::Quarantine, Some(_)) => {
                "done: ok; quarantined: none; retried: poison-a, poison-b, failing"
            }
        }
    }
}

async fn consumer_cell(aws: &Aws, op: ConsumerOp, fault: Option<Fault>) -> Row {
    let quarantine_url = aws.create_queue(&unique("mxq")).await.unwrap();
    let source_url = aws.create_queue(&unique("mxsrc")).await.unwrap();
    let arn = aws.queue_arn(&source_url).await.unwrap();
    let downstream = Downstream::start().await.unwrap();
    let proxies = FaultProxy::for_each_endpoint().await.unwrap();
    if let Some(fault) = &fault {
        proxies[0].1.inject(rule(op.operation(), fault));
    }
    let work = |operation: &str, key: &str| {
        json!({"schemaVersion": "1", "operation": operation, "tenantId": "t", "idempotencyKey": key})
            .to_string()
    };
    let event = json!({"Records": [
        sqs_record("ok", json!(work("invoice.create", "k1")), &arn),
        sqs_record("poison-a", json!("not json a"), &arn),
        sqs_record("poison-b", json!("not json b"), &arn),
        sqs_record("failing", json!(work("invoice.fail", "k2")), &arn),
    ]});
    let url = downstream.url();
    let mut env = vec![
        ("DOWNSTREAM_URL", url.as_str()),
        ("QUARANTINE_QUEUE_URL", quarantine_url.as_str()),
        ("API_CALL_TIMEOUT_MS", CALL_TIMEOUT_MS),
    ];
    env.extend(proxies.iter().map(|(name, proxy)| (*name, proxy.url())));
    let host = LambdaHost::start(&binary("batch-consumer").unwrap(), &env).await.unwrap();
    let mut broken = Vec::new();
    let outcome = answered_in_time(&host, &event, &mut broken).await;
    let retried = outcome.batch_item_failures().unwrap_or_else(|| {
        broken.push(format!("no batch response: {outcome:?}"));
        Vec::new()
    });
    let quarantined: Vec<String> = aws
        .quarantined(&quarantine_url, 2)
        .await
        .unwrap()
        .iter()
        .map(|q| q.message_id().to_owned())
        .collect();
    let ids = ["ok", "poison-a", "poison-b", "failing"];
    let list = |pick: &dyn Fn(&str) -> bool| {
        let picked: Vec<&str> = ids.iter().copied().filter(|id| pick(id)).collect();
        if picked.is_empty() { "none".to_owned() } else { picked.join(", ") }
    };
    let is_retried = |id: &str| retried.iter().any(|r| r == id);
    let is_quarantined = |id: &str| quarantined.iter().any(|q| q == id);
    let delivered =
        downstream.received().iter().any(|r| r.idempotency_key.as_deref() == Some("k1"));
    let observed = format!(
        "done: {}; quarantined: {}; retried: {}",
        list(&|id| !is_retried(id) && !is_quarantined(id) && (id != "ok" || delivered)),
        list(&|id| is_quarantined(id) && !is_retried(id)),
        list(&|id| is_retried(id)),
    );
    // Every message has exactly one outcome.
    for id in ids.into_iter().filter(|id| is_retried(id) && is_quarantined(id)) {
        broken.push(format!("{id} both retried and quarantined"));
    }
    if proxies[0].1.counts().get(op.operation()).copied().unwrap_or(0) == 0 {
        broken.push(format!("{} was never called", op.operation()));
    }
    compare(&observed, op.expected(fault.as_ref()), &mut broken);
    Row {
        function: "batch-consumer",
        operation: op.label(),
        fault: fault_name(fault.as_ref()),
        outcome: observed,
        broken,
    }
}

// ---------------------------------------------------------------- the matrix

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_aws_call_under_every_fault() {
    let aws = Aws::from_env().await.unwrap();
    let mut cells: Vec<futures::future::BoxFuture<'_, Row>> = Vec::new();
    for op in PublisherOp::ALL {
        for fault in faults(false, op == PublisherOp::PutMetricData) {
            cells.push(Box::pin(publisher_cell(&aws, op, fault)));
        }
    }
    for op in [ConsumerOp::Quarantine, ConsumerOp::Visibility] {
        for fault in faults(true, true) {
            cells.push(Box::pin(consumer_cell(&aws, op, fault)));
        }
    }
    let mut rows: Vec<Row> = futures::stream::iter(cells).buffered(8).collect().await;
    rows.sort_by_key(|row| (row.function, row.operation));

    let mut table =
        String::from("| Function | AWS call | Fault | What happens |\n| --- | --- | --- | --- |\n");
    for row in &rows {
        table.push_str(&row.markdown());
        table.push('\n');
    }
    println!("\nFault matrix ({} cells):\n{table}", rows.len());
    let broken: Vec<String> = rows
        .iter()
        .flat_map(|row| {
            row.broken
                .iter()
                .map(|what| format!("{}, {}, {}: {what}", row.function, row.operation, row.fault))
        })
        .collect();
    assert!(broken.is_empty(), "cells against the table's promise:\n{}", broken.join("\n"));

    let readme = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/failure-behaviour.md"
    ))
    .unwrap();
    let missing: Vec<String> =
        rows.iter().map(Row::markdown).filter(|line| !readme.contains(line.as_str())).collect();
    assert!(
        missing.is_empty(),
        "docs/failure-behaviour.md's table lacks these observed rows:\n{}",
        missing.join("\n")
    );
}
