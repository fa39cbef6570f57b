//! The operator's CLI on dead-lettered messages as they are: export byte for
//! byte, dry runs, replay to standard and FIFO queues, a source queue that is
//! gone, discard, the rate and the canary.

use std::collections::BTreeMap;

use aws_sdk_sqs::types::MessageSystemAttributeName;
use e2e_tests::downstream::Downstream;
use e2e_tests::fixtures::{Aws, binary};
use serde_json::Value;

use crate::operator_cli::*;
use crate::operator_cli_resume::quarantined_records;

#[tokio::test]
async fn export_is_byte_exact_and_removes_nothing() {
    let aws = Aws::from_env().await.unwrap();
    let (dlq, sent) = dead_letter_queue(&aws, false, &tricky_bodies()).await;
    let out = temp_path("export.jsonl");
    ok(cli(&["export", "--queue-url", &dlq, "--out", out.to_str().unwrap()]).await);
    let lines: Vec<Value> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), sent.len());
    for line in &lines {
        let id = line["originalMessageId"].as_str().unwrap();
        assert_eq!(line["kind"], "raw");
        assert_eq!(line["body"].as_str().unwrap(), sent[id], "body of {id} byte for byte");
        assert_eq!(line["messageAttributes"]["raw"]["binaryValue"], "AJ+Slv8=");
        assert_eq!(line["messageAttributes"]["raw"]["dataType"], "Binary.bytes");
        assert_eq!(line["messageAttributes"]["note"]["stringValue"], "é 😀 \t");
    }
    assert_eq!(aws.counts(&dlq).await.unwrap(), (sent.len() as u64, 0), "nothing removed");
    let again = cli(&["export", "--queue-url", &dlq, "--out", out.to_str().unwrap()]).await;
    assert!(!again.status.success(), "an existing export is never overwritten");
}

#[tokio::test]
async fn dry_run_changes_nothing() {
    let q = quarantine_filled_by_the_consumer().await;
    let audit = temp_path("audit.jsonl");
    let output = ok(cli(&[
        "replay",
        "--queue-url",
        &q.quarantine_url,
        "--dry-run",
        "--audit",
        audit.to_str().unwrap(),
    ])
    .await);
    assert_eq!(stdout(&output).lines().filter(|l| l.starts_with("would send")).count(), 6);
    assert_eq!(q.aws.counts(&q.quarantine_url).await.unwrap(), (6, 0));
    assert_eq!(q.aws.counts(&q.work_url).await.unwrap(), (0, 0));
    assert!(!audit.exists(), "a dry run writes no audit");
}

#[tokio::test]
async fn replay_sends_the_originals_back_to_their_source_queue_then_deletes() {
    let q = quarantine_filled_by_the_consumer().await;
    let audit = temp_path("audit.jsonl");
    let refused =
        cli(&["replay", "--queue-url", &q.quarantine_url, "--audit", audit.to_str().unwrap()])
            .await;
    assert!(!refused.status.success(), "no --yes and no terminal: refused");
    assert_eq!(q.aws.counts(&q.quarantine_url).await.unwrap(), (6, 0));

    let output = ok(cli(&[
        "replay",
        "--queue-url",
        &q.quarantine_url,
        "--error-code",
        "invalid_json",
        "--yes",
        "--audit",
        audit.to_str().unwrap(),
        "--concurrency",
        "1",
    ])
    .await);
    assert!(stderr(&output).contains("replayed=3"), "{}", stderr(&output));
    let messages = q.aws.receive_all(&q.work_url, 3).await.unwrap();
    let mut got: Vec<(String, String)> = messages
        .iter()
        .map(|m| {
            let trace = m.message_attributes().unwrap()["trace"].string_value().unwrap().to_owned();
            (m.body().unwrap().to_owned(), trace)
        })
        .collect();
    got.sort();
    let mut expected: Vec<(String, String)> = ["p-json-1", "p-json-2", "p-json-3"]
        .iter()
        .map(|id| (q.bodies[*id].clone(), format!("tr-{id}")))
        .collect();
    expected.sort();
    assert_eq!(got, expected, "original bodies and attributes");
    assert_eq!(q.aws.counts(&q.quarantine_url).await.unwrap(), (3, 0), "the other codes stay");

    let lines = audit_lines(&audit);
    assert_eq!(lines.len(), 3);
    for line in &lines {
        assert_eq!(line["result"], "replayed");
        assert_eq!(line["operator"], "arn:aws:sts::123456789012:user/moto");
        assert_eq!(line["errorCode"], "invalid_json");
        let new_id = line["newMessageId"].as_str().unwrap();
        assert!(messages.iter().any(|m| m.message_id() == Some(new_id)));
    }
}

/// A record whose source queue was deleted: kept, said once (its audit
/// line's warning), with SQS's answer and `--to` as the way round it.
#[tokio::test]
async fn a_replay_whose_source_queue_is_gone_says_so_once_and_names_to() {
    let aws = Aws::from_env().await.unwrap();
    let (quarantine, work, _) = quarantined_records(&aws, false, 1).await;
    let work_arn = aws.queue_arn(&work).await.unwrap();
    aws.sqs.delete_queue().queue_url(&work).send().await.unwrap();
    let audit = temp_path("audit.jsonl");
    let path = audit.to_str().unwrap();
    let args = ["replay", "--queue-url", &quarantine, "--yes", "--wait-seconds", "1"];
    let output = cli(&[&args[..], &["--audit", path]].concat()).await;
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let lines = audit_lines(&audit);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["result"], "send_failed");
    let said = stderr(&output);
    assert_eq!(said.matches("NonExistentQueue").count(), 1, "said once:\n{said}");
    let masked = untimed(&said)
        .replace(lines[0]["queueMessageId"].as_str().unwrap(), "[QUEUE MESSAGE ID]")
        .replace(&work_arn, "[SOURCE QUEUE ARN]")
        .replace(&quarantine, "[QUARANTINE]")
        .replace(path, "[AUDIT]");
    insta::assert_snapshot!("source_queue_gone", masked);
    let every = std::time::Duration::from_millis(200);
    aws.wait_for_counts(&quarantine, (1, 0), crate::operator_cli_faults::SETTLED, every)
        .await
        .unwrap();
}

#[tokio::test]
async fn replay_to_a_fifo_queue_keeps_groups_order_and_attributes() {
    let aws = Aws::from_env().await.unwrap();
    let bodies: Vec<String> = (0..12).map(|n| format!("{{\"n\":{n}}}")).collect();
    let (dlq, sent) = dead_letter_queue(&aws, true, &bodies).await;
    let work = new_queue(&aws, "work", true).await;
    let audit = temp_path("audit.jsonl");
    ok(replay_to(&dlq, &work, &audit, &["--concurrency", "1"]).await);
    assert_eq!(aws.counts(&dlq).await.unwrap(), (0, 0));

    let mut by_group: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for _ in 0..20 {
        let output = aws
            .sqs
            .receive_message()
            .queue_url(&work)
            .max_number_of_messages(10)
            .message_system_attribute_names(MessageSystemAttributeName::All)
            .message_attribute_names("All")
            .send()
            .await
            .unwrap();
        let messages = output.messages.unwrap_or_default();
        if messages.is_empty() {
            break;
        }
        for m in &messages {
            let attributes = m.attributes().unwrap();
            let group = attributes[&MessageSystemAttributeName::MessageGroupId].clone();
            let body: Value = serde_json::from_str(m.body().unwrap()).unwrap();
            let n = body["n"].as_u64().unwrap();
            assert_eq!(group, format!("g{}", n % 3), "group kept");
            let dedup = &attributes[&MessageSystemAttributeName::MessageDeduplicationId];
            assert!(dedup.starts_with("replay-"), "{dedup}");
            let attrs = m.message_attributes().unwrap();
            assert_eq!(attrs["n"].string_value(), Some(n.to_string().as_str()));
            assert_eq!(attrs["raw"].binary_value().unwrap().as_ref(), [0, 159, 146, 150, 255]);
            by_group.entry(group).or_default().push(n);
            aws.sqs
                .delete_message()
                .queue_url(&work)
                .receipt_handle(m.receipt_handle().unwrap())
                .send()
                .await
                .unwrap();
        }
    }
    assert_eq!(by_group.values().map(Vec::len).sum::<usize>(), sent.len());
    for (group, ns) in &by_group {
        let mut sorted = ns.clone();
        sorted.sort();
        assert_eq!(ns, &sorted, "group {group} in its original order");
    }
}

#[tokio::test]
async fn discard_deletes_only_what_matches_after_confirmation_and_audits_it() {
    let q = quarantine_filled_by_the_consumer().await;
    let audit = temp_path("audit.jsonl");
    let url = q.quarantine_url.as_str();
    let path = audit.to_str().unwrap();
    let refused =
        cli(&["discard", "--queue-url", url, "--error-code", "invalid_json", "--audit", path])
            .await;
    assert!(!refused.status.success(), "no --yes and no terminal: refused");
    assert_eq!(q.aws.counts(url).await.unwrap(), (6, 0));

    ok(cli(&[
        "discard",
        "--queue-url",
        url,
        "--error-code",
        "invalid_json",
        "--yes",
        "--audit",
        path,
    ])
    .await);
    let lines = audit_lines(&audit);
    let mut ids: Vec<&str> =
        lines.iter().map(|l| l["originalMessageId"].as_str().unwrap()).collect();
    ids.sort();
    assert_eq!(ids, ["p-json-1", "p-json-2", "p-json-3"]);
    assert!(lines.iter().all(|l| l["action"] == "discard" && l["result"] == "discarded"));
    let left = stats_json(&ok(cli(&["stats", "--queue-url", url, "--json"]).await));
    assert_eq!(left["total"], 3);
    assert_eq!(left["byErrorCode"].get("invalid_json"), None, "{left}");
    assert_eq!(q.aws.counts(&q.work_url).await.unwrap(), (0, 0), "nothing sent anywhere");
}

#[tokio::test]
async fn rate_spaces_the_sends() {
    let (aws, dlq, _, work, audit) = replayable(4).await;
    ok(replay_to(&dlq, &work, &audit, &["--rate", "0.8"]).await);
    let mut started: Vec<jiff::Timestamp> = audit_lines(&audit)
        .iter()
        .map(|l| l["started"].as_str().unwrap().parse().unwrap())
        .collect();
    started.sort();
    assert_eq!(started.len(), 4);
    for pair in started.windows(2) {
        let gap = pair[1].duration_since(pair[0]);
        // Below one a second, one message a send, and the pacer never starts a
        // send early: 1,250 ms apart at 0.8/s (times are whole milliseconds).
        assert!(gap >= jiff::SignedDuration::from_millis(1_249), "{gap:?}");
    }
    assert_eq!(aws.counts(&work).await.unwrap(), (4, 0));
}

#[tokio::test]
async fn canary_stops_when_a_replayed_message_is_quarantined_again() {
    let q = quarantine_filled_by_the_consumer().await;
    let audit = temp_path("audit.jsonl");
    // The work queue's consumer, as deployed: it quarantines the still-broken messages again.
    let downstream = Downstream::start().await.unwrap();
    let url = downstream.url();
    let worker = e2e_tests::process::Process::start(
        &binary("sqs-worker").unwrap(),
        &[
            ("QUEUE_URL", q.work_url.as_str()),
            ("QUARANTINE_QUEUE_URL", q.quarantine_url.as_str()),
            ("DOWNSTREAM_URL", url.as_str()),
            ("RECEIVE_WAIT_SECONDS", "1"),
            ("WORKER_POLLERS", "1"),
        ],
    )
    .unwrap();
    let output = cli(&[
        "replay",
        "--queue-url",
        &q.quarantine_url,
        "--error-code",
        "invalid_json",
        "--canary",
        "1",
        "--canary-wait",
        "5",
        "--yes",
        "--audit",
        audit.to_str().unwrap(),
    ])
    .await;
    drop(worker);
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    assert!(stderr(&output).contains("canary failed: 1 of 1"), "{}", stderr(&output));
    assert_eq!(audit_lines(&audit).len(), 1, "one replayed, then stopped");
    let stats = stats_json(&ok(cli(&["stats", "--queue-url", &q.quarantine_url, "--json"]).await));
    assert_eq!(stats["total"], 6, "5 untouched + the canary quarantined again");
    assert_eq!(stats["byErrorCode"]["invalid_json"], 3);
}
