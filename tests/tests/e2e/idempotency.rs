//! Idempotency end to end: batch-consumer (through the Lambda Runtime API)
//! and sqs-worker as processes, against moto's DynamoDB and SQS. One
//! downstream POST per idempotency key, whatever redelivers the message.

use std::time::Duration;

use e2e_tests::downstream::Downstream;
use e2e_tests::fault_proxy::{Fault, FaultProxy, Rule};
use e2e_tests::fixtures::{Aws, Sqs, binary, sqs_record, unique};
use e2e_tests::idempotency_table::Table;
use e2e_tests::process::field;
use e2e_tests::runtime_host::{LambdaHost, Outcome};
use serde_json::{Value, json};

use crate::worker_setup::{SETTLED, request, setup, setup_on};

const TIMEOUT: Duration = Duration::from_secs(12);

struct Lambda {
    aws: Aws,
    downstream: Downstream,
    table: Table,
    quarantine_url: String,
    arn: String,
}

async fn lambda() -> Lambda {
    let aws = Aws::from_env().await.unwrap();
    let quarantine_url = aws.create_queue(&unique("quarantine")).await.unwrap();
    let source = aws.create_queue(&unique("work")).await.unwrap();
    let arn = aws.queue_arn(&source).await.unwrap();
    let (downstream, table) = (Downstream::start().await.unwrap(), Table::create().await.unwrap());
    Lambda { aws, downstream, table, quarantine_url, arn }
}

impl Lambda {
    /// One invocation in a fresh function process (a new execution environment).
    async fn invoke(&self, records: &[(&str, String)], extra: &[(&str, &str)]) -> Outcome {
        let url = self.downstream.url();
        let mut env = vec![
            ("DOWNSTREAM_URL", url.as_str()),
            ("QUARANTINE_QUEUE_URL", self.quarantine_url.as_str()),
            ("IDEMPOTENCY_TABLE", self.table.name.as_str()),
        ];
        env.extend_from_slice(extra);
        let event = json!({"Records": records
            .iter()
            .map(|(id, body)| sqs_record(id, json!(body), &self.arn))
            .collect::<Vec<Value>>()});
        let host = LambdaHost::start(&binary("batch-consumer").unwrap(), &env).await.unwrap();
        host.invoke(&event, TIMEOUT).await
    }

    fn posts(&self, key: &str) -> usize {
        let received = self.downstream.received();
        received.iter().filter(|r| r.idempotency_key.as_deref() == Some(key)).count()
    }
}

fn failures(outcome: &Outcome) -> Vec<String> {
    outcome.batch_item_failures().unwrap_or_else(|| panic!("no batch response: {outcome:?}"))
}

#[tokio::test]
async fn a_batch_delivered_to_two_invocations_is_posted_once_per_key() {
    let lambda = lambda().await;
    // A key past DynamoDB's 2,048-byte partition key is stored by its hash.
    let long = "k".repeat(4_000);
    let records = [
        ("m-1", request("ledger.post", "k-1")),
        ("m-2", request("ledger.post", "k-2")),
        ("m-3", request("ledger.post", &long)),
    ];
    assert!(failures(&lambda.invoke(&records, &[]).await).is_empty());
    assert!(failures(&lambda.invoke(&records, &[]).await).is_empty(), "acknowledged as duplicates");
    assert_eq!((lambda.posts("k-1"), lambda.posts("k-2"), lambda.posts(&long)), (1, 1, 1));
    let stored = lambda.table.records().await.unwrap();
    let queue = lambda.arn.rsplit(':').next().unwrap();
    assert_eq!(stored[&format!("{queue}#k-1")]["status"], "COMPLETED");
}

#[tokio::test]
async fn the_same_key_with_another_body_is_quarantined_with_both_hashes() {
    let lambda = lambda().await;
    let first = request("ledger.post", "k-1");
    let second = request("ledger.other", "k-1");
    assert!(failures(&lambda.invoke(&[("m-1", first.clone())], &[]).await).is_empty());
    assert!(failures(&lambda.invoke(&[("m-2", second.clone())], &[]).await).is_empty());
    assert_eq!(lambda.posts("k-1"), 1, "the second body is never processed");
    let quarantined = lambda.aws.quarantined(&lambda.quarantine_url, 1).await.unwrap();
    assert_eq!(quarantined.len(), 1);
    let record = quarantined[0].record.to_string();
    assert!(record.contains("idempotency_key_reused"), "{record}");
    for body in [&first, &second] {
        let hash = backpressure_batch::idempotency::body_hash(body);
        assert!(record.contains(&hash), "{hash} not in {record}");
    }
}

/// Every DynamoDB call the consumer makes, under every fault: a message is
/// never processed without a confirmed claim, and none is lost.
#[tokio::test]
async fn every_store_call_under_every_fault_loses_nothing_and_repeats_nothing_unclaimed() {
    let upstream = std::env::var("AWS_ENDPOINT_URL_DYNAMODB").unwrap();
    let mut cells = Vec::new();
    for operation in ["BatchGetItem", "PutItem", "UpdateItem", "DeleteItem"] {
        let mut faults = vec![Fault::Deny, Fault::Throttle, Fault::ServerError, Fault::Hang];
        if operation == "BatchGetItem" {
            faults.push(Fault::UnprocessedKeys);
        } else {
            // A write that landed, its answer lost once: the SDK's retry
            // meets the consumer's own record, which it recognises.
            faults.push(Fault::LoseAnswer);
        }
        cells.extend(faults.into_iter().map(|fault| (operation, fault)));
    }
    let run = |(operation, fault): (&'static str, Fault)| {
        let upstream = upstream.clone();
        async move {
            let lambda = lambda().await;
            let proxy = FaultProxy::start(&upstream).await.unwrap();
            let rule = Rule::new(operation, fault.clone());
            proxy.inject(if fault == Fault::LoseAnswer { rule.times(1) } else { rule });
            let records = [
                ("ok", request("ledger.post", "k-ok")),
                ("failing", request("ledger.fail", "k-fail")),
            ];
            let env = [("AWS_ENDPOINT_URL_DYNAMODB", proxy.url()), ("API_CALL_TIMEOUT_MS", "1500")];
            let failed = failures(&lambda.invoke(&records, &env).await);
            let calls = proxy.counts().get(operation).copied().unwrap_or(0);
            assert!(calls > 0, "{operation} {}: never called", fault.name());
            let cell = format!("{operation} {}", fault.name());
            if operation == "PutItem" && fault != Fault::LoseAnswer {
                // No claim confirmed: nothing processed, everything retried.
                assert_eq!(failed, ["ok", "failing"], "{cell}");
                assert_eq!((lambda.posts("k-ok"), lambda.posts("k-fail")), (0, 0), "{cell}");
                proxy.clear();
                assert_eq!(failures(&lambda.invoke(&records, &env).await), ["failing"], "{cell}");
                assert_eq!(
                    lambda.posts("k-ok"),
                    1,
                    "{cell}: processed once when the store is back"
                );
            } else {
                // The claim was confirmed: processed once; only the 503 is retried.
                assert_eq!(failed, ["failing"], "{cell}");
                assert_eq!((lambda.posts("k-ok"), lambda.posts("k-fail")), (1, 1), "{cell}");
            }
        }
    };
    // Four at a time: each cell is a function process and a table.
    let mut pending = futures::stream::iter(cells.into_iter().map(run)).buffer_unordered(4);
    use futures::StreamExt;
    while pending.next().await.is_some() {}
}

#[tokio::test]
async fn two_workers_given_each_message_twice_post_once_per_key() {
    let setup = setup().await;
    let table = Table::create().await.unwrap();
    let bodies: Vec<String> =
        (0..10).flat_map(|i| vec![request("ledger.post", &format!("k-{i}")); 2]).collect();
    setup.send(&bodies).await;
    let env = [("IDEMPOTENCY_TABLE", table.name.as_str())];
    let workers = [setup.start(&env), setup.start(&env)];
    setup.wait_until_empty().await;
    let delivered = setup.delivered();
    assert_eq!(delivered.len(), 10, "{delivered:?}");
    assert!(delivered.values().all(|&posts| posts == 1), "{delivered:?}");
    drop(workers);
}

/// Leases shorter than the work, and no heartbeat (every visibility change
/// denied): SQS hands each message to the second worker while the first is
/// still working. The claim, renewed in DynamoDB, keeps it from being done twice.
#[tokio::test]
async fn a_message_redelivered_mid_work_to_another_worker_is_not_done_twice_on_moto() {
    redelivered_mid_work(Sqs::Moto).await;
}

#[tokio::test]
async fn a_message_redelivered_mid_work_to_another_worker_is_not_done_twice_on_localstack() {
    redelivered_mid_work(Sqs::LocalStack).await;
}

#[tokio::test]
async fn a_message_redelivered_mid_work_to_another_worker_is_not_done_twice_on_fauxqs() {
    redelivered_mid_work(Sqs::Fauxqs).await;
}

async fn redelivered_mid_work(sqs: Sqs) {
    let setup = setup_on(sqs, false).await;
    let table = Table::create().await.unwrap();
    let proxy = FaultProxy::start(&setup.sqs.endpoint().unwrap()).await.unwrap();
    proxy.inject(Rule::new("ChangeMessageVisibilityBatch", Fault::Deny));
    setup.send(&[request("ledger.slow", "k-a"), request("ledger.slow", "k-b")]).await;
    let env = [
        ("IDEMPOTENCY_TABLE", table.name.as_str()),
        ("VISIBILITY_TIMEOUT_SECONDS", "3"),
        ("DOWNSTREAM_TIMEOUT_MS", "20000"),
        ("AWS_ENDPOINT_URL_SQS", proxy.url()),
    ];
    let first = setup.start(&env);
    setup.wait_in_flight(2).await;
    let second = setup.start(&env);
    setup.wait_until_empty().await;
    assert_eq!(
        setup.delivered().into_iter().collect::<Vec<_>>(),
        [("k-a".into(), 1), ("k-b".into(), 1)]
    );
    let contended = second
        .lines()
        .iter()
        .chain(first.lines().iter())
        .any(|l| l.contains("claimed by another consumer"));
    assert!(contended, "a redelivered copy met the other worker's claim");
    let duplicate = second
        .lines()
        .iter()
        .chain(first.lines().iter())
        .any(|l| l.contains("duplicate: its idempotency key"));
    assert!(duplicate, "and was acknowledged as a duplicate once the first finished");
}

/// A worker killed mid-work: its claim lapses with its lease (no hour-long
/// "in progress"), and the redelivery is processed once.
#[tokio::test]
async fn a_claim_of_a_killed_worker_lapses_with_its_lease_and_the_redelivery_runs_once_on_moto() {
    killed_mid_work(Sqs::Moto).await;
}

#[tokio::test]
async fn a_claim_of_a_killed_worker_lapses_with_its_lease_and_the_redelivery_runs_once_on_localstack()
 {
    killed_mid_work(Sqs::LocalStack).await;
}

#[tokio::test]
async fn a_claim_of_a_killed_worker_lapses_with_its_lease_and_the_redelivery_runs_once_on_fauxqs() {
    killed_mid_work(Sqs::Fauxqs).await;
}

async fn killed_mid_work(sqs: Sqs) {
    let setup = setup_on(sqs, false).await;
    let table = Table::create().await.unwrap();
    setup.send(&[request("ledger.hold", "k-kill")]).await;
    let env = [
        ("IDEMPOTENCY_TABLE", table.name.as_str()),
        ("VISIBILITY_TIMEOUT_SECONDS", "3"),
        ("DOWNSTREAM_TIMEOUT_MS", "60000"),
    ];
    let first = setup.start(&env);
    let give_up = tokio::time::Instant::now() + SETTLED;
    let first_holder = loop {
        let stored = table.records().await.unwrap();
        if let Some(record) = stored.values().find(|r| r["status"] == "INPROGRESS") {
            break record["holder"].clone();
        }
        assert!(tokio::time::Instant::now() < give_up, "never claimed");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    first.signal("KILL").await.unwrap();
    setup.downstream.release_held();
    let second = setup.start(&env);
    setup.wait_until_empty().await;
    let stored = table.records().await.unwrap();
    let record = stored.values().next().unwrap();
    assert_eq!(record["status"], "COMPLETED");
    assert_ne!(record["holder"], first_holder, "taken over once the killed worker's lease lapsed");
    let done: u64 = second
        .lines()
        .iter()
        .filter(|l| l.contains("batch summary"))
        .filter_map(|l| field(l, "done"))
        .sum();
    assert_eq!(done, 1, "the redelivery is processed once: {:#?}", second.lines());
}

/// A table that is not there stops the worker at start, naming it, instead
/// of retrying every message.
#[tokio::test]
async fn a_worker_given_a_missing_table_exits_naming_it() {
    let setup = setup().await;
    let mut worker = setup.start(&[("IDEMPOTENCY_TABLE", "no-such-table")]);
    let status = worker.exit(SETTLED).await.unwrap();
    assert_eq!(status.code(), Some(1), "{:#?}", worker.lines());
    let said = worker.lines().join("\n");
    assert!(said.contains("cannot read the idempotency table (IDEMPOTENCY_TABLE)"), "{said}");
    assert!(said.contains("no-such-table"), "{said}");
    assert!(said.contains("ResourceNotFoundException"), "{said}");
    assert!(setup.downstream.received().is_empty());
}

/// The deadline guard fires while a done message's completion write hangs
/// (a 6 s invocation, the default 5 s call timeout and 2 s margin): the
/// message was delivered, so it is acknowledged, and the unrecorded completion
/// is counted and said. Redelivering it could only POST a second time.
#[tokio::test]
async fn a_completion_cut_by_the_deadline_guard_leaves_the_done_message_acknowledged() {
    let lambda = lambda().await;
    let upstream = std::env::var("AWS_ENDPOINT_URL_DYNAMODB").unwrap();
    let proxy = FaultProxy::start(&upstream).await.unwrap();
    proxy.inject(Rule::new("UpdateItem", Fault::Hang));
    let event =
        json!({"Records": [sqs_record("m-1", json!(request("ledger.post", "k-1")), &lambda.arn)]});
    let env = [
        ("DOWNSTREAM_URL", lambda.downstream.url()),
        ("QUARANTINE_QUEUE_URL", lambda.quarantine_url.clone()),
        ("IDEMPOTENCY_TABLE", lambda.table.name.clone()),
        ("AWS_ENDPOINT_URL_DYNAMODB", proxy.url().to_owned()),
    ];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let host = LambdaHost::start(&binary("batch-consumer").unwrap(), &env).await.unwrap();
    let outcome = host.invoke(&event, Duration::from_secs(6)).await;
    assert_eq!(failures(&outcome), Vec::<String>::new(), "{:#?}", host.logs());
    assert_eq!(lambda.posts("k-1"), 1);
    assert!(proxy.counts().get("UpdateItem").copied().unwrap_or(0) > 0, "the completion was tried");
    let logs = host.logs().join("\n");
    assert!(logs.contains("the completion was not recorded"), "{logs}");
    assert!(logs.contains("\"IdempotencyStoreErrors\":1"), "{logs}");
}

/// The same race in sqs-worker at MESSAGE_TIMEOUT_SECONDS: the message whose
/// completion hangs is deleted once delivered, never delivered again.
#[tokio::test]
async fn a_worker_completion_cut_at_the_message_timeout_leaves_the_done_message_deleted() {
    let setup = setup().await;
    let table = Table::create().await.unwrap();
    let upstream = std::env::var("AWS_ENDPOINT_URL_DYNAMODB").unwrap();
    let proxy = FaultProxy::start(&upstream).await.unwrap();
    proxy.inject(Rule::new("UpdateItem", Fault::Hang));
    setup.send(&[request("ledger.post", "k-1")]).await;
    let env = [
        ("IDEMPOTENCY_TABLE", table.name.as_str()),
        ("AWS_ENDPOINT_URL_DYNAMODB", proxy.url()),
        ("MESSAGE_TIMEOUT_SECONDS", "6"),
        ("VISIBILITY_TIMEOUT_SECONDS", "10"),
    ];
    let mut worker = setup.start(&env);
    setup.wait_until_empty().await;
    worker.signal("TERM").await.unwrap();
    assert_eq!(worker.exit(SETTLED).await.unwrap().code(), Some(0), "{:#?}", worker.lines());
    assert_eq!(setup.delivered().get("k-1"), Some(&1), "{:#?}", worker.lines());
    let said = worker.lines().join("\n");
    assert!(said.contains("the completion was not recorded"), "{said}");
    assert!(!said.contains("retry_causes=deadline"), "{said}");
}
