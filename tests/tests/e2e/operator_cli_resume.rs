//! The operator's CLI killed mid-replay and run again: every message arrives,
//! once on a FIFO queue, repeats within one batch a kill on a standard queue,
//! and what the audit trail says was sent is not sent again.

use std::collections::BTreeMap;
use std::time::Duration;

use e2e_tests::fault_proxy::{Fault, FaultProxy, Rule};
use e2e_tests::fixtures::{Aws, binary, sqs_record, unique};
use serde_json::{Value, json};

use crate::operator_cli::*;

/// A quarantine queue holding `count` records as the consumer writes them
/// (core's own `QuarantineRecord`), whose source is a new work queue (FIFO:
/// 3 groups); returns (quarantine, work queue, original ids).
pub(crate) async fn quarantined_records(
    aws: &Aws,
    fifo: bool,
    count: usize,
) -> (String, String, Vec<String>) {
    use backpressure_batch::quarantine::record_for;
    use backpressure_batch::record::SqsRecord;
    use backpressure_batch::{ErrorCode, Labels};

    let work = new_queue(aws, "work", fifo).await;
    let arn = aws.queue_arn(&work).await.unwrap();
    let quarantine = aws.create_queue(&unique("quarantine")).await.unwrap();
    let ids: Vec<String> = (0..count).map(|n| format!("orig-{n}")).collect();
    let bodies: Vec<String> = ids
        .iter()
        .enumerate()
        .map(|(n, id)| {
            let mut event = sqs_record(id, Value::String(format!("{{\"n\":{n}}}")), &arn);
            if fifo {
                event["attributes"]["MessageGroupId"] = json!(format!("g{}", n % 3));
            }
            let event: SqsRecord = serde_json::from_value(event).unwrap();
            let (code, labels) = (&ErrorCode::DownstreamRejected, &Labels::default());
            let now = std::time::SystemTime::now();
            let record = record_for(&event, code, "HTTP 422", labels, "test", now);
            record.to_sqs_json().unwrap()
        })
        .collect();
    for chunk in bodies.chunks(10) {
        aws.send_batch(&quarantine, chunk).await.unwrap();
    }
    (quarantine, work, ids)
}

/// Replays the quarantine queue to its work queue, killing the CLI with
/// SIGKILL three times at random points mid-replay, then reruns it until it
/// finishes; returns how often each original body arrived, the kill and run
/// counts, and the audit lines. The CLI's calls go through a proxy that
/// delays each `DeleteMessageBatch` by 200 ms, so that a kill often lands
/// between a send on record and its delete.
async fn replay_killed_three_times(
    aws: &Aws,
    quarantine: &str,
    work: &str,
) -> (BTreeMap<String, usize>, usize, usize, Vec<Value>) {
    let audit = temp_path("audit.jsonl");
    let proxy = FaultProxy::start(&std::env::var("AWS_ENDPOINT_URL_SQS").unwrap()).await.unwrap();
    proxy.inject(Rule::new("DeleteMessageBatch", Fault::Delay(Duration::from_millis(200))));
    let args = [
        "--endpoint-url",
        proxy.url(),
        "replay",
        "--queue-url",
        quarantine,
        "--rate",
        "40",
        "--visibility-timeout",
        "2",
        "--wait-seconds",
        "1",
        "--yes",
        "--audit",
        audit.to_str().unwrap(),
    ];
    let mut kills = 0;
    for _ in 0..3 {
        let mut child = tokio::process::Command::new(binary("sqs-backpressure").unwrap())
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Kill once this run has put a random number of further lines on record:
        // mid-replay, at a random point of its receive-send-audit-delete cycle.
        let before = audit_lines(&audit).len();
        let target = before + 1 + fastrand::usize(0..8);
        let deadline = tokio::time::Instant::now() + TIMEOUT;
        while audit_lines(&audit).len() < target
            && child.try_wait().unwrap().is_none()
            && tokio::time::Instant::now() < deadline
        {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        tokio::time::sleep(Duration::from_millis(fastrand::u64(0..60))).await;
        if child.try_wait().unwrap().is_none() {
            child.start_kill().unwrap(); // SIGKILL
            kills += 1;
        }
        child.wait().await.unwrap();
        // What the killed run held is visible again after its 2 s lease.
        tokio::time::sleep(Duration::from_millis(2_100)).await;
    }
    let mut runs = 0;
    loop {
        runs += 1;
        let output = cli(&args).await;
        if output.status.success() {
            break;
        }
        // 4: what a killed run held is still leased; 5: a 2 s lease lapsed mid-read on a busy
        // machine. Either way the operator runs the same command again.
        assert!(matches!(output.status.code(), Some(4 | 5)), "{}", stderr(&output));
        assert!(runs < 20, "never finished: {}", stderr(&output));
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    let mut arrived: BTreeMap<String, usize> = BTreeMap::new();
    for _ in 0..60 {
        let output = aws
            .sqs
            .receive_message()
            .queue_url(work)
            .max_number_of_messages(10)
            .send()
            .await
            .unwrap();
        let messages = output.messages.unwrap_or_default();
        if messages.is_empty() {
            break;
        }
        for m in messages {
            *arrived.entry(m.body().unwrap().to_owned()).or_default() += 1;
            aws.sqs
                .delete_message()
                .queue_url(work)
                .receipt_handle(m.receipt_handle().unwrap())
                .send()
                .await
                .unwrap();
        }
    }
    (arrived, kills, runs, audit_lines(&audit))
}

/// Each quarantine record on record as `replayed` once, and the count of
/// `deleted_on_resume` lines.
fn replayed_once_each(lines: &[Value], records: usize) -> usize {
    let mut replayed: BTreeMap<String, usize> = BTreeMap::new();
    for line in lines.iter().filter(|l| l["result"] == "replayed") {
        *replayed.entry(line["queueMessageId"].as_str().unwrap().to_owned()).or_default() += 1;
    }
    assert_eq!(replayed.len(), records, "every record on record as replayed");
    assert!(replayed.values().all(|n| *n == 1), "a message on record as sent was sent again");
    lines.iter().filter(|l| l["result"] == "deleted_on_resume").count()
}

#[tokio::test]
async fn killed_mid_replay_to_a_fifo_queue_and_resumed_every_message_arrives_once() {
    let aws = Aws::from_env().await.unwrap();
    let (quarantine, work, ids) = quarantined_records(&aws, true, 60).await;
    let (arrived, kills, runs, lines) = replay_killed_three_times(&aws, &quarantine, &work).await;
    assert_eq!(kills, 3, "each run killed mid-replay");
    assert_eq!(aws.counts(&quarantine).await.unwrap(), (0, 0), "nothing left in quarantine");
    let expected: BTreeMap<String, usize> =
        (0..ids.len()).map(|n| (format!("{{\"n\":{n}}}"), 1)).collect();
    assert_eq!(
        arrived, expected,
        "every original exactly once after {kills} kills and {runs} reruns"
    );
    let resumed = replayed_once_each(&lines, ids.len());
    assert!(resumed >= 1, "no kill landed between a send on record and its delete: {lines:?}");
    eprintln!(
        "fifo: kills={kills} reruns={runs} audit_lines={} deleted_on_resume={resumed}",
        lines.len()
    );
}

#[tokio::test]
async fn killed_mid_replay_to_a_standard_queue_and_resumed_nothing_is_lost_and_repeats_stay_within_one_batch_a_kill()
 {
    let aws = Aws::from_env().await.unwrap();
    let (quarantine, work, ids) = quarantined_records(&aws, false, 60).await;
    let (arrived, kills, runs, lines) = replay_killed_three_times(&aws, &quarantine, &work).await;
    assert_eq!(kills, 3, "each run killed mid-replay");
    assert_eq!(aws.counts(&quarantine).await.unwrap(), (0, 0), "nothing left in quarantine");
    for n in 0..ids.len() {
        assert!(arrived.contains_key(&format!("{{\"n\":{n}}}")), "message {n} lost");
    }
    assert_eq!(arrived.len(), ids.len(), "nothing but the originals arrived");
    // A kill between SQS accepting a send and its audit line reaching the disk
    // repeats that batch: at most 10 messages (one batch) per loop per kill.
    let repeats: usize = arrived.values().map(|n| n - 1).sum();
    assert!(repeats <= kills * 10 * 4, "{repeats} repeats after {kills} kills");
    let resumed = replayed_once_each(&lines, ids.len());
    eprintln!(
        "standard: kills={kills} reruns={runs} repeats={repeats} deleted_on_resume={resumed}"
    );
}

#[tokio::test]
async fn a_rerun_deletes_what_the_audit_says_was_sent_without_sending_it_again() {
    let (aws, dlq, sent, work, audit) = replayable(5).await;
    // As an interrupted run leaves it: two sends confirmed and on record, not yet deleted.
    let confirmed: Vec<&String> = sent.keys().take(2).collect();
    let lines: String = confirmed
        .iter()
        .map(|id| {
            json!({"time": "2026-11-30T12:00:00.000Z", "operator": "arn:aws:sts::123456789012:user/moto",
                   "action": "replay", "queueUrl": dlq, "queueMessageId": id, "originalMessageId": id,
                   "newMessageId": "n", "destination": work, "errorCode": null, "result": "replayed",
                   "started": "2026-11-30T12:00:00.000Z"})
            .to_string()
                + "\n"
        })
        .collect();
    std::fs::write(&audit, lines).unwrap();
    let output = ok(replay_to(&dlq, &work, &audit, &[]).await);
    assert!(
        stderr(&output).contains("replayed=3") && stderr(&output).contains("deleted_on_resume=2")
    );
    assert_eq!(aws.counts(&dlq).await.unwrap(), (0, 0));
    let received = aws.receive_all(&work, 3).await.unwrap();
    let mut bodies: Vec<&str> = received.iter().map(|m| m.body().unwrap()).collect();
    bodies.sort();
    let mut expected: Vec<&str> =
        sent.iter().filter(|(id, _)| !confirmed.contains(id)).map(|(_, b)| b.as_str()).collect();
    expected.sort();
    assert_eq!(bodies, expected, "the two on record were not sent again");
    let resumed = audit_lines(&audit).iter().filter(|l| l["result"] == "deleted_on_resume").count();
    assert_eq!(resumed, 2);
}
