//! Idempotency end to end in batch-consumer (through the Lambda Runtime API),
//! against moto's SQS and each claim store: moto's DynamoDB and Redis. One
//! downstream POST per idempotency key, whatever redelivers the message.
//! sqs-worker's are in `idempotency_worker.rs`.

use std::time::Duration;

use backpressure_batch::idempotency::record_id;
use e2e_tests::downstream::Downstream;
use e2e_tests::fault_proxy::{Fault, FaultProxy, Rule};
use e2e_tests::fixtures::{Aws, binary, sqs_record, unique};
use e2e_tests::idempotency_table::{ClaimStore, StoreKind};
use e2e_tests::runtime_host::{LambdaHost, Outcome};
use serde_json::{Value, json};

use crate::worker_setup::request;

const TIMEOUT: Duration = Duration::from_secs(12);

pub(crate) struct Lambda {
    aws: Aws,
    pub(crate) downstream: Downstream,
    pub(crate) store: ClaimStore,
    pub(crate) quarantine_url: String,
    pub(crate) arn: String,
}

pub(crate) async fn lambda(kind: StoreKind) -> Lambda {
    let aws = Aws::from_env().await.unwrap();
    let quarantine_url = aws.create_queue(&unique("quarantine")).await.unwrap();
    let source = aws.create_queue(&unique("work")).await.unwrap();
    let arn = aws.queue_arn(&source).await.unwrap();
    let downstream = Downstream::start().await.unwrap();
    let store = ClaimStore::create(kind).await.unwrap();
    Lambda { aws, downstream, store, quarantine_url, arn }
}

impl Lambda {
    /// One invocation in a fresh function process (a new execution environment).
    pub(crate) async fn invoke(
        &self,
        records: &[(&str, String)],
        extra: &[(&str, &str)],
    ) -> Outcome {
        self.invoke_from(&self.arn, records, extra).await
    }

    /// The same, for records from the queue `arn`.
    pub(crate) async fn invoke_from(
        &self,
        arn: &str,
        records: &[(&str, String)],
        extra: &[(&str, &str)],
    ) -> Outcome {
        let url = self.downstream.url();
        let store = self.store.env();
        let mut env = vec![
            ("DOWNSTREAM_URL", url.as_str()),
            ("QUARANTINE_QUEUE_URL", self.quarantine_url.as_str()),
        ];
        env.extend(store.iter().map(|(name, value)| (*name, value.as_str())));
        env.extend_from_slice(extra);
        let event = json!({"Records": records
            .iter()
            .map(|(id, body)| sqs_record(id, json!(body), arn))
            .collect::<Vec<Value>>()});
        let host = LambdaHost::start(&binary("batch-consumer").unwrap(), &env).await.unwrap();
        host.invoke(&event, TIMEOUT).await
    }

    pub(crate) fn posts(&self, key: &str) -> usize {
        let received = self.downstream.received();
        received.iter().filter(|r| r.idempotency_key.as_deref() == Some(key)).count()
    }
}

pub(crate) fn failures(outcome: &Outcome) -> Vec<String> {
    outcome.batch_item_failures().unwrap_or_else(|| panic!("no batch response: {outcome:?}"))
}

#[tokio::test]
async fn a_batch_delivered_to_two_invocations_is_posted_once_per_key_with_dynamodb() {
    delivered_twice(StoreKind::DynamoDb).await;
}

#[tokio::test]
async fn a_batch_delivered_to_two_invocations_is_posted_once_per_key_with_redis() {
    delivered_twice(StoreKind::Redis).await;
}

async fn delivered_twice(kind: StoreKind) {
    let lambda = lambda(kind).await;
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
    let stored = lambda.store.records().await.unwrap();
    let queue = lambda.arn.rsplit(':').next().unwrap();
    assert_eq!(stored[&record_id(lambda.store.prefix(), queue, "k-1")]["status"], "COMPLETED");
}

#[tokio::test]
async fn the_same_key_with_another_body_is_quarantined_with_both_hashes_with_dynamodb() {
    key_reused(StoreKind::DynamoDb).await;
}

#[tokio::test]
async fn the_same_key_with_another_body_is_quarantined_with_both_hashes_with_redis() {
    key_reused(StoreKind::Redis).await;
}

async fn key_reused(kind: StoreKind) {
    let lambda = lambda(kind).await;
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
        let hash = backpressure_core::quarantine::body_hash(body);
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
            let lambda = lambda(StoreKind::DynamoDb).await;
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

/// The deadline guard fires while a done message's completion write hangs
/// (a 6 s invocation, the default 5 s call timeout and 2 s margin): the
/// message was delivered, so it is acknowledged, and the unrecorded completion
/// is counted and said. Redelivering it could only POST a second time.
#[tokio::test]
async fn a_completion_cut_by_the_deadline_guard_leaves_the_done_message_acknowledged() {
    let lambda = lambda(StoreKind::DynamoDb).await;
    let upstream = std::env::var("AWS_ENDPOINT_URL_DYNAMODB").unwrap();
    let proxy = FaultProxy::start(&upstream).await.unwrap();
    proxy.inject(Rule::new("UpdateItem", Fault::Hang));
    let event =
        json!({"Records": [sqs_record("m-1", json!(request("ledger.post", "k-1")), &lambda.arn)]});
    let mut env = vec![
        ("DOWNSTREAM_URL", lambda.downstream.url()),
        ("QUARANTINE_QUEUE_URL", lambda.quarantine_url.clone()),
        ("AWS_ENDPOINT_URL_DYNAMODB", proxy.url().to_owned()),
    ];
    env.extend(lambda.store.env());
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
