//! The claim stores where they once failed: two key prefixes that met in one
//! key, a Redis that accepts connections and never answers, a connection that
//! goes silent while new ones would work, a Redis full under `noeviction`, and
//! a refused DynamoDB claim with no record to read back. In each, a message is
//! processed once, or retried unprocessed: never skipped, never repeated.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use e2e_tests::fault_proxy::{Fault, FaultProxy, Rule};
use e2e_tests::fixtures::unique;
use e2e_tests::idempotency_table::StoreKind;
use e2e_tests::redis_server::RedisServer;
use e2e_tests::tcp_fault::TcpFaultProxy;

use crate::idempotency::{failures, lambda};
use crate::idempotency_redis_faults::Consumer;
use crate::idempotency_stores::redis_url;
use crate::worker_setup::request;

const ACCOUNT: &str = "arn:aws:sqs:us-east-1:123456789012";

/// Function A (prefix `r7X`, queue `x-qX`) and function B (prefix `r7Xx-`,
/// queue `qX`) on one store, each with a message of the same key: two
/// consumers, two side effects.
async fn prefixes_never_meet(kind: StoreKind) {
    let lambda = lambda(kind).await;
    let key = unique("k");
    let records = [("m-1", request("ledger.post", &key))];
    for (prefix, queue) in [("r7X", "x-qX"), ("r7Xx-", "qX")] {
        let env = [("IDEMPOTENCY_KEY_PREFIX", prefix)];
        let outcome = lambda.invoke_from(&format!("{ACCOUNT}:{queue}"), &records, &env).await;
        assert!(failures(&outcome).is_empty(), "{prefix} on {queue}: {outcome:?}");
    }
    assert_eq!(lambda.posts(&key), 2, "B's message was taken for A's duplicate");
}

#[tokio::test]
async fn two_prefixes_and_queues_that_once_met_in_one_key_stay_apart_in_redis() {
    prefixes_never_meet(StoreKind::Redis).await;
}

#[tokio::test]
async fn two_prefixes_and_queues_that_once_met_in_one_key_stay_apart_in_dynamodb() {
    prefixes_never_meet(StoreKind::DynamoDb).await;
}

/// A server that accepts every connection and never answers: a batch of 8
/// dials it once (the pre-check's attempt, whose failure the claims share),
/// not once a claim, and every message is retried unprocessed.
#[tokio::test]
async fn a_redis_that_never_answers_is_dialled_once_a_batch_not_once_a_claim() {
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = silent.local_addr().unwrap().to_string();
    let accepted = Arc::new(AtomicU64::new(0));
    let counting = accepted.clone();
    let listener = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            counting.fetch_add(1, Ordering::SeqCst);
            held.push(socket);
        }
    });
    let consumer = Consumer::new().await;
    let host = consumer.host(&address).await;
    let keys: Vec<String> = (0..8).map(|i| format!("dead-{i}")).collect();
    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
    let failed = consumer.invoke_keys(&host, &keys, Duration::from_secs(30)).await;
    listener.abort();
    assert_eq!(failed.len(), 8, "{failed:?}");
    assert_eq!(keys.iter().map(|k| consumer.posts(k)).sum::<usize>(), 0);
    let dialled = accepted.load(Ordering::SeqCst);
    assert!(dialled <= 2, "dialled {dialled} times for one batch: {:#?}", host.logs());
}

/// A warm consumer whose open connection goes silent (a half-open peer) while
/// new connections work: the call that times out drops it, and a later call
/// makes a new one, so the message is posted within two deliveries.
#[tokio::test]
async fn a_connection_gone_silent_is_replaced_after_its_call_times_out() {
    let redis = redis_url();
    let proxy = TcpFaultProxy::start(redis.trim_start_matches("redis://")).await.unwrap();
    let consumer = Consumer::new().await;
    let host = consumer.host(&proxy.address()).await;
    assert!(consumer.invoke(&host, "before", Duration::from_secs(10)).await.is_empty());
    proxy.silence_open_connections();
    for _ in 0..2 {
        if consumer.invoke(&host, "after", Duration::from_secs(20)).await.is_empty() {
            break;
        }
    }
    assert_eq!(consumer.posts("after"), 1, "{:#?}", host.logs());
    assert!(proxy.connections() >= 2, "never reconnected");
}

/// A Redis at its `maxmemory` under `noeviction`: a claim Redis would not let
/// complete does not land, so the message is retried unprocessed and the
/// store's error is said; with room again, it is processed once.
#[tokio::test]
async fn a_full_redis_refuses_the_claim_and_the_message_is_retried_unprocessed() {
    let server = RedisServer::start(&["--maxmemory-policy", "noeviction"]).await.unwrap();
    let consumer = Consumer::new().await;
    let host = consumer.host(&server.address()).await;
    let client = redis::Client::open(format!("redis://{}", server.address())).unwrap();
    let mut admin = client.get_multiplexed_async_connection().await.unwrap();
    let set_maxmemory = |bytes: &'static str| {
        let mut admin = admin.clone();
        async move {
            let _: () = redis::cmd("CONFIG")
                .arg("SET")
                .arg("maxmemory")
                .arg(bytes)
                .query_async(&mut admin)
                .await
                .unwrap();
        }
    };
    set_maxmemory("1").await;
    let failed = consumer.invoke(&host, "full", Duration::from_secs(10)).await;
    let logs = host.logs().join("\n");
    assert_eq!(failed, ["m-1"], "{logs}");
    assert_eq!(consumer.posts("full"), 0, "processed with a claim that could not complete");
    assert!(logs.contains("OOM"), "the store's refusal is said: {logs}");
    assert!(logs.contains("\"IdempotencyStoreErrors\":1"), "{logs}");
    set_maxmemory("0").await;
    assert!(consumer.invoke(&host, "full", Duration::from_secs(10)).await.is_empty());
    assert!(consumer.invoke(&host, "full", Duration::from_secs(10)).await.is_empty());
    assert_eq!(consumer.posts("full"), 1, "{:#?}", host.logs());
    let _: String = redis::cmd("PING").query_async(&mut admin).await.unwrap();
}

/// DynamoDB refuses the claim's conditional write without returning the old
/// item (a DynamoDB-compatible store that drops `ReturnValuesOnConditionCheckFailure`),
/// and the read back finds no record: the write is tried again, and the
/// message is never processed on a refusal.
#[tokio::test]
async fn a_refused_claim_with_no_record_to_read_back_is_retried_unprocessed() {
    let lambda = lambda(StoreKind::DynamoDb).await;
    let upstream = std::env::var("AWS_ENDPOINT_URL_DYNAMODB").unwrap();
    let proxy = FaultProxy::start(&upstream).await.unwrap();
    proxy.inject(Rule::new("PutItem", Fault::RefuseWithoutItem));
    proxy.inject(Rule::new("GetItem", Fault::NoItem));
    let records = [("m-1", request("ledger.post", "k-7"))];
    let env = [("AWS_ENDPOINT_URL_DYNAMODB", proxy.url()), ("API_CALL_TIMEOUT_MS", "1500")];
    let outcome = lambda.invoke(&records, &env).await;
    assert_eq!(failures(&outcome), ["m-1"], "{outcome:?}");
    assert_eq!(lambda.posts("k-7"), 0, "processed on a refused claim");
    let puts = proxy.counts().get("PutItem").copied().unwrap_or(0);
    assert!(puts >= 2, "the claim's write was not tried again: {puts}");
}
