//! The Redis store under faults, in batch-consumer through the Lambda Runtime
//! API: a claim whose reply is lost after it landed, a completion likewise, a
//! claim that hangs past the call's budget, a server that refuses the
//! connection, and a server restarted without persistence (its keys gone).
//! One record an invocation, so the store's calls come in a known order:
//! the pre-check (`HMGET`), then the claim, then the completion or the
//! release (each an `EVALSHA`). A message is never processed without a
//! confirmed claim, and none is lost.

use std::time::Duration;

use backpressure_batch::idempotency::{
    ClaimOutcome, ClaimRequest, CompleteRequest, Idempotency, IdempotencyStore, ReleaseRequest,
    RenewRequest,
};
use e2e_tests::downstream::Downstream;
use e2e_tests::fixtures::{Aws, binary, sqs_record, unique};
use e2e_tests::redis_server::RedisServer;
use e2e_tests::runtime_host::{LambdaHost, Outcome};
use e2e_tests::tcp_fault::{TcpFault, TcpFaultProxy};
use serde_json::json;

use crate::idempotency_stores::redis_url;
use crate::worker_setup::request;

const ARN: &str = "arn:aws:sqs:us-east-1:123456789012:ledger";

pub(crate) struct Consumer {
    downstream: Downstream,
    quarantine_url: String,
    prefix: String,
}

impl Consumer {
    pub(crate) async fn new() -> Self {
        let aws = Aws::from_env().await.unwrap();
        let quarantine_url = aws.create_queue(&unique("quarantine")).await.unwrap();
        Self {
            downstream: Downstream::start().await.unwrap(),
            quarantine_url,
            prefix: unique("f") + ":",
        }
    }

    /// A function process whose Redis is at `address`.
    pub(crate) async fn host(&self, address: &str) -> LambdaHost {
        let url = format!("redis://{address}");
        let downstream = self.downstream.url();
        let env = [
            ("DOWNSTREAM_URL", downstream.as_str()),
            ("QUARANTINE_QUEUE_URL", self.quarantine_url.as_str()),
            ("IDEMPOTENCY_REDIS_URL", url.as_str()),
            ("IDEMPOTENCY_KEY_PREFIX", self.prefix.as_str()),
            ("API_CALL_TIMEOUT_MS", "1500"),
        ];
        LambdaHost::start(&binary("batch-consumer").unwrap(), &env).await.unwrap()
    }

    pub(crate) async fn invoke(
        &self,
        host: &LambdaHost,
        key: &str,
        timeout: Duration,
    ) -> Vec<String> {
        self.invoke_keys(host, &[key], timeout).await
    }

    /// One record a key, message ids `m-1`, `m-2`, ….
    pub(crate) async fn invoke_keys(
        &self,
        host: &LambdaHost,
        keys: &[&str],
        timeout: Duration,
    ) -> Vec<String> {
        let records: Vec<_> = keys
            .iter()
            .enumerate()
            .map(|(i, key)| {
                sqs_record(&format!("m-{}", i + 1), json!(request("ledger.post", key)), ARN)
            })
            .collect();
        let outcome = host.invoke(&json!({ "Records": records }), timeout).await;
        failures(&outcome, host)
    }

    pub(crate) fn posts(&self, key: &str) -> usize {
        let received = self.downstream.received();
        received.iter().filter(|r| r.idempotency_key.as_deref() == Some(key)).count()
    }
}

fn failures(outcome: &Outcome, host: &LambdaHost) -> Vec<String> {
    outcome
        .batch_item_failures()
        .unwrap_or_else(|| panic!("no batch response: {outcome:?}\n{:#?}", host.logs()))
}

fn address(url: &str) -> String {
    url.trim_start_matches("redis://").to_owned()
}

/// The store's scripts loaded on the server first, so the consumer's first
/// `EVALSHA` is its claim (a server that lacks a script answers `NOSCRIPT`
/// and the client loads it: one more `EVALSHA`).
async fn scripts_loaded() {
    let warm = Idempotency::redis(&redis_url(), &unique("warm:"), Duration::from_secs(2)).unwrap();
    let store = warm.store();
    let now = std::time::SystemTime::now();
    let claim = ClaimRequest {
        id: "warm",
        holder: "h",
        validation: "v",
        lease_until: now + Duration::from_secs(5),
        expiration: now + Duration::from_secs(60),
        now,
    };
    assert_eq!(store.claim(&claim).await.unwrap(), ClaimOutcome::Claimed);
    store
        .complete(&CompleteRequest {
            id: "warm",
            holder: "h",
            expiration: now + Duration::from_secs(60),
            data: None,
        })
        .await
        .unwrap();
    store.release(&ReleaseRequest { id: "warm-absent", holder: "h" }).await.unwrap();
    store.renew(&RenewRequest { id: "warm", holder: "h", lease_until: now }).await.unwrap_err();
}

#[tokio::test]
async fn a_claim_that_landed_with_its_reply_lost_is_never_processed_until_its_lease_ends() {
    scripts_loaded().await;
    let consumer = Consumer::new().await;
    let proxy = TcpFaultProxy::start(&address(&redis_url())).await.unwrap();
    proxy.inject("EVALSHA", TcpFault::LoseReply, 0, 1);
    let lease = Duration::from_secs(3);
    let first = consumer.host(&proxy.address()).await;
    assert_eq!(consumer.invoke(&first, "k-1", lease).await, ["m-1"], "retried, unprocessed");
    assert_eq!((proxy.hits(), consumer.posts("k-1")), (1, 0));
    // The claim is there, held by a token nobody has: a redelivery meets it.
    let second = consumer.host(&proxy.address()).await;
    assert_eq!(consumer.invoke(&second, "k-1", lease).await, ["m-1"], "contended");
    assert_eq!(consumer.posts("k-1"), 0);
    assert!(second.logs().join("\n").contains("claimed by another consumer"));
    // Once the first invocation's deadline and the skew margin are past, it is processed once.
    tokio::time::sleep(lease + Duration::from_secs(1)).await;
    let third = consumer.host(&proxy.address()).await;
    assert!(consumer.invoke(&third, "k-1", lease).await.is_empty());
    assert_eq!(consumer.posts("k-1"), 1);
}

#[tokio::test]
async fn a_completion_that_landed_with_its_reply_lost_still_makes_the_redelivery_a_duplicate() {
    scripts_loaded().await;
    let consumer = Consumer::new().await;
    let proxy = TcpFaultProxy::start(&address(&redis_url())).await.unwrap();
    proxy.inject("EVALSHA", TcpFault::LoseReply, 1, 1);
    let host = consumer.host(&proxy.address()).await;
    assert!(consumer.invoke(&host, "k-2", Duration::from_secs(10)).await.is_empty(), "done");
    assert_eq!((proxy.hits(), consumer.posts("k-2")), (1, 1));
    assert!(host.logs().join("\n").contains("the completion was not recorded"));
    let again = consumer.host(&proxy.address()).await;
    assert!(consumer.invoke(&again, "k-2", Duration::from_secs(10)).await.is_empty());
    assert_eq!(consumer.posts("k-2"), 1, "the redelivery found the completion that landed");
}

#[tokio::test]
async fn a_claim_that_hangs_past_its_budget_is_retried_unprocessed() {
    scripts_loaded().await;
    let consumer = Consumer::new().await;
    let proxy = TcpFaultProxy::start(&address(&redis_url())).await.unwrap();
    proxy.inject("EVALSHA", TcpFault::Hang, 0, 1);
    let host = consumer.host(&proxy.address()).await;
    assert_eq!(consumer.invoke(&host, "k-3", Duration::from_secs(10)).await, ["m-1"]);
    assert_eq!((proxy.hits(), consumer.posts("k-3")), (1, 0));
    let logs = host.logs().join("\n");
    assert!(logs.contains("the idempotency claim failed"), "{logs}");
    // The claim never reached the server: the next delivery is processed at once.
    proxy.clear();
    let again = consumer.host(&proxy.address()).await;
    assert!(consumer.invoke(&again, "k-3", Duration::from_secs(10)).await.is_empty());
    assert_eq!(consumer.posts("k-3"), 1);
}

#[tokio::test]
async fn a_refused_connection_retries_every_message_unprocessed() {
    let consumer = Consumer::new().await;
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let host = consumer.host(&closed.to_string()).await;
    assert_eq!(consumer.invoke(&host, "k-4", Duration::from_secs(10)).await, ["m-1"]);
    assert_eq!(consumer.posts("k-4"), 0);
    let logs = host.logs().join("\n");
    assert!(logs.contains(&format!("the Redis store at {closed}: connect failed")), "{logs}");
}

/// A server of the test's own, restarted on its port without persistence:
/// the keys are gone, so a completed key's redelivery is processed again
/// (docs/idempotency.md says so). The function process reconnects by itself.
#[tokio::test]
async fn a_restarted_server_without_persistence_forgets_its_keys_and_is_reconnected() {
    let server = RedisServer::start(&[]).await.unwrap();
    let consumer = Consumer::new().await;
    let (address, port) = (server.address(), server.port());
    let host = consumer.host(&address).await;
    assert!(consumer.invoke(&host, "k-5", Duration::from_secs(10)).await.is_empty());
    assert!(consumer.invoke(&host, "k-5", Duration::from_secs(10)).await.is_empty());
    assert_eq!(consumer.posts("k-5"), 1, "a duplicate while the server keeps the key");
    server.kill().await.unwrap();
    let _restarted = RedisServer::start_on(port, &[]).await.unwrap();
    assert!(consumer.invoke(&host, "k-5", Duration::from_secs(10)).await.is_empty());
    assert_eq!(consumer.posts("k-5"), 2, "processed again: the restart forgot the key");
}

/// `rediss://` through a TLS front whose certificate a CA of the test's own
/// signed: trusted through `SSL_CERT_FILE`, claims work; without it, the
/// handshake fails and the message is retried unprocessed.
#[tokio::test]
async fn a_rediss_url_claims_over_tls_with_the_trust_store_of_ssl_cert_file() {
    let front = e2e_tests::tls_front::TlsFront::start(&format!("http://{}", address(&redis_url())))
        .await
        .unwrap();
    let tls_url = front.url().replace("https://", "rediss://");
    let consumer = Consumer::new().await;
    let downstream = consumer.downstream.url();
    let ca = front.ca_file().display().to_string();
    let run = |trust: Option<&str>| {
        let mut env = vec![
            ("DOWNSTREAM_URL", downstream.clone()),
            ("QUARANTINE_QUEUE_URL", consumer.quarantine_url.clone()),
            ("IDEMPOTENCY_REDIS_URL", tls_url.clone()),
            ("IDEMPOTENCY_KEY_PREFIX", consumer.prefix.clone()),
            ("API_CALL_TIMEOUT_MS", "1500".to_owned()),
        ];
        env.extend(trust.map(|file| ("SSL_CERT_FILE", file.to_owned())));
        env
    };
    let untrusted = run(None);
    let untrusted: Vec<(&str, &str)> = untrusted.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let host = LambdaHost::start(&binary("batch-consumer").unwrap(), &untrusted).await.unwrap();
    assert_eq!(consumer.invoke(&host, "k-6", Duration::from_secs(10)).await, ["m-1"]);
    assert_eq!(consumer.posts("k-6"), 0, "no claim, no processing");
    let trusted = run(Some(&ca));
    let trusted: Vec<(&str, &str)> = trusted.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let host = LambdaHost::start(&binary("batch-consumer").unwrap(), &trusted).await.unwrap();
    assert!(consumer.invoke(&host, "k-6", Duration::from_secs(10)).await.is_empty());
    assert!(consumer.invoke(&host, "k-6", Duration::from_secs(10)).await.is_empty());
    assert_eq!(consumer.posts("k-6"), 1, "claimed over TLS, then a duplicate");
}

/// The server refusing each call in turn with an error reply (its 5xx): the
/// pre-check's refusal leaves the claim to decide; a refused claim retries
/// the message unprocessed; a refused completion leaves the done message
/// acknowledged, said and counted. Each message is processed once.
#[tokio::test]
async fn each_call_answered_with_a_server_error_loses_nothing_and_repeats_nothing() {
    scripts_loaded().await;
    let consumer = Consumer::new().await;
    let proxy = TcpFaultProxy::start(&address(&redis_url())).await.unwrap();
    let ten = Duration::from_secs(10);

    proxy.inject("HMGET", TcpFault::ErrorReply, 0, 1);
    let host = consumer.host(&proxy.address()).await;
    assert!(consumer.invoke(&host, "k-pre", ten).await.is_empty());
    assert_eq!((proxy.hits(), consumer.posts("k-pre")), (1, 1), "the claim decided");

    proxy.inject("EVALSHA", TcpFault::ErrorReply, 0, 1);
    let host = consumer.host(&proxy.address()).await;
    assert_eq!(consumer.invoke(&host, "k-claim", ten).await, ["m-1"]);
    assert_eq!((proxy.hits(), consumer.posts("k-claim")), (2, 0), "no claim, no processing");
    assert!(host.logs().join("\n").contains("injected by the test's proxy"));
    let host = consumer.host(&proxy.address()).await;
    assert!(consumer.invoke(&host, "k-claim", ten).await.is_empty());
    assert_eq!(consumer.posts("k-claim"), 1);

    proxy.inject("EVALSHA", TcpFault::ErrorReply, 1, 1);
    let host = consumer.host(&proxy.address()).await;
    assert!(consumer.invoke(&host, "k-done", ten).await.is_empty(), "done, so acknowledged");
    assert_eq!((proxy.hits(), consumer.posts("k-done")), (3, 1));
    let logs = host.logs().join("\n");
    assert!(logs.contains("the completion was not recorded"), "{logs}");
    assert!(logs.contains("\"IdempotencyStoreErrors\":1"), "{logs}");
}

/// A wrong AUTH password (Redis's deny): every message retried unprocessed,
/// the server's reason logged, the password never.
#[tokio::test]
async fn a_wrong_password_retries_every_message_unprocessed_and_never_logs_it() {
    let binary_path =
        std::env::var("E2E_REDIS_SERVER").expect("E2E_REDIS_SERVER: run with make test");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let _server = tokio::process::Command::new(&binary_path)
        .args(["--bind", "127.0.0.1", "--port", &port.to_string(), "--save", ""])
        .args(["--requirepass", "the-right-one"])
        .stdout(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    for _ in 0..100 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let consumer = Consumer::new().await;
    let host = consumer.host(&format!(":wrong-secret@127.0.0.1:{port}")).await;
    assert_eq!(consumer.invoke(&host, "k-7", Duration::from_secs(10)).await, ["m-1"]);
    assert_eq!(consumer.posts("k-7"), 0);
    let logs = host.logs().join("\n");
    let named = format!(
        "the Redis store at 127.0.0.1:{port}: connect failed: Password authentication failed"
    );
    assert!(logs.contains(&named), "{logs}");
    assert!(!logs.contains("wrong-secret"), "{logs}");
}
