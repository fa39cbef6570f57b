//! Fair queues: a standard queue whose messages carry a `MessageGroupId` per
//! tenant, one tenant sending 90 % of the work to a slow downstream. With
//! `CONSUMER_MAX_IN_FLIGHT_PER_GROUP=2` the quiet tenants' messages finish
//! first (the downstream's completion order), and nothing is lost; for
//! batch-consumer, and for sqs-worker on moto and on LocalStack's SQS.

use std::time::Duration;

use aws_sdk_sqs::types::SendMessageBatchRequestEntry;
use e2e_tests::downstream::Downstream;
use e2e_tests::fixtures::{Aws, Sqs, binary, sqs_record, unique};
use e2e_tests::runtime_host::LambdaHost;
use serde_json::{Value, json};

use crate::worker_setup::{request, setup_on};

/// 18 messages of tenant "noisy", then one each of "quiet-b" and "quiet-c".
fn tenants() -> Vec<(String, &'static str, String)> {
    let mut work: Vec<(String, &'static str, String)> = (0..18)
        .map(|i| (format!("n-{i}"), "noisy", request("ledger.pause", &format!("noisy-{i}"))))
        .collect();
    work.push(("b".into(), "quiet-b", request("ledger.pause", "quiet-b")));
    work.push(("c".into(), "quiet-c", request("ledger.pause", "quiet-c")));
    work
}

/// The idempotency keys in the order the downstream finished them.
fn finished(downstream: &Downstream) -> Vec<String> {
    downstream.received().into_iter().map(|r| r.idempotency_key.unwrap_or_default()).collect()
}

fn quiet_ones_among_the_first_four(order: &[String]) {
    let first: Vec<&str> = order.iter().take(4).map(String::as_str).collect();
    assert!(
        first.contains(&"quiet-b") && first.contains(&"quiet-c"),
        "finished first: {first:?}; all: {order:?}"
    );
}

#[tokio::test]
async fn batch_consumer_lets_the_quiet_tenants_finish_first() {
    let aws = Aws::from_env().await.unwrap();
    let quarantine = aws.create_queue(&unique("quarantine")).await.unwrap();
    let source = aws.create_queue(&unique("tenants")).await.unwrap();
    let arn = aws.queue_arn(&source).await.unwrap();
    let downstream = Downstream::start().await.unwrap();
    let records: Vec<Value> = tenants()
        .into_iter()
        .map(|(id, group, body)| {
            let mut record = sqs_record(&id, json!(body), &arn);
            record["attributes"]["MessageGroupId"] = json!(group);
            record
        })
        .collect();
    let url = downstream.url();
    let env = [
        ("DOWNSTREAM_URL", url.as_str()),
        ("QUARANTINE_QUEUE_URL", quarantine.as_str()),
        ("CONSUMER_MAX_IN_FLIGHT_PER_GROUP", "2"),
    ];
    let host = LambdaHost::start(&binary("batch-consumer").unwrap(), &env).await.unwrap();
    let outcome = host.invoke(&json!({"Records": records}), Duration::from_secs(30)).await;
    assert_eq!(outcome.batch_item_failures(), Some(vec![]), "{outcome:?}");
    let order = finished(&downstream);
    assert_eq!(order.len(), 20, "nothing lost: {order:?}");
    quiet_ones_among_the_first_four(&order);
    let summary = host.logs().into_iter().find(|l| l.contains("batch summary")).unwrap();
    assert!(summary.contains("noisy=18"), "the summary names the top groups: {summary}");
}

#[tokio::test]
async fn sqs_worker_lets_the_quiet_tenants_finish_first_across_its_batches_on_moto() {
    worker_fair_shares(Sqs::Moto).await;
}

#[tokio::test]
async fn sqs_worker_lets_the_quiet_tenants_finish_first_across_its_batches_on_localstack() {
    worker_fair_shares(Sqs::LocalStack).await;
}

// Not on fauxqs: fauxqs drops a standard queue's MessageGroupId (it has no fair queues)
// (docs/testing.md).

async fn worker_fair_shares(sqs: Sqs) {
    let setup = setup_on(sqs, false).await;
    let entries: Vec<SendMessageBatchRequestEntry> = tenants()
        .into_iter()
        .enumerate()
        .map(|(i, (_, group, body))| {
            let entry = SendMessageBatchRequestEntry::builder().id(format!("e{i}"));
            entry.message_body(body).message_group_id(group).build().unwrap()
        })
        .collect();
    setup.send_entries(entries).await;
    let _worker = setup.start(&[("CONSUMER_MAX_IN_FLIGHT_PER_GROUP", "2")]);
    setup.wait_until_empty().await;
    let order = finished(&setup.downstream);
    assert_eq!(order.len(), 20, "nothing lost: {order:?}");
    let delivered = setup.delivered();
    assert!(delivered.values().all(|&n| n == 1), "each once: {delivered:?}");
    quiet_ones_among_the_first_four(&order);
}
