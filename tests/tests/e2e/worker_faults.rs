//! sqs-worker against failing AWS calls and a failing ECS agent (through the
//! fault proxy and the local agent): every fault is logged, and every
//! message still ends deleted, quarantined, or back on its queue.

use std::time::Duration;

use e2e_tests::ecs_agent::{Answer, EcsAgent};
use e2e_tests::fault_proxy::{Fault, FaultProxy, Rule};
use e2e_tests::process::field;

use crate::worker_setup::{SETTLED, STARTED, request, setup};

async fn proxy() -> FaultProxy {
    FaultProxy::start(&std::env::var("AWS_ENDPOINT_URL_SQS").unwrap()).await.unwrap()
}

fn summary(worker: &e2e_tests::process::Process) -> String {
    worker.lines().into_iter().find(|l| l.contains("worker stopped")).unwrap()
}

#[tokio::test]
async fn a_queue_that_cannot_be_read_at_start_is_a_clear_failure() {
    let setup = setup().await;
    let proxy = proxy().await;
    // The work queue's call only: the quarantine queue is read before it.
    let work_queue_name = setup.work_url.rsplit('/').next().unwrap();
    proxy.inject(Rule::new("GetQueueAttributes", Fault::Deny).when_body_contains(work_queue_name));
    let mut worker =
        setup.start(&[("AWS_ENDPOINT_URL_SQS", proxy.url()), ("API_CALL_TIMEOUT_MS", "1000")]);
    assert_eq!(worker.exit(STARTED).await.unwrap().code(), Some(1));
    let lines = worker.lines();
    let error = lines.iter().find(|l| l.contains("cannot read the work queue")).unwrap();
    assert!(error.contains("AccessDenied"), "the cause is named: {error}");
    assert!(error.contains(&setup.work_url), "and the queue: {error}");
}

/// A denied, a failing and a hanging ReceiveMessage in turn: each is logged
/// and polled again; once SQS answers, the backlog is drained.
#[tokio::test]
async fn denied_failing_and_hanging_receives_are_polled_again() {
    let setup = setup().await;
    let proxy = proxy().await;
    let mut worker =
        setup.start(&[("AWS_ENDPOINT_URL_SQS", proxy.url()), ("API_CALL_TIMEOUT_MS", "1000")]);
    for (fault, cause) in [
        (Fault::Deny, "AccessDenied"),
        (Fault::ServerError, "InternalFailure"),
        (Fault::Hang, "timeout"),
    ] {
        let before = worker.lines().len();
        proxy.inject(Rule::new("ReceiveMessage", fault));
        // A poll already on its way may also fail (a timeout under load):
        // wait for the failure this fault causes, named by its cause.
        let give_up = tokio::time::Instant::now() + STARTED;
        let failure = loop {
            let lines = worker.lines();
            let caused = lines[before..].iter().find(|l| {
                l.contains("ReceiveMessage failed")
                    && l.to_lowercase().contains(&cause.to_lowercase())
            });
            if let Some(line) = caused {
                break line.clone();
            }
            assert!(tokio::time::Instant::now() < give_up, "no failed receive logged for {cause}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        assert!(failure.contains("polling again"), "{failure}");
        proxy.clear();
    }
    let bodies: Vec<String> = (0..5).map(|i| request("ledger.post", &format!("r-{i}"))).collect();
    setup.send(&bodies).await;
    setup.wait_until("the backlog", |s| s.delivered().len() == 5).await;
    worker.signal("TERM").await.unwrap();
    assert_eq!(worker.exit(SETTLED).await.unwrap().code(), Some(0));
    assert_eq!(field(&summary(&worker), "deleted"), Some(5));
    assert_eq!(setup.counts().await, (0, 0));
}

/// Through the fault proxy: throttled and failing receives are polled
/// again; a delete entry refused twice leaves its message on the queue
/// (it comes back; nothing is lost), the rest are deleted.
#[tokio::test]
async fn receive_faults_are_survived_and_a_refused_delete_leaves_the_message_on_the_queue() {
    let setup = setup().await;
    let proxy = proxy().await;
    proxy.inject(Rule::new("ReceiveMessage", Fault::Throttle));
    let bodies: Vec<String> = (0..3).map(|i| request("ledger.post", &format!("p-{i}"))).collect();
    setup.send(&bodies).await;
    let mut worker =
        setup.start(&[("AWS_ENDPOINT_URL_SQS", proxy.url()), ("API_CALL_TIMEOUT_MS", "1000")]);
    assert!(worker.wait_for_line("ReceiveMessage failed", STARTED).await.is_some());
    proxy.clear();
    proxy.inject(Rule::new("DeleteMessageBatch", Fault::FailEntries(vec![0])));
    setup.wait_until("the three messages", |s| s.delivered().len() == 3).await;
    worker.signal("TERM").await.unwrap();
    assert_eq!(worker.exit(SETTLED).await.unwrap().code(), Some(0));
    let summary = worker.lines().into_iter().find(|l| l.contains("worker stopped")).unwrap();
    assert_eq!(
        (field(&summary, "received"), field(&summary, "deleted")),
        (Some(3), Some(2)),
        "{summary}"
    );
    assert!(worker.lines().iter().any(|l| l.contains("deletes refused twice")));
    let (visible, in_flight) = setup.counts().await;
    assert_eq!(visible + in_flight, 1, "the undeleted message is still on the queue");
}

/// DeleteMessageBatch failing as a whole (500, denied, throttled or hanging;
/// twice, so the retry fails too): the
/// work is done but its messages stay on the queue, come back after their
/// visibility timeout, are delivered again (same idempotency key) and then
/// deleted. At-least-once, never lost.
#[tokio::test]
async fn a_failed_delete_call_brings_the_messages_back_and_they_are_deleted_later() {
    for fault in [Fault::ServerError, Fault::Deny, Fault::Throttle, Fault::Hang] {
        let setup = setup().await;
        let proxy = proxy().await;
        proxy.inject(Rule::new("DeleteMessageBatch", fault.clone()));
        let bodies: Vec<String> =
            (0..3).map(|i| request("ledger.post", &format!("d-{i}"))).collect();
        setup.send(&bodies).await;
        let mut worker = setup.start(&[
            ("AWS_ENDPOINT_URL_SQS", proxy.url()),
            ("API_CALL_TIMEOUT_MS", "1000"),
            ("VISIBILITY_TIMEOUT_SECONDS", "2"),
        ]);
        let name = fault.name();
        assert!(
            worker.wait_for_line("DeleteMessageBatch failed", SETTLED).await.is_some(),
            "{name}"
        );
        assert!(worker.wait_for_line("deletes refused twice", SETTLED).await.is_some(), "{name}");
        proxy.clear();
        setup
            .wait_until("a second delivery of each", |s| s.delivered().values().all(|n| *n >= 2))
            .await;
        setup.wait_until("all three delivered", |s| s.delivered().len() == 3).await;
        setup.wait_counts((0, 0)).await;
        worker.signal("TERM").await.unwrap();
        assert_eq!(worker.exit(SETTLED).await.unwrap().code(), Some(0), "{name}");
        assert_eq!(field(&summary(&worker), "deleted"), Some(3), "{name}: {}", summary(&worker));
    }
}

/// ChangeMessageVisibilityBatch refused while a slow message is in work: the
/// lease is lost, so the finished work does not delete the message (another
/// receiver may hold it); it comes back, is worked again, and deleted then.
#[tokio::test]
async fn a_lease_that_cannot_be_renewed_is_lost_and_its_result_does_not_delete() {
    let setup = setup().await;
    let proxy = proxy().await;
    proxy.inject(Rule::new("ChangeMessageVisibilityBatch", Fault::Deny));
    setup.send(&[request("ledger.slow", "lease")]).await;
    let mut worker = setup.start(&[
        ("AWS_ENDPOINT_URL_SQS", proxy.url()),
        ("API_CALL_TIMEOUT_MS", "1000"),
        ("VISIBILITY_TIMEOUT_SECONDS", "3"),
        ("DOWNSTREAM_TIMEOUT_MS", "30000"),
    ]);
    let refused = worker.wait_for_line("ChangeMessageVisibilityBatch failed", SETTLED).await;
    assert!(refused.is_some_and(|l| l.contains("AccessDenied")));
    proxy.clear();
    assert!(worker.wait_for_line("its lease was lost", SETTLED).await.is_some());
    setup.wait_until("the second delivery", |s| s.delivered().get("lease") == Some(&2)).await;
    setup.wait_counts((0, 0)).await;
    worker.signal("TERM").await.unwrap();
    assert_eq!(worker.exit(SETTLED).await.unwrap().code(), Some(0));
    let summary = summary(&worker);
    assert_eq!(
        (field(&summary, "lost"), field(&summary, "deleted")),
        (Some(1), Some(1)),
        "{summary}"
    );
}

/// An agent that takes the protection call and never answers: the call is
/// given up after 5 s and logged, and the work neither waits nor stops.
#[tokio::test]
async fn a_hanging_ecs_agent_does_not_hold_up_the_work() {
    let setup = setup().await;
    let agent = EcsAgent::start(Answer::Hang).await.unwrap();
    let bodies: Vec<String> = (0..5).map(|i| request("ledger.post", &format!("h-{i}"))).collect();
    setup.send(&bodies).await;
    let mut worker = setup.start(&[("ECS_AGENT_URI", agent.uri())]);
    setup.wait_until("the backlog", |s| s.delivered().len() == 5).await;
    let warning = worker.wait_for_line("task scale-in protection not set", SETTLED).await.unwrap();
    assert!(warning.contains("no answer within 5 s"), "{warning}");
    assert_eq!(agent.protections(), [true]);
    worker.signal("TERM").await.unwrap();
    assert_eq!(worker.exit(SETTLED).await.unwrap().code(), Some(0));
    assert_eq!(setup.counts().await, (0, 0));
}

/// Every write the worker makes, its answer lost once after it landed (the
/// SDK's retry lands again): each message still ends delivered once and
/// deleted, or quarantined once per landed write, and nothing stays behind.
#[tokio::test]
async fn writes_whose_answers_are_lost_repeat_nothing_and_lose_nothing() {
    for operation in ["DeleteMessageBatch", "ChangeMessageVisibilityBatch", "SendMessageBatch"] {
        let setup = setup().await;
        let proxy = proxy().await;
        let quarantine_name = setup.quarantine_url.rsplit('/').next().unwrap().to_owned();
        let rule = Rule::new(operation, Fault::LoseAnswer).times(1);
        proxy.inject(match operation {
            // The quarantine write, not the test's own sends.
            "SendMessageBatch" => rule.when_body_contains(&quarantine_name),
            _ => rule,
        });
        let mut bodies: Vec<String> =
            (0..4).map(|i| request("ledger.post", &format!("l-{i}"))).collect();
        bodies.push("not json".to_owned());
        bodies.push(request("ledger.fail", "l-fail"));
        // 10 s of work on a 4 s lease: the heartbeat extends it.
        bodies.push(request("ledger.slow", "l-slow"));
        setup.send(&bodies).await;
        let mut worker = setup.start(&[
            ("AWS_ENDPOINT_URL_SQS", proxy.url()),
            ("VISIBILITY_TIMEOUT_SECONDS", "4"),
            ("DOWNSTREAM_TIMEOUT_MS", "20000"),
        ]);
        let give_up = tokio::time::Instant::now() + SETTLED;
        while setup.delivered().len() < 6 {
            let lines = worker.lines();
            let delivered = setup.delivered();
            assert!(tokio::time::Instant::now() < give_up, "{operation}: {delivered:?} {lines:#?}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let calls = || proxy.counts().get(operation).copied().unwrap_or(0);
        let give_up = tokio::time::Instant::now() + SETTLED;
        while calls() < 2 {
            assert!(tokio::time::Instant::now() < give_up, "{operation}: never called twice");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        worker.signal("TERM").await.unwrap();
        assert_eq!(worker.exit(SETTLED).await.unwrap().code(), Some(0), "{operation}");
        let delivered = setup.delivered();
        for key in ["l-0", "l-1", "l-2", "l-3", "l-slow"] {
            assert_eq!(delivered.get(key), Some(&1), "{operation}: {delivered:?}");
        }
        let quarantined = setup.aws.quarantined(&setup.quarantine_url, 1).await.unwrap();
        assert!(!quarantined.is_empty(), "{operation}: the poison message quarantined");
        // Only l-fail is left: in flight under its backoff or visible again.
        let (visible, in_flight) = setup.counts().await;
        assert_eq!(visible + in_flight, 1, "{operation}: {:#?}", worker.lines());
    }
}
