//! sqs-worker end to end: the binary as a process against moto's SQS and a
//! local downstream. Every message is counted: deleted, quarantined, or back
//! on the queue.

use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

use aws_sdk_sqs::types::SendMessageBatchRequestEntry;
use e2e_tests::ecs_agent::{Answer, EcsAgent};
use e2e_tests::fixtures::{binary, unique};
use e2e_tests::process::field;

use crate::worker_setup::{SETTLED, STARTED, request, setup, setup_on};

#[tokio::test]
async fn a_mixed_backlog_is_drained_and_every_message_is_accounted_for() {
    let setup = setup().await;
    let mut bodies: Vec<String> =
        (0..40).map(|i| request("ledger.post", &format!("ok-{i}"))).collect();
    bodies.extend((0..5).map(|i| request("ledger.reject", &format!("rejected-{i}"))));
    bodies.extend((0..5).map(|i| format!("not json {i}")));
    bodies.extend((0..3).map(|i| request("ledger.fail", &format!("failing-{i}"))));
    setup.send(&bodies).await;

    let mut worker = setup.start(&[]);
    assert!(
        worker.wait_for_line("batch summary", STARTED).await.is_some(),
        "{:#?}",
        worker.lines()
    );
    setup
        .wait_until("every deliverable message", |s| {
            let delivered = s.delivered();
            (0..40).all(|i| delivered.contains_key(&format!("ok-{i}")))
                && (0..5).all(|i| delivered.contains_key(&format!("rejected-{i}")))
        })
        .await;
    worker.signal("TERM").await.unwrap();
    let status = worker.exit(SETTLED).await.unwrap();
    assert_eq!(status.code(), Some(0), "{:#?}", worker.lines());
    let quarantined = setup.aws.quarantined(&setup.quarantine_url, 10).await.unwrap();

    let codes: BTreeMap<String, usize> =
        quarantined.iter().fold(BTreeMap::new(), |mut codes, q| {
            *codes.entry(q.record["errorCode"].as_str().unwrap().to_owned()).or_default() += 1;
            codes
        });
    assert_eq!(
        codes,
        BTreeMap::from([("downstream_rejected".into(), 5), ("invalid_json".into(), 5)])
    );
    let delivered = setup.delivered();
    for i in 0..40 {
        assert_eq!(delivered[&format!("ok-{i}")], 1, "ok-{i} delivered exactly once");
    }
    // Only the three failing messages are left, each back on the queue.
    assert_eq!(setup.left_on_queue(3).await, ["failing-0", "failing-1", "failing-2"]);
    assert_eq!(setup.counts().await, (0, 3), "nothing else is on the queue");
    let summary = worker.lines().into_iter().find(|l| l.contains("worker stopped")).unwrap();
    assert_eq!(field(&summary, "deleted"), Some(50), "{summary}");
    assert_eq!(field(&summary, "lost"), Some(0), "{summary}");
}

#[tokio::test]
async fn sigterm_mid_work_finishes_or_releases_everything_and_exits_0_within_the_drain() {
    let setup = setup().await;
    let bodies: Vec<String> =
        (0..6).map(|i| request("ledger.slow", &format!("slow-{i}"))).collect();
    setup.send(&bodies).await;
    let mut worker = setup.start(&[("DRAIN_SECONDS", "2"), ("DOWNSTREAM_TIMEOUT_MS", "30000")]);
    setup.wait_in_flight(6).await;
    worker.signal("TERM").await.unwrap();
    // DRAIN_SECONDS plus one receive wait, plus room for the release call.
    let status = worker.exit(Duration::from_secs(2 + 1 + 5)).await.unwrap();
    assert_eq!(status.code(), Some(0), "{:#?}", worker.lines());

    let (visible, in_flight) = setup.counts().await;
    assert_eq!(
        (visible, in_flight),
        (6, 0),
        "every unfinished message released, none left invisible"
    );
    let summary = worker.lines().into_iter().find(|l| l.contains("worker stopped")).unwrap();
    assert_eq!(field(&summary, "released"), Some(6), "{summary}");
    assert_eq!(field(&summary, "deleted"), Some(0), "{summary}");
}

#[tokio::test]
async fn a_message_working_longer_than_its_lease_is_renewed_and_not_received_twice() {
    let setup = setup().await;
    setup.send(&[request("ledger.slow", "long")]).await;
    // The downstream answers after 10 s; the lease is 3 s: without renewals
    // the message would be received again about three times.
    let extra = [("DOWNSTREAM_TIMEOUT_MS", "30000"), ("VISIBILITY_TIMEOUT_SECONDS", "3")];
    let mut worker = setup.start(&extra);
    setup.wait_until("the long message", |s| s.delivered().contains_key("long")).await;
    worker.signal("TERM").await.unwrap();
    assert_eq!(worker.exit(SETTLED).await.unwrap().code(), Some(0));
    assert_eq!(setup.delivered()["long"], 1, "received and delivered once");
    assert_eq!(setup.counts().await, (0, 0), "deleted");
    let summary = worker.lines().into_iter().find(|l| l.contains("worker stopped")).unwrap();
    assert_eq!((field(&summary, "received"), field(&summary, "deleted")), (Some(1), Some(1)));
}

#[tokio::test]
async fn after_kill_9_messages_come_back_at_their_visibility_timeout_and_are_processed_again() {
    let setup = setup().await;
    let bodies: Vec<String> =
        (0..4).map(|i| request("ledger.slow", &format!("killed-{i}"))).collect();
    setup.send(&bodies).await;
    let mut first = setup.start(&[("DOWNSTREAM_TIMEOUT_MS", "30000")]);
    // Received (invisible) and not finished: the downstream takes 10 s.
    setup.wait_in_flight(4).await;
    first.signal("KILL").await.unwrap();
    assert_eq!(first.exit(SETTLED).await.unwrap().code(), None, "killed by a signal");
    assert!(first.lines().iter().all(|l| !l.contains("worker stopped")), "no drain after kill -9");

    // At-least-once, made visible: a second worker receives all four again
    // once the dead worker's leases run out, and finishes them.
    let mut second = setup.start(&[("DOWNSTREAM_TIMEOUT_MS", "30000")]);
    let keys: HashSet<String> = (0..4).map(|i| format!("killed-{i}")).collect();
    setup
        .wait_until("the second worker's deliveries", |s| {
            let delivered = s.delivered();
            keys.iter().all(|key| delivered.contains_key(key))
        })
        .await;
    second.signal("TERM").await.unwrap();
    assert_eq!(second.exit(SETTLED).await.unwrap().code(), Some(0));
    let summary = second.lines().into_iter().find(|l| l.contains("worker stopped")).unwrap();
    assert_eq!((field(&summary, "received"), field(&summary, "deleted")), (Some(4), Some(4)));
    assert_eq!(setup.counts().await, (0, 0));
}

/// Protects when work starts, releases after `PROTECTION_IDLE_SECONDS`
/// idle: two agent calls for one busy period.
#[tokio::test]
async fn task_protection_follows_busy_periods_and_survives_a_refusing_or_absent_agent() {
    let agent = EcsAgent::start(Answer::Protect).await.unwrap();
    let refusing = EcsAgent::start(Answer::Refuse).await.unwrap();
    // A port nothing listens on: the agent is unreachable.
    let unreachable = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/api/task", listener.local_addr().unwrap())
    };
    for (name, uri) in
        [("answering", agent.uri()), ("refusing", refusing.uri()), ("unreachable", &unreachable)]
    {
        let setup = setup().await;
        let bodies: Vec<String> =
            (0..5).map(|i| request("ledger.post", &format!("{name}-{i}"))).collect();
        setup.send(&bodies).await;
        let mut worker = setup.start(&[("ECS_AGENT_URI", uri), ("PROTECTION_IDLE_SECONDS", "1")]);
        setup
            .wait_until(name, |s| {
                (0..5).all(|i| s.delivered().contains_key(&format!("{name}-{i}")))
            })
            .await;
        if name == "answering" {
            let give_up = tokio::time::Instant::now() + SETTLED;
            while agent.protections().len() < 2 {
                assert!(tokio::time::Instant::now() < give_up, "{:?}", agent.calls());
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
        worker.signal("TERM").await.unwrap();
        assert_eq!(worker.exit(SETTLED).await.unwrap().code(), Some(0), "{name}");
        assert_eq!(setup.counts().await, (0, 0), "{name}: every message deleted");
    }
    assert_eq!(agent.protections(), [true, false], "protect, then release: {:?}", agent.calls());
    let (_, path, body) = &agent.calls()[0];
    assert_eq!(path, "/api/0123456789abcdef-1234/task-protection/v1/state");
    assert!(body["ExpiresInMinutes"].as_u64().is_some_and(|m| (1..=2880).contains(&m)), "{body}");
    assert_eq!(refusing.protections(), [true], "one refused attempt, nothing to release");
}

/// Two message groups of 15 each, more than one receive holds, answered
/// after varying delays: the downstream sees each group in the order it was
/// sent (concurrent processing within a group would shuffle it).
#[tokio::test]
async fn fifo_groups_keep_their_order_across_batches() {
    let setup = setup_on(e2e_tests::fixtures::Sqs::Moto, true).await;
    let mut order = Vec::new();
    for i in 0..15 {
        for group in ["a", "b"] {
            order.push((group, format!("{group}-{i:02}")));
        }
    }
    let entries = order.iter().map(|(group, key)| {
        SendMessageBatchRequestEntry::builder()
            .id(key.clone())
            .message_body(request("ledger.jitter", key))
            .message_group_id(*group)
            .message_deduplication_id(key.clone())
            .build()
            .unwrap()
    });
    setup.send_entries(entries.collect()).await;
    // One poller (the default here): moto does not hold a message group back
    // from concurrent receives while one of its messages is in flight (SQS
    // does), so they could hand out a group's messages out of order.
    let mut worker = setup.start(&[]);
    setup.wait_until("all 30", |s| s.delivered().len() == 30).await;
    worker.signal("TERM").await.unwrap();
    assert_eq!(worker.exit(SETTLED).await.unwrap().code(), Some(0));
    let seen: Vec<String> =
        setup.downstream.received().into_iter().filter_map(|r| r.idempotency_key).collect();
    for group in ["a", "b"] {
        let in_group: Vec<&String> = seen.iter().filter(|k| k.starts_with(group)).collect();
        let mut sorted = in_group.clone();
        sorted.sort();
        assert_eq!(in_group, sorted, "group {group} out of order");
        assert_eq!(in_group.len(), 15, "group {group} delivered once each");
    }
    assert_eq!(setup.counts().await, (0, 0));
}

/// `sqs-worker healthcheck` with the worker's environment: failing before
/// the first poll, passing while polls succeed, failing once they stop for
/// longer than `HEALTH_MAX_SILENCE_SECONDS`; the drain reports its metrics.
#[tokio::test]
async fn healthcheck_follows_the_polls_and_the_drain_emits_its_metrics() {
    let setup = setup().await;
    let dir = std::env::temp_dir().join(unique("health"));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("last-poll");
    let file = file.to_str().unwrap();
    let health = [("HEALTH_FILE", file), ("HEALTH_MAX_SILENCE_SECONDS", "2")];
    let check = || async {
        let mut command = tokio::process::Command::new(binary("sqs-worker").unwrap());
        command.arg("healthcheck").envs(health);
        command.output().await.unwrap()
    };
    let before = check().await;
    assert_eq!(before.status.code(), Some(1), "no poll yet");
    assert!(String::from_utf8_lossy(&before.stderr).contains("no successful poll"));

    let mut worker = setup.start(&health);
    let give_up = tokio::time::Instant::now() + STARTED;
    while !std::path::Path::new(file).exists() {
        assert!(tokio::time::Instant::now() < give_up, "{:#?}", worker.lines());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(check().await.status.code(), Some(0), "polling");
    worker.signal("TERM").await.unwrap();
    assert_eq!(worker.exit(SETTLED).await.unwrap().code(), Some(0));
    let metrics = worker
        .lines()
        .into_iter()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(&line).ok())
        .find(|doc| doc.get("DrainDurationMs").is_some())
        .unwrap_or_else(|| panic!("no drain metrics: {:#?}", worker.lines()));
    assert_eq!(metrics["MessagesInFlight"], 0);
    assert!(metrics["ReceivesEmpty"].as_u64().is_some(), "{metrics}");
    let declared: Vec<&str> = metrics["_aws"]["CloudWatchMetrics"][0]["Metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["Name"].as_str().unwrap())
        .collect();
    assert_eq!(
        declared,
        ["MessagesInFlight", "ReceivesEmpty", "IdempotencyStoreErrors", "DrainDurationMs"]
    );
    assert_eq!(metrics["IdempotencyStoreErrors"], 0, "no claim renewal failed (none was made)");

    tokio::time::sleep(Duration::from_secs(3)).await;
    let after = check().await;
    assert_eq!(after.status.code(), Some(1), "no poll for longer than 2 s");
    assert!(String::from_utf8_lossy(&after.stderr).contains("last successful poll was"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A long poll waits longer than `API_CALL_TIMEOUT_MS` allows one call: the
/// wait is added to the poll's budget, so empty polls end as empty, not as
/// timeouts, and a message sent meanwhile is received.
#[tokio::test]
async fn a_long_poll_longer_than_the_api_call_timeout_is_not_cut() {
    let setup = setup().await;
    let mut worker = setup.start(&[("RECEIVE_WAIT_SECONDS", "3"), ("API_CALL_TIMEOUT_MS", "2000")]);
    tokio::time::sleep(Duration::from_secs(7)).await;
    setup.send(&[request("ledger.post", "late")]).await;
    setup.wait_until("the late message", |s| s.delivered().contains_key("late")).await;
    worker.signal("TERM").await.unwrap();
    assert_eq!(worker.exit(SETTLED).await.unwrap().code(), Some(0));
    let failed: Vec<String> =
        worker.lines().into_iter().filter(|l| l.contains("ReceiveMessage failed")).collect();
    assert!(failed.is_empty(), "{failed:#?}");
    let summary = worker.lines().into_iter().find(|l| l.contains("worker stopped")).unwrap();
    assert!(field(&summary, "receives_empty").is_some_and(|n| n >= 1), "{summary}");
    assert_eq!(setup.counts().await, (0, 0));
}
