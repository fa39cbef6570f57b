//! The library's worker runtime as users meet it: the example worker
//! (`crates/app/examples/worker.rs`, a body type and processor of its own,
//! no HTTP) as a process on LocalStack's SQS and on fauxqs: a message worked
//! on for 2.5 visibility timeouts is made once (the heartbeat kept its lease),
//! poison is quarantined with the processor's own code, a health stamp is
//! written, and SIGTERM drains: the message in work finishes and is deleted,
//! exit 0.

use std::collections::HashMap;

use e2e_tests::fixtures::{Sqs, binary};
use e2e_tests::process::{Process, field};
use serde_json::json;

use crate::worker_setup::{SETTLED, STARTED, Setup, setup_on};

fn thumbnail(image: &str, width: u32, work_ms: u64) -> String {
    json!({"image": image, "width": width, "workMs": work_ms}).to_string()
}

fn start_example(setup: &Setup, health: &str, extra: &[(&str, &str)]) -> Process {
    let endpoint = setup.sqs.endpoint().unwrap();
    let mut env = vec![
        ("AWS_ENDPOINT_URL_SQS", endpoint.as_str()),
        ("QUEUE_URL", setup.work_url.as_str()),
        ("QUARANTINE_QUEUE_URL", setup.quarantine_url.as_str()),
        ("RECEIVE_WAIT_SECONDS", "1"),
        ("HEALTH_FILE", health),
    ];
    env.extend_from_slice(extra);
    Process::start(&binary("examples/worker").unwrap(), &env).unwrap()
}

/// How many times each message id was made, from the example's log lines.
fn made(worker: &Process) -> HashMap<String, usize> {
    let mut made = HashMap::new();
    for line in worker.lines().iter().filter(|l| l.contains("thumbnail made")) {
        let id = line.split("message_id=").nth(1).and_then(|rest| rest.split(' ').next());
        *made.entry(id.unwrap_or_default().trim_matches('"').to_owned()).or_default() += 1;
    }
    made
}

async fn heartbeat_quarantine_and_drain(sqs: Sqs) {
    let setup = setup_on(sqs, false).await;
    let health =
        std::env::temp_dir().join(format!("example-worker-{}", e2e_tests::fixtures::unique("h")));
    let health = health.to_str().unwrap().to_owned();
    // Worked on for 10 s under a 4 s lease: without the heartbeat it would be
    // received again (and made twice) while the first is still at work.
    setup.send(&[thumbnail("long.png", 200, 10_000)]).await;
    let mut worker = start_example(
        &setup,
        &health,
        &[("VISIBILITY_TIMEOUT_SECONDS", "4"), ("DRAIN_SECONDS", "30")],
    );
    setup.wait_until_empty().await;
    setup.send(&[thumbnail("wide.png", 5_000, 0), "not json".to_owned()]).await;
    // Quarantined before deleted: once the work queue is empty the records are there.
    setup.wait_until_empty().await;
    let quarantined = setup.aws.quarantined(&setup.quarantine_url, 2).await.unwrap();
    let mut codes: Vec<String> =
        quarantined.iter().map(|q| q.record["errorCode"].as_str().unwrap().to_owned()).collect();
    codes.sort();
    assert_eq!(codes, ["invalid_json", "too_wide"], "{sqs:?}");
    assert!(std::fs::read_to_string(&health).is_ok(), "{sqs:?}: no health stamp at {health}");

    // The drain: a message in work when SIGTERM comes finishes and is deleted.
    setup.send(&[thumbnail("in-work.png", 200, 3_000)]).await;
    setup.wait_in_flight(1).await;
    worker.signal("TERM").await.unwrap();
    let status = worker.exit(SETTLED).await.unwrap();
    assert_eq!(status.code(), Some(0), "{sqs:?}: {:#?}", worker.lines());
    setup.wait_counts((0, 0)).await;
    let made = made(&worker);
    assert_eq!(made.len(), 2, "{sqs:?}: two thumbnails made: {made:?}");
    assert!(made.values().all(|times| *times == 1), "{sqs:?}: each made once: {made:?}");
    let lines = worker.lines();
    let summary = lines.iter().find(|l| l.contains("worker stopped")).unwrap();
    assert_eq!(field(summary, "released"), Some(0), "{sqs:?}: {summary}");
    let _ = std::fs::remove_file(&health);
}

#[tokio::test]
async fn the_example_worker_keeps_its_lease_quarantines_and_drains_on_localstack() {
    heartbeat_quarantine_and_drain(Sqs::LocalStack).await;
}

#[tokio::test]
async fn the_example_worker_keeps_its_lease_quarantines_and_drains_on_fauxqs() {
    heartbeat_quarantine_and_drain(Sqs::Fauxqs).await;
}

#[tokio::test]
async fn the_example_worker_says_which_variable_is_missing() {
    let worker = Process::start(&binary("examples/worker").unwrap(), &[]).unwrap();
    let line = worker.wait_for_line("QUARANTINE_QUEUE_URL is required", STARTED).await;
    assert!(line.is_some(), "{:#?}", worker.lines());
}
