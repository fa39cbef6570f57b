//! sqs-backpressure under faults: every SQS and STS call it makes denied,
//! throttled, failing, hanging or partly failing, through the fault proxy in
//! front of moto. Whatever fails, no message is lost or left invisible past
//! its lease, nothing is sent twice, and the exit code says it did not finish.

use std::time::Duration;

use e2e_tests::fault_proxy::{Fault, FaultProxy, Rule};
use e2e_tests::fixtures::{Aws, unique};

use crate::operator_cli::{audit_lines, cli, dead_letter_queue, stderr, temp_path};
use crate::operator_cli_resume::quarantined_records;

/// The lease the CLI takes in these tests: what a failure leaves held comes back after it.
const LEASE: &str = "2";
pub(crate) const SETTLED: Duration = Duration::from_secs(20);

pub(crate) struct Setup {
    pub(crate) aws: Aws,
    pub(crate) proxy: FaultProxy,
    pub(crate) dlq: String,
    pub(crate) work: String,
    pub(crate) audit: std::path::PathBuf,
    /// The dead-lettered messages' ids.
    pub(crate) ids: Vec<String>,
}

pub(crate) async fn setup() -> Setup {
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
    /// The CLI with `args`, its calls through the proxy.
    pub(crate) async fn via_proxy(&self, args: &[&str]) -> std::process::Output {
        let mut all = vec!["--endpoint-url", self.proxy.url(), "--call-timeout", "2"];
        all.extend_from_slice(args);
        cli(&all).await
    }

    /// `command` (replay or discard) on `queue`, confirmed, with the short
    /// lease and its audit trail at `audit`.
    async fn sweep(
        &self,
        command: &str,
        queue: &str,
        audit: &std::path::Path,
        extra: &[&str],
    ) -> std::process::Output {
        let audit = audit.to_str().unwrap();
        let mut args = vec![command, "--queue-url", queue, "--yes", "--visibility-timeout", LEASE];
        args.extend_from_slice(&["--wait-seconds", "1", "--audit", audit]);
        args.extend_from_slice(extra);
        self.via_proxy(&args).await
    }

    pub(crate) async fn replay(&self, extra: &[&str]) -> std::process::Output {
        let mut args = vec!["--to", self.work.as_str()];
        args.extend_from_slice(extra);
        self.sweep("replay", &self.dlq, &self.audit, &args).await
    }

    pub(crate) async fn settled(&self, dlq: (u64, u64), work: (u64, u64)) {
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
    for (operation, fault) in faults.iter().flat_map(|f| {
        ["GetCallerIdentity", "GetQueueAttributes", "ReceiveMessage"].map(|op| (op, f.clone()))
    }) {
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

#[tokio::test]
async fn reads_that_fail_change_nothing_and_leave_no_partial_export() {
    for fault in [Fault::Deny, Fault::ServerError, Fault::Hang] {
        let setup = setup().await;
        setup.proxy.inject(Rule::new("ReceiveMessage", fault.clone()));
        let stats =
            setup.via_proxy(&["stats", "--queue-url", &setup.dlq, "--wait-seconds", "1"]).await;
        assert_eq!(stats.status.code(), Some(1), "{}: {}", fault.name(), stderr(&stats));
        let out = temp_path("export.jsonl");
        let export = setup
            .via_proxy(&[
                "export",
                "--queue-url",
                &setup.dlq,
                "--wait-seconds",
                "1",
                "--out",
                out.to_str().unwrap(),
            ])
            .await;
        assert_eq!(export.status.code(), Some(1), "{}: {}", fault.name(), stderr(&export));
        assert!(!out.exists(), "{}: a failed export leaves no file", fault.name());
        assert!(
            !out.with_extension("jsonl.partial").exists(),
            "{}: nor a partial one",
            fault.name()
        );
        setup.settled((5, 0), (0, 0)).await;
    }
}

#[tokio::test]
async fn a_source_queue_that_cannot_be_found_keeps_the_messages_on_record() {
    // Records naming their source queue: its URL lookup denied.
    let setup = setup().await;
    let (quarantine, work, _) = quarantined_records(&setup.aws, false, 3).await;
    setup.proxy.inject(Rule::new("GetQueueUrl", Fault::Deny));
    let audit = temp_path("audit.jsonl");
    let output = setup.sweep("replay", &quarantine, &audit, &[]).await;
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let lines = audit_lines(&audit);
    assert_eq!(lines.len(), 3);
    for line in &lines {
        assert_eq!(line["result"], "send_failed");
        assert!(line["reason"].as_str().unwrap().contains("GetQueueUrl"), "{line}");
    }
    let every = Duration::from_millis(200);
    setup.aws.wait_for_counts(&quarantine, (3, 0), SETTLED, every).await.unwrap();
    assert_eq!(setup.aws.counts(&work).await.unwrap(), (0, 0));

    // Raw dead-lettered messages, no --to, and the redrive sources unreadable.
    setup.proxy.clear();
    setup.proxy.inject(Rule::new("ListDeadLetterSourceQueues", Fault::Deny));
    let output = setup.sweep("replay", &setup.dlq, &setup.audit, &[]).await;
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let results = setup.results();
    assert_eq!(results, vec!["send_failed"; 5]);
    let reasons = audit_lines(&setup.audit);
    assert!(
        reasons.iter().all(|l| l["reason"].as_str().unwrap().contains("no source queue known"))
    );
    setup.settled((5, 0), (0, 0)).await;
}

#[tokio::test]
async fn a_dead_letter_queue_replays_to_its_only_redrive_source_without_to() {
    let setup = setup().await;
    let dlq_arn = setup.aws.queue_arn(&setup.dlq).await.unwrap();
    let policy =
        serde_json::json!({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 5}).to_string();
    let source = setup
        .aws
        .sqs
        .create_queue()
        .queue_name(unique("source"))
        .attributes(aws_sdk_sqs::types::QueueAttributeName::RedrivePolicy, policy)
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    let output = setup
        .via_proxy(&[
            "replay",
            "--queue-url",
            &setup.dlq,
            "--yes",
            "--audit",
            setup.audit.to_str().unwrap(),
        ])
        .await;
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(setup.aws.counts(&source).await.unwrap(), (5, 0));
    assert_eq!(setup.proxy.counts().get("ListDeadLetterSourceQueues"), Some(&1));
}

#[tokio::test]
async fn every_failing_release_costs_only_the_lease() {
    for fault in [Fault::Throttle, Fault::ServerError, Fault::Hang, Fault::FailEntries(vec![0])] {
        let setup = setup().await;
        setup.proxy.inject(Rule::new("ChangeMessageVisibilityBatch", fault.clone()));
        let one = setup.ids[0].clone();
        let output = setup.replay(&["--message-id", &one, "--concurrency", "1"]).await;
        assert_ne!(output.status.code(), Some(0), "{}: {}", fault.name(), stderr(&output));
        setup.settled((4, 0), (1, 0)).await;
    }
}

#[tokio::test]
async fn a_refused_discard_keeps_the_message_and_says_so() {
    for fault in [Fault::Deny, Fault::FailEntries(vec![0, 1])] {
        let setup = setup().await;
        setup.proxy.inject(Rule::new("DeleteMessageBatch", fault.clone()));
        let output = setup.sweep("discard", &setup.dlq, &setup.audit, &[]).await;
        assert_eq!(output.status.code(), Some(1), "{}: {}", fault.name(), stderr(&output));
        let results = setup.results();
        let kept = results.iter().filter(|r| *r == "discard_failed").count() as u64;
        let gone = results.iter().filter(|r| *r == "discarded").count() as u64;
        if fault == Fault::Deny {
            assert_eq!((gone, kept), (0, 0), "a refused call: nothing on record as discarded");
            setup.settled((5, 0), (0, 0)).await;
        } else {
            assert_eq!(kept + gone, 5, "{results:?}");
            assert!(kept >= 2, "{results:?}");
            setup.settled((kept, 0), (0, 0)).await;
        }
    }
}
