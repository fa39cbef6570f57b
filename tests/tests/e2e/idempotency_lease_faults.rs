//! A claim never lapses under the call it guards: sqs-worker with every
//! renewal of a claim refused (a heartbeat starved of its turn, through the
//! fault proxy in front of DynamoDB) and a POST held past its visibility
//! timeout. The claim is leased for the whole request from the start, so
//! the copies of the message wait, and the key is POSTed once. And with
//! every renewal of a claim hung, the visibility leases are still renewed
//! on the heartbeat: the message in work is received once.

use std::time::Duration;

use e2e_tests::fault_proxy::{Fault, FaultProxy, Rule};
use e2e_tests::idempotency_table::Table;
use e2e_tests::process::field;

use crate::worker_setup::{SETTLED, request, setup};

#[tokio::test]
async fn three_copies_of_a_keyed_message_are_posted_once_with_renewals_starved() {
    let setup = setup().await;
    let table = Table::create().await.unwrap();
    let proxy =
        FaultProxy::start(&std::env::var("AWS_ENDPOINT_URL_DYNAMODB").unwrap()).await.unwrap();
    // A renewal sets the lease's end; a completion does not.
    let renewal = Rule::new("UpdateItem", Fault::Deny).when_body_contains("in_progress_expiration");
    proxy.inject(renewal);
    setup.send(&vec![request("ledger.hold", "k-same"); 3]).await;
    let mut worker = setup.start(&[
        ("IDEMPOTENCY_TABLE", table.name.as_str()),
        ("AWS_ENDPOINT_URL_DYNAMODB", proxy.url()),
        ("VISIBILITY_TIMEOUT_SECONDS", "2"),
        ("DOWNSTREAM_TIMEOUT_MS", "6000"),
    ]);
    setup.wait_until("the first POST", |s| s.downstream.arrived() >= 1).await;
    // Held twice the visibility timeout, within the request's own timeout.
    tokio::time::sleep(Duration::from_secs(4)).await;
    setup.downstream.release_held();
    setup.wait_until_empty().await;
    worker.signal("TERM").await.unwrap();
    assert_eq!(worker.exit(SETTLED).await.unwrap().code(), Some(0), "{:#?}", worker.lines());
    let said = worker.lines().join("\n");
    assert!(said.contains("a claim was not renewed"), "renewals were starved: {said}");
    assert_eq!(setup.downstream.arrived(), 1, "one POST reached the downstream: {said}");
    assert_eq!(setup.delivered().get("k-same"), Some(&1));
}

#[tokio::test]
async fn a_hung_claim_renewal_leaves_the_visibility_heartbeat_beating() {
    let setup = setup().await;
    let table = Table::create().await.unwrap();
    let proxy =
        FaultProxy::start(&std::env::var("AWS_ENDPOINT_URL_DYNAMODB").unwrap()).await.unwrap();
    let renewal = Rule::new("UpdateItem", Fault::Hang).when_body_contains("in_progress_expiration");
    proxy.inject(renewal);
    setup.send(&[request("ledger.hold", "k-held")]).await;
    // The claim is leased for the POST's 16 s and due for renewal after about
    // 8 s; that renewal hangs for the call's whole 20 s budget, while the
    // 2 s visibility lease must go on being renewed every two thirds of a second.
    let mut worker = setup.start(&[
        ("IDEMPOTENCY_TABLE", table.name.as_str()),
        ("AWS_ENDPOINT_URL_DYNAMODB", proxy.url()),
        ("VISIBILITY_TIMEOUT_SECONDS", "2"),
        ("DOWNSTREAM_TIMEOUT_MS", "16000"),
        ("API_CALL_TIMEOUT_MS", "20000"),
    ]);
    setup.wait_until("the POST", |s| s.downstream.arrived() >= 1).await;
    tokio::time::sleep(Duration::from_secs(12)).await;
    setup.downstream.release_held();
    setup.wait_until_empty().await;
    worker.signal("TERM").await.unwrap();
    assert_eq!(worker.exit(SETTLED).await.unwrap().code(), Some(0), "{:#?}", worker.lines());
    let lines = worker.lines();
    let summary = lines.iter().find(|l| l.contains("worker stopped")).unwrap();
    assert_eq!(
        field(summary, "received"),
        Some(1),
        "never visible again while in work: {lines:#?}"
    );
    assert_eq!(setup.delivered().get("k-held"), Some(&1));
}
