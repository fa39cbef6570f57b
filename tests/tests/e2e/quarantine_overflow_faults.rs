//! Quarantine through S3 under faults: the CLI's S3 reads and deletes that
//! fail lose nothing and say why, and S3 writes whose answers are lost are
//! repeated harmlessly.

use e2e_tests::fault_proxy::{Fault, FaultProxy, Rule};
use e2e_tests::fixtures::binary;

use crate::operator_cli::{audit_lines, cli, stderr, stdout, temp_path};

use crate::quarantine_overflow::*;

/// The CLI with its S3 calls through `proxy`.
async fn cli_through(proxy: &FaultProxy, args: &[&str]) -> std::process::Output {
    tokio::process::Command::new(binary("sqs-backpressure").unwrap())
        .args(args)
        .env("AWS_ENDPOINT_URL_S3", proxy.url())
        .env("AWS_MAX_ATTEMPTS", "2")
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap()
}

#[tokio::test]
async fn the_clis_s3_reads_and_deletes_that_fail_lose_nothing_and_say_why() {
    let o = Overflow::new(262_144).await;
    let body = poison_body(300_000);
    let host = o.consumer(&[]).await;
    assert_eq!(
        host.invoke(&o.event(&[("big-1", &body)]), TIMEOUT).await.batch_item_failures(),
        Some(vec![])
    );
    let upstream = std::env::var("AWS_ENDPOINT_URL_S3").unwrap();
    let proxy = FaultProxy::start(&upstream).await.unwrap();
    let replay = [
        "replay",
        "--queue-url",
        &o.quarantine_url,
        "--to",
        &o.work_url,
        "--yes",
        "--call-timeout",
        "2",
    ];

    // A read denied, throttled, failing or hung: the record stays, nothing is sent, the reason is S3's.
    for (fault, said) in [
        (Fault::Deny, "AccessDenied"),
        (Fault::Throttle, "SlowDown"),
        (Fault::ServerError, "InternalError"),
        (Fault::Hang, "no answer within the call's time"),
    ] {
        proxy.clear();
        proxy.inject(Rule::new("GetObject", fault.clone()));
        let audit = temp_path("audit.jsonl");
        let args = [&replay[..], &["--audit", audit.to_str().unwrap()]].concat();
        let output = cli_through(&proxy, &args).await;
        assert_eq!(output.status.code(), Some(1), "{fault:?}: {}", stderr(&output));
        let lines = audit_lines(&audit);
        assert_eq!(lines.len(), 1, "{fault:?}: {lines:?}");
        let reason = lines[0]["reason"].as_str().unwrap();
        assert!(
            reason.contains("could not be read") && reason.contains(said),
            "{fault:?}: {reason}"
        );
        assert!(!reason.contains("Error {"), "no Debug dump: {reason}");
        assert_eq!(o.aws.counts(&o.work_url).await.unwrap(), (0, 0), "{fault:?}: nothing sent");
        assert_eq!(o.aws.counts(&o.quarantine_url).await.unwrap(), (1, 0), "{fault:?}: it stays");
    }

    // The replay done, a delete S3 refuses leaves the object to the lifecycle rule, on record.
    proxy.clear();
    proxy.inject(Rule::new("DeleteObject", Fault::Deny));
    let audit = temp_path("audit.jsonl");
    let args = [&replay[..], &["--audit", audit.to_str().unwrap()]].concat();
    let output = cli_through(&proxy, &args).await;
    assert!(output.status.success(), "{}", stderr(&output));
    let arrived = o.aws.receive_all(&o.work_url, 1).await.unwrap();
    assert_eq!(arrived[0].body().map(str::as_bytes), Some(body.as_bytes()), "replayed whole");
    let results: Vec<String> =
        audit_lines(&audit).iter().map(|l| l["result"].as_str().unwrap().to_owned()).collect();
    assert_eq!(results, ["replayed", "object_delete_failed"]);
    let summary = cli(&["audit", audit.to_str().unwrap()]).await;
    assert!(stdout(&summary).contains("1 not deleted"), "{}", stdout(&summary));
}

/// S3's writes with their answers lost once after they landed: the
/// consumer's `PutObject` retried writes the same bytes to the same key (one
/// record, the object the body); the CLI's `DeleteObject` retried finds the
/// object gone, which S3 answers as done (`object_deleted`).
#[tokio::test]
async fn s3_writes_whose_answers_are_lost_are_repeated_harmlessly() {
    let o = Overflow::new(262_144).await;
    let upstream = std::env::var("AWS_ENDPOINT_URL_S3").unwrap();
    let proxy = FaultProxy::start(&upstream).await.unwrap();
    let body = poison_body(300_000);
    proxy.inject(Rule::new("PutObject", Fault::LoseAnswer).times(1));
    let host = o.consumer(&[("AWS_ENDPOINT_URL_S3", proxy.url())]).await;
    let outcome = host.invoke(&o.event(&[("big-1", &body)]), TIMEOUT).await;
    assert_eq!(outcome.batch_item_failures(), Some(vec![]), "quarantined");
    assert_eq!(proxy.counts()["PutObject"], 2, "landed, then retried");
    let records = o.records(1).await;
    assert_eq!(records.len(), 1);
    assert_eq!(o.object(&records[0]).await.as_deref(), Some(body.as_bytes()));

    proxy.clear();
    proxy.inject(Rule::new("DeleteObject", Fault::LoseAnswer).times(1));
    let audit = temp_path("audit.jsonl");
    let args =
        ["replay", "--queue-url", &o.quarantine_url, "--to", &o.work_url, "--yes", "--audit"];
    let output = cli_through(&proxy, &[&args[..], &[audit.to_str().unwrap()]].concat()).await;
    assert!(output.status.success(), "{}", stderr(&output));
    let results: Vec<String> =
        audit_lines(&audit).iter().map(|l| l["result"].as_str().unwrap().to_owned()).collect();
    assert_eq!(results, ["replayed", "object_deleted"]);
    assert_eq!(o.object(&records[0]).await, None);
    assert_eq!(o.aws.receive_all(&o.work_url, 1).await.unwrap().len(), 1, "sent once");
}
