//! Idempotency end to end in sqs-worker processes, against the emulated SQS
//! implementations and each claim store: moto's DynamoDB and Redis.

use std::time::Duration;

use e2e_tests::fault_proxy::{Fault, FaultProxy, Rule};
use e2e_tests::fixtures::Sqs;
use e2e_tests::idempotency_table::{ClaimStore, StoreKind, Table};
use e2e_tests::process::field;

use crate::worker_setup::{SETTLED, request, setup, setup_on};

/// A store's variables as the worker's `extra` takes them.
fn with<'a>(
    store: &'a [(&'static str, String)],
    more: &[(&'a str, &'a str)],
) -> Vec<(&'a str, &'a str)> {
    let mut env: Vec<(&str, &str)> =
        store.iter().map(|(name, value)| (*name, value.as_str())).collect();
    env.extend_from_slice(more);
    env
}

#[tokio::test]
async fn two_workers_given_each_message_twice_post_once_per_key_with_dynamodb() {
    two_workers(StoreKind::DynamoDb).await;
}

#[tokio::test]
async fn two_workers_given_each_message_twice_post_once_per_key_with_redis() {
    two_workers(StoreKind::Redis).await;
}

async fn two_workers(kind: StoreKind) {
    let setup = setup().await;
    let store = ClaimStore::create(kind).await.unwrap().env();
    let bodies: Vec<String> =
        (0..10).flat_map(|i| vec![request("ledger.post", &format!("k-{i}")); 2]).collect();
    setup.send(&bodies).await;
    let env = with(&store, &[]);
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
    redelivered_mid_work(Sqs::Moto, StoreKind::DynamoDb).await;
}

#[tokio::test]
async fn a_message_redelivered_mid_work_to_another_worker_is_not_done_twice_on_localstack() {
    redelivered_mid_work(Sqs::LocalStack, StoreKind::DynamoDb).await;
}

#[tokio::test]
async fn a_message_redelivered_mid_work_to_another_worker_is_not_done_twice_on_fauxqs() {
    redelivered_mid_work(Sqs::Fauxqs, StoreKind::DynamoDb).await;
}

#[tokio::test]
async fn a_message_redelivered_mid_work_to_another_worker_is_not_done_twice_with_redis() {
    redelivered_mid_work(Sqs::Moto, StoreKind::Redis).await;
}

async fn redelivered_mid_work(sqs: Sqs, kind: StoreKind) {
    let setup = setup_on(sqs, false).await;
    let store = ClaimStore::create(kind).await.unwrap().env();
    let proxy = FaultProxy::start(&setup.sqs.endpoint().unwrap()).await.unwrap();
    proxy.inject(Rule::new("ChangeMessageVisibilityBatch", Fault::Deny));
    setup.send(&[request("ledger.slow", "k-a"), request("ledger.slow", "k-b")]).await;
    let env = with(
        &store,
        &[
            ("VISIBILITY_TIMEOUT_SECONDS", "3"),
            ("DOWNSTREAM_TIMEOUT_MS", "12000"),
            ("AWS_ENDPOINT_URL_SQS", proxy.url()),
        ],
    );
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
    killed_mid_work(Sqs::Moto, StoreKind::DynamoDb).await;
}

#[tokio::test]
async fn a_claim_of_a_killed_worker_lapses_with_its_lease_and_the_redelivery_runs_once_on_localstack()
 {
    killed_mid_work(Sqs::LocalStack, StoreKind::DynamoDb).await;
}

#[tokio::test]
async fn a_claim_of_a_killed_worker_lapses_with_its_lease_and_the_redelivery_runs_once_on_fauxqs() {
    killed_mid_work(Sqs::Fauxqs, StoreKind::DynamoDb).await;
}

#[tokio::test]
async fn a_claim_of_a_killed_worker_lapses_with_its_lease_and_the_redelivery_runs_once_with_redis()
{
    killed_mid_work(Sqs::Moto, StoreKind::Redis).await;
}

async fn killed_mid_work(sqs: Sqs, kind: StoreKind) {
    let setup = setup_on(sqs, false).await;
    let table = ClaimStore::create(kind).await.unwrap();
    let store = table.env();
    setup.send(&[request("ledger.hold", "k-kill")]).await;
    let env =
        with(&store, &[("VISIBILITY_TIMEOUT_SECONDS", "3"), ("DOWNSTREAM_TIMEOUT_MS", "5000")]);
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
    assert!(
        said.contains("cannot reach the idempotency store, the DynamoDB table no-such-table (IDEMPOTENCY_TABLE)"),
        "{said}"
    );
    assert!(said.contains("no-such-table"), "{said}");
    assert!(said.contains("ResourceNotFoundException"), "{said}");
    assert!(setup.downstream.received().is_empty());
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

/// A Redis that refuses the connection stops the worker at start the same
/// way, naming the address and never the AUTH token.
#[tokio::test]
async fn a_worker_given_an_unreachable_redis_exits_naming_it_without_its_password() {
    let setup = setup().await;
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let url = format!("redis://:hunter2@{closed}");
    let mut worker = setup.start(&[("IDEMPOTENCY_REDIS_URL", url.as_str())]);
    let status = worker.exit(SETTLED).await.unwrap();
    assert_eq!(status.code(), Some(1), "{:#?}", worker.lines());
    let said = worker.lines().join("\n");
    let named = format!("cannot reach the idempotency store, the Redis at redis://:****@{closed}");
    assert!(said.contains(&named), "{said}");
    assert!(said.contains("(IDEMPOTENCY_REDIS_URL)"), "{said}");
    assert!(!said.contains("hunter2"), "{said}");
    assert!(setup.downstream.received().is_empty());
}
