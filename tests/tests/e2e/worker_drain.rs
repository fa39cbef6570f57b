//! sqs-worker's drain on moto and on LocalStack's SQS: what finished is
//! deleted at once, whatever its batch siblings do; a second signal cuts the
//! drain short even mid long poll, releasing the work in hand at once, so a
//! third signal leaves none of it held; an idle worker does not wait out its long
//! poll; FIFO order comes from the `.fifo` suffix,
//! never from a group id (a fair queue's tenant); a retried FIFO message is
//! back at once and holds the rest of its group, not other groups.

use std::time::Duration;

use aws_sdk_sqs::types::SendMessageBatchRequestEntry;
use e2e_tests::fault_proxy::{Fault, FaultProxy, Rule};
use e2e_tests::fixtures::Sqs;
use e2e_tests::process::field;

use crate::worker_setup::{SETTLED, STARTED, Setup, request, setup_on};

/// Ten messages in one group (FIFO) or without one: two answered at once,
/// eight held by the downstream until the drain ends.
async fn send_two_fast_eight_held(setup: &Setup, fifo: bool) {
    let entries = (0..10)
        .map(|i| {
            let operation = if i < 2 { "ledger.create" } else { "ledger.hold" };
            let key = format!("k-{i}");
            let mut entry = SendMessageBatchRequestEntry::builder()
                .id(format!("e{i}"))
                .message_body(request(operation, &key));
            if fifo {
                entry = entry.message_group_id("g").message_deduplication_id(key);
            }
            entry.build().unwrap()
        })
        .collect();
    setup.send_entries(entries).await;
}

async fn drain_deletes_what_finished(sqs: Sqs, fifo: bool) {
    let setup = setup_on(sqs, fifo).await;
    send_two_fast_eight_held(&setup, fifo).await;
    let mut worker = setup.start(&[("DRAIN_SECONDS", "2"), ("DOWNSTREAM_TIMEOUT_MS", "30000")]);
    setup.wait_until("two delivered", |s| s.delivered().len() >= 2).await;
    setup.wait_in_flight(8).await;
    worker.signal("TERM").await.unwrap();
    let status = worker.exit(SETTLED).await.unwrap();
    assert_eq!(status.code(), Some(0), "{sqs:?}: {:#?}", worker.lines());
    setup.downstream.release_held();
    let summary = worker.lines().into_iter().find(|l| l.contains("worker stopped")).unwrap();
    assert_eq!(field(&summary, "deleted"), Some(2), "{sqs:?} fifo={fifo}: {summary}");
    assert_eq!(field(&summary, "released"), Some(8), "{sqs:?} fifo={fifo}: {summary}");
    setup.wait_counts((8, 0)).await;
    let left = setup.left_on_queue(8).await;
    let held: Vec<String> = (2..10).map(|i| format!("k-{i}")).collect();
    assert_eq!(left, held, "{sqs:?} fifo={fifo}: only the unfinished came back");
}

#[tokio::test]
async fn a_drain_deletes_what_finished_and_releases_only_the_rest_on_moto() {
    drain_deletes_what_finished(Sqs::Moto, false).await;
}

#[tokio::test]
async fn a_drain_deletes_what_finished_and_releases_only_the_rest_on_localstack() {
    drain_deletes_what_finished(Sqs::LocalStack, false).await;
}

#[tokio::test]
async fn a_drain_deletes_what_finished_and_releases_only_the_rest_on_fauxqs() {
    drain_deletes_what_finished(Sqs::Fauxqs, false).await;
}

#[tokio::test]
async fn a_fifo_drain_deletes_what_finished_and_releases_only_the_rest_on_moto() {
    drain_deletes_what_finished(Sqs::Moto, true).await;
}

#[tokio::test]
async fn a_fifo_drain_deletes_what_finished_and_releases_only_the_rest_on_localstack() {
    drain_deletes_what_finished(Sqs::LocalStack, true).await;
}

// Not on fauxqs: fauxqs hands out one message of a FIFO group at a time, where SQS hands out up to
// 10: the 8 in work never are (docs/testing.md).

async fn second_signal_mid_poll(sqs: Sqs) {
    let setup = setup_on(sqs, false).await;
    setup.send(&[request("ledger.hold", "held")]).await;
    // A 5 s long poll, and a drain budget far longer than it.
    let mut worker = setup.start(&[
        ("RECEIVE_WAIT_SECONDS", "5"),
        ("DRAIN_SECONDS", "60"),
        ("DOWNSTREAM_TIMEOUT_MS", "120000"),
    ]);
    setup.wait_in_flight(1).await;
    // The poller is now in a long poll on an empty queue.
    tokio::time::sleep(Duration::from_millis(500)).await;
    worker.signal("TERM").await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    worker.signal("INT").await.unwrap();
    let status = worker.exit(STARTED).await.unwrap();
    let counts = setup.counts().await;
    setup.downstream.release_held();
    assert_eq!(status.code(), Some(0), "{sqs:?}: {:#?}", worker.lines());
    let lines = worker.lines();
    assert!(lines.iter().any(|l| l.contains("second signal")), "{sqs:?}: {lines:#?}");
    let summary = lines.iter().find(|l| l.contains("worker stopped")).unwrap();
    assert_eq!(field(summary, "released"), Some(1), "{sqs:?}: {summary}");
    // Cut short: the held message's work and the 60 s budget were not waited
    // out, only the receive under way (which would otherwise take the released message).
    let drain_ms = field(summary, "drain_ms").unwrap();
    assert!(drain_ms < 60_000, "{sqs:?}: the drain took its whole budget: {summary}");
    assert_eq!(counts, (1, 0), "{sqs:?}: visible as soon as the worker is gone");
}

#[tokio::test]
async fn a_second_signal_cuts_the_drain_short_mid_long_poll_on_moto() {
    second_signal_mid_poll(Sqs::Moto).await;
}

#[tokio::test]
async fn a_second_signal_cuts_the_drain_short_mid_long_poll_on_localstack() {
    second_signal_mid_poll(Sqs::LocalStack).await;
}

#[tokio::test]
async fn a_second_signal_cuts_the_drain_short_mid_long_poll_on_fauxqs() {
    second_signal_mid_poll(Sqs::Fauxqs).await;
}

/// Six slow messages in work, and a second SIGTERM 200 ms after the first:
/// the release the worker reports is one SQS confirmed, so all six are
/// visible a second after it exits, not at their visibility timeout.
async fn second_signal_releases_what_is_in_work(sqs: Sqs) {
    let setup = setup_on(sqs, false).await;
    let bodies: Vec<String> =
        (0..6).map(|i| request("ledger.hold", &format!("slow-{i}"))).collect();
    setup.send(&bodies).await;
    let mut worker = setup.start(&[
        ("VISIBILITY_TIMEOUT_SECONDS", "60"),
        ("DRAIN_SECONDS", "30"),
        ("DOWNSTREAM_TIMEOUT_MS", "120000"),
    ]);
    setup.wait_in_flight(6).await;
    // Received, leased and at the downstream.
    tokio::time::sleep(Duration::from_millis(500)).await;
    worker.signal("TERM").await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    worker.signal("TERM").await.unwrap();
    let status = worker.exit(STARTED).await.unwrap();
    assert_eq!(status.code(), Some(0), "{sqs:?}: {:#?}", worker.lines());
    tokio::time::sleep(Duration::from_secs(1)).await;
    let counts = setup.counts().await;
    setup.downstream.release_held();
    let summary = worker.lines().into_iter().find(|l| l.contains("worker stopped")).unwrap();
    assert_eq!(field(&summary, "released"), Some(6), "{sqs:?}: {summary}");
    assert_eq!(counts, (6, 0), "{sqs:?}: released means visible: {:#?}", worker.lines());
}

#[tokio::test]
async fn a_second_signal_releases_the_messages_in_work_for_real_on_moto() {
    second_signal_releases_what_is_in_work(Sqs::Moto).await;
}

#[tokio::test]
async fn a_second_signal_releases_the_messages_in_work_for_real_on_localstack() {
    second_signal_releases_what_is_in_work(Sqs::LocalStack).await;
}

#[tokio::test]
async fn a_second_signal_releases_the_messages_in_work_for_real_on_fauxqs() {
    second_signal_releases_what_is_in_work(Sqs::Fauxqs).await;
}

/// Six slow messages in work and a receive under way that never returns (the
/// fault proxy holds it, so it cannot take what is released): SIGTERM,
/// SIGTERM 200 ms later, then SIGINT. The second signal released the six at
/// once, so the third leaves none of them held, and says so: exit 1, and the
/// six visible a second later, not at their visibility timeout.
async fn third_signal_finds_the_work_released(sqs: Sqs) {
    let setup = setup_on(sqs, false).await;
    let bodies: Vec<String> =
        (0..6).map(|i| request("ledger.hold", &format!("slow-{i}"))).collect();
    setup.send(&bodies).await;
    let proxy = FaultProxy::start(&sqs.endpoint().unwrap()).await.unwrap();
    let mut worker = setup.start(&[
        ("AWS_ENDPOINT_URL_SQS", proxy.url()),
        ("VISIBILITY_TIMEOUT_SECONDS", "60"),
        ("DRAIN_SECONDS", "30"),
        ("DOWNSTREAM_TIMEOUT_MS", "120000"),
    ]);
    setup.wait_in_flight(6).await;
    let receives = || proxy.counts().get("ReceiveMessage").copied().unwrap_or(0);
    let before = receives();
    proxy.inject(Rule::new("ReceiveMessage", Fault::Hang));
    // The next receive is held: one counted after the rule went in.
    setup.wait_until("a receive held by the proxy", |_| receives() > before).await;
    worker.signal("TERM").await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    worker.signal("TERM").await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    worker.signal("INT").await.unwrap();
    let status = worker.exit(STARTED).await.unwrap();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let counts = setup.counts().await;
    setup.downstream.release_held();
    let lines = worker.lines();
    assert_eq!(status.code(), Some(1), "{sqs:?}: {lines:#?}");
    assert_eq!(counts, (6, 0), "{sqs:?}: released at the second signal: {lines:#?}");
    let third = lines.iter().find(|l| l.contains("third signal")).expect("the third is said");
    assert_eq!(field(third, "released"), Some(6), "{sqs:?}: {third}");
}

#[tokio::test]
async fn a_third_signal_finds_the_work_in_hand_released_by_the_second_on_moto() {
    third_signal_finds_the_work_released(Sqs::Moto).await;
}

#[tokio::test]
async fn a_third_signal_finds_the_work_in_hand_released_by_the_second_on_localstack() {
    third_signal_finds_the_work_released(Sqs::LocalStack).await;
}

#[tokio::test]
async fn a_third_signal_finds_the_work_in_hand_released_by_the_second_on_fauxqs() {
    third_signal_finds_the_work_released(Sqs::Fauxqs).await;
}

/// A standard queue whose messages carry one group id (a fair queue's tenant):
/// a failure does not hold the tenant's later messages back, as it would on FIFO.
async fn fair_queue_has_no_order(sqs: Sqs) {
    let setup = setup_on(sqs, false).await;
    let entries =
        [("ledger.fail", "first"), ("ledger.create", "second"), ("ledger.create", "third")]
            .iter()
            .enumerate()
            .map(|(i, (operation, key))| {
                SendMessageBatchRequestEntry::builder()
                    .id(format!("e{i}"))
                    .message_body(request(operation, key))
                    .message_group_id("tenant-1")
                    .build()
                    .unwrap()
            })
            .collect();
    setup.send_entries(entries).await;
    let mut worker = setup.start(&[]);
    setup
        .wait_until("second and third delivered", |s| {
            let delivered = s.delivered();
            delivered.contains_key("second") && delivered.contains_key("third")
        })
        .await;
    worker.signal("TERM").await.unwrap();
    assert_eq!(worker.exit(SETTLED).await.unwrap().code(), Some(0), "{:#?}", worker.lines());
    let summary = worker.lines().into_iter().find(|l| l.contains("worker stopped")).unwrap();
    assert!(field(&summary, "deleted").unwrap() >= 2, "{sqs:?}: {summary}");
    assert!(
        !worker.lines().iter().any(|l| l.contains("group_blocked")),
        "{sqs:?}: no FIFO order on a standard queue: {:#?}",
        worker.lines()
    );
}

#[tokio::test]
async fn a_fair_queues_group_ids_carry_no_order_for_the_worker_on_moto() {
    fair_queue_has_no_order(Sqs::Moto).await;
}

#[tokio::test]
async fn a_fair_queues_group_ids_carry_no_order_for_the_worker_on_localstack() {
    fair_queue_has_no_order(Sqs::LocalStack).await;
}

// Not on fauxqs: fauxqs drops a standard queue's MessageGroupId (it has no fair queues), so it
// would pass without a group (docs/testing.md).

/// FIFO: a message the downstream always fails comes back at once (not after
/// the 300 s visibility timeout), again and again, and the rest of its group
/// waits behind it; another group is delivered whole, in order.
async fn fifo_retry_comes_back_at_once_and_holds_its_group(sqs: Sqs) {
    let setup = setup_on(sqs, true).await;
    let messages = [
        ("a", "ledger.create", "a-0"),
        ("a", "ledger.fail", "a-1"),
        ("a", "ledger.create", "a-2"),
        ("b", "ledger.create", "b-0"),
        ("b", "ledger.create", "b-1"),
        ("b", "ledger.create", "b-2"),
    ];
    let entries = messages
        .iter()
        .map(|(group, operation, key)| {
            SendMessageBatchRequestEntry::builder()
                .id(*key)
                .message_body(request(operation, key))
                .message_group_id(*group)
                .message_deduplication_id(*key)
                .build()
                .unwrap()
        })
        .collect();
    setup.send_entries(entries).await;
    let mut worker = setup.start(&[("VISIBILITY_TIMEOUT_SECONDS", "300")]);
    setup
        .wait_until("a-1 tried three times and group b delivered", |s| {
            let delivered = s.delivered();
            delivered.get("a-1").is_some_and(|&n| n >= 3) && delivered.contains_key("b-2")
        })
        .await;
    worker.signal("TERM").await.unwrap();
    assert_eq!(worker.exit(SETTLED).await.unwrap().code(), Some(0), "{:#?}", worker.lines());
    let seen: Vec<String> =
        setup.downstream.received().into_iter().filter_map(|r| r.idempotency_key).collect();
    assert!(!seen.iter().any(|k| k == "a-2"), "{sqs:?}: a-2 overtook a-1: {seen:?}");
    let a: Vec<&str> = seen.iter().map(String::as_str).filter(|k| k.starts_with('a')).collect();
    assert_eq!(a.first(), Some(&"a-0"), "{sqs:?}: {seen:?}");
    let b: Vec<&str> = seen.iter().map(String::as_str).filter(|k| k.starts_with('b')).collect();
    assert_eq!(b, ["b-0", "b-1", "b-2"], "{sqs:?}: group b once each, in order");
}

#[tokio::test]
async fn a_retried_fifo_message_comes_back_at_once_and_holds_only_its_group_on_moto() {
    fifo_retry_comes_back_at_once_and_holds_its_group(Sqs::Moto).await;
}

#[tokio::test]
async fn a_retried_fifo_message_comes_back_at_once_and_holds_only_its_group_on_localstack() {
    fifo_retry_comes_back_at_once_and_holds_its_group(Sqs::LocalStack).await;
}

#[tokio::test]
async fn a_retried_fifo_message_comes_back_at_once_and_holds_only_its_group_on_fauxqs() {
    fifo_retry_comes_back_at_once_and_holds_its_group(Sqs::Fauxqs).await;
}

/// Nothing in work at SIGTERM: the 20 s long poll under way is abandoned, not
/// waited out, so the worker is gone well inside ECS's 30 s stop timeout.
async fn idle_stop(sqs: Sqs) {
    let setup = setup_on(sqs, false).await;
    let mut worker = setup.start(&[("RECEIVE_WAIT_SECONDS", "20"), ("DRAIN_SECONDS", "60")]);
    setup.send(&[request("ledger.create", "first")]).await;
    setup.wait_until("delivered", |s| !s.delivered().is_empty()).await;
    setup.wait_counts((0, 0)).await;
    // Done and deleted: the poller is now in a long poll on an empty queue.
    tokio::time::sleep(Duration::from_millis(500)).await;
    worker.signal("TERM").await.unwrap();
    let status = worker.exit(SETTLED).await.unwrap();
    assert_eq!(status.code(), Some(0), "{sqs:?}: {:#?}", worker.lines());
    let lines = worker.lines();
    assert!(lines.iter().any(|l| l.contains("nothing in work")), "{sqs:?}: {lines:#?}");
    let summary = lines.iter().find(|l| l.contains("worker stopped")).unwrap();
    // The poll began at most 0.5 s before the signal: waited out, it would end 19.5 s after it.
    let drain_ms = field(summary, "drain_ms").unwrap();
    assert!(drain_ms < 19_000, "{sqs:?}: the long poll was waited out: {summary}");
}

#[tokio::test]
async fn an_idle_worker_stops_without_waiting_out_its_long_poll_on_moto() {
    idle_stop(Sqs::Moto).await;
}

#[tokio::test]
async fn an_idle_worker_stops_without_waiting_out_its_long_poll_on_localstack() {
    idle_stop(Sqs::LocalStack).await;
}

#[tokio::test]
async fn an_idle_worker_stops_without_waiting_out_its_long_poll_on_fauxqs() {
    idle_stop(Sqs::Fauxqs).await;
}
