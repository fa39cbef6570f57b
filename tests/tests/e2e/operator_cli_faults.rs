//! sqs-backpressure under faults: every SQS and STS call it makes denied,
//! throttled, failing, hanging or partly failing, through the fault proxy in
//! front of moto. Whatever fails, no message is lost or left invisible past
//! its lease, nothing is sent twice, and the exit code says it did not finish.

use std::time::Duration;

use e2e_tests::fault_proxy::{Fault, FaultProxy, Rule};
use e2e_tests::fixtures::{Aws, unique};

use crate::operator_cli::{audit_lines, cli, dead_letter_queue, stderr, temp_path};

/// The lease the CLI takes in these tests: what a failure leaves held comes back after it.
const LEASE: &str = "2";
const SETTLED: Duration = Duration::from_secs(20);

struct Setup {
    aws: Aws,
    proxy: FaultProxy,
    dlq: String,
    work: String,
    audit: std::path::PathBuf,
    /// The dead-lettered messages' ids.
    ids: Vec<String>,
}

async fn setup() -> Setup {
    let aws = Aws::from_env().await.unwrap();
    let bodies: Vec<String> = (0..5).map(|n| format!("m{n}")).collect();
    let (dlq, sent) = dead_letter_queue(&aws, false, &bodies).await;
    let work = aws.create_queue(&unique("work")).await.unwrap();
    let moto = std::env::var("AWS_ENDPOINT_URL_SQS").unwrap();
    let proxy = FaultProxy::start(&moto).await.unwrap();
    let ids = sent.into_keys().collect();
    Setup { aws, proxy, dlq, work, audit: temp_path("audit.jsonl"), ids }
}

impl Setup {
    async fn replay(&self, extra: &[&str]) -> std::process::Output {
        let mut args = vec![
            "--endpoint-url",
            self.proxy.url(),
            "--call-timeout",
            "2",
            "replay",
            "--queue-url",
            &self.dlq,
            "--to",
            &self.work,
            "--yes",
            "--visibility-timeout",
            LEASE,
            "--wait-seconds",
            "1",
            "--audit",
            self.audit.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        cli(&args).await
    }

    async fn settled(&self, dlq: (u64, u64), work: (u64, u64)) {
        let every = Duration::from_millis(200);
        self.aws.wait_for_counts(&self.dlq, dlq, SETTLED, every).await.unwrap();
        self.aws.wait_for_counts(&self.work, work, SETTLED, every).await.unwrap();
    }

    fn results(&self) -> Vec<String> {
        audit_lines(&self.audit).iter().map(|l| l["result"].as_str().unwrap().to_owned()).collect()
    }
}

#[tokio::test]
async fn nothing_changes_when_a_call_before_the_first_send_fails() {
    let faults = [Fault::Deny, Fault::Throttle, Fault::ServerError, Fault::Hang];
    for (operation, fault) in faults
        .iter()
        .flat_map(|f| ["GetCallerIdentity", "ReceiveMessage"].map(|op| (op, f.clone())))
    {
        let setup = setup().await;
        setup.proxy.inject(Rule::new(operation, fault.clone()));
        let output = setup.replay(&[]).await;
        assert_eq!(
            output.status.code(),
            Some(1),
            "{operation} {}: {}",
            fault.name(),
            stderr(&output)
        );
        assert!(stderr(&output).contains(operation), "{operation}: {}", stderr(&output));
        setup.settled((5, 0), (0, 0)).await;
        assert!(setup.results().is_empty(), "{operation} {}: nothing on record", fault.name());
    }
}

#[tokio::test]
async fn a_send_that_fails_or_hangs_keeps_every_message_on_its_queue() {
    for fault in [Fault::Deny, Fault::Throttle, Fault::ServerError, Fault::Hang] {
        let setup = setup().await;
        setup.proxy.inject(Rule::new("SendMessageBatch", fault.clone()));
        let output = setup.replay(&[]).await;
        assert_eq!(output.status.code(), Some(1), "{}: {}", fault.name(), stderr(&output));
        assert!(stderr(&output).contains("SendMessageBatch"), "{}", stderr(&output));
        // Released at once, or (a hang: unknown whether SQS took them) after the lease.
        setup.settled((5, 0), (0, 0)).await;
        assert!(setup.results().is_empty(), "{}: no send confirmed", fault.name());
    }
}

#[tokio::test]
async fn refused_entries_stay_and_are_on_record_the_rest_is_replayed() {
    let setup = setup().await;
    setup.proxy.inject(Rule::new("SendMessageBatch", Fault::FailEntries(vec![0, 2])));
    let output = setup.replay(&["--concurrency", "1"]).await;
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).contains("replayed=3") && stderr(&output).contains("failed=2"));
    setup.settled((2, 0), (3, 0)).await;
    let mut results = setup.results();
    results.sort();
    assert_eq!(results, ["replayed", "replayed", "replayed", "send_failed", "send_failed"]);

    setup.proxy.clear();
    let output = setup.replay(&[]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    setup.settled((0, 0), (5, 0)).await;
}

#[tokio::test]
async fn a_failed_delete_after_a_confirmed_send_is_finished_by_a_rerun_without_resending() {
    for fault in [Fault::Deny, Fault::Hang, Fault::FailEntries(vec![1])] {
        let setup = setup().await;
        setup.proxy.inject(Rule::new("DeleteMessageBatch", fault.clone()));
        let output = setup.replay(&["--concurrency", "1"]).await;
        assert_eq!(output.status.code(), Some(1), "{}: {}", fault.name(), stderr(&output));
        let results = setup.results();
        let count = |what: &str| results.iter().filter(|r| *r == what).count() as u64;
        let sent = count("replayed");
        assert!(sent >= 1, "{}: {results:?}", fault.name());
        // A refused entry is on record; a refused call stops the run at its first batch.
        let deleted =
            if matches!(fault, Fault::FailEntries(_)) { sent - count("delete_failed") } else { 0 };
        // Sent exactly once and on record; what was not deleted is still on the
        // dead-letter queue, visible again, until a rerun.
        setup.settled((5 - deleted, 0), (sent, 0)).await;

        setup.proxy.clear();
        let output = setup.replay(&[]).await;
        assert!(output.status.success(), "{}: {}", fault.name(), stderr(&output));
        setup.settled((0, 0), (5, 0)).await;
        let results = setup.results();
        let resumed = results.iter().filter(|r| *r == "deleted_on_resume").count();
        assert!(resumed >= 1, "{}: {results:?}", fault.name());
        assert_eq!(
            results.iter().filter(|r| *r == "replayed").count(),
            5,
            "{}: none sent twice",
            fault.name()
        );
    }
}

#[tokio::test]
async fn a_release_that_fails_leaves_the_rest_invisible_only_for_the_lease() {
    let setup = setup().await;
    let one = setup.ids[0].clone();
    setup.proxy.inject(Rule::new("ChangeMessageVisibilityBatch", Fault::Deny));
    let output = setup.replay(&["--message-id", &one, "--concurrency", "1"]).await;
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).contains("ChangeMessageVisibilityBatch"), "{}", stderr(&output));
    // The matching one replayed; the four others visible again once the lease ends.
    setup.settled((4, 0), (1, 0)).await;
}

#[tokio::test]
async fn an_audit_file_that_cannot_be_written_stops_the_replay_before_anything_is_sent() {
    let setup = setup().await;
    let directory = temp_path("not-a-file");
    std::fs::create_dir_all(&directory).unwrap();
    let output = cli(&[
        "replay",
        "--queue-url",
        &setup.dlq,
        "--to",
        &setup.work,
        "--yes",
        "--audit",
        directory.to_str().unwrap(),
    ])
    .await;
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).contains(directory.to_str().unwrap()), "{}", stderr(&output));
    setup.settled((5, 0), (0, 0)).await;
}
