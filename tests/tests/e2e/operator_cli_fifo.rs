//! The operator's CLI on what SQS itself decides, on moto and on LocalStack's
//! SQS: FIFO groups held back while their first messages are in flight (groups
//! of 1, 10, 11 and 25), a filtered replay and a canary on such a queue, and
//! fair queues (a standard queue whose messages carry group ids).

use std::collections::BTreeMap;
use std::process::Output;

use aws_sdk_sqs::types::{MessageAttributeValue, QueueAttributeName, SendMessageBatchRequestEntry};
use e2e_tests::fixtures::{Aws, Sqs, binary, unique};
use serde_json::{Value, json};

use crate::operator_cli::{audit_lines, stderr, stdout, temp_path};

/// Runs the CLI with its SQS calls on `sqs` (STS stays on moto).
pub(crate) async fn cli_on(sqs: Sqs, args: &[&str]) -> Output {
    tokio::process::Command::new(binary("sqs-backpressure").unwrap())
        .args(args)
        .env("AWS_ENDPOINT_URL_SQS", sqs.endpoint().unwrap())
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap()
}

fn code(output: &Output) -> Option<i32> {
    output.status.code()
}

fn show(output: &Output) -> String {
    format!("{:?}\nstdout: {}\nstderr: {}", output.status, stdout(output), stderr(output))
}

pub(crate) async fn aws_on(sqs: Sqs) -> Aws {
    Aws::from_env().await.unwrap().with_sqs(sqs).await.unwrap()
}

pub(crate) async fn queue(aws: &Aws, prefix: &str, fifo: bool) -> String {
    let name = if fifo { format!("{}.fifo", unique(prefix)) } else { unique(prefix) };
    let mut create = aws.sqs.create_queue().queue_name(name);
    if fifo {
        create = create.attributes(QueueAttributeName::FifoQueue, "true");
    }
    create.send().await.unwrap().queue_url.unwrap()
}

/// Sends `bodies` to `url` in order, each with its group (and, FIFO, a
/// deduplication id); returns the message ids in the same order.
pub(crate) async fn send_in_order(
    aws: &Aws,
    url: &str,
    bodies: &[(String, String)],
) -> Vec<String> {
    let fifo = url.ends_with(".fifo");
    let mut ids = Vec::new();
    for chunk in bodies.chunks(10) {
        let entries = chunk
            .iter()
            .enumerate()
            .map(|(i, (group, body))| {
                let mut entry = SendMessageBatchRequestEntry::builder()
                    .id(format!("e{i}"))
                    .message_body(body)
                    .message_group_id(group)
                    .message_attributes(
                        "kept",
                        MessageAttributeValue::builder()
                            .data_type("String")
                            .string_value(format!("attribute of {body}"))
                            .build()
                            .unwrap(),
                    );
                if fifo {
                    entry = entry.message_deduplication_id(unique("d"));
                }
                entry.build().unwrap()
            })
            .collect();
        let sent =
            aws.sqs.send_message_batch().queue_url(url).set_entries(Some(entries)).send().await;
        let sent = sent.unwrap();
        assert!(sent.failed().is_empty(), "{:?}", sent.failed());
        let mut successful: Vec<_> = sent.successful().to_vec();
        successful.sort_by_key(|s| s.id()[1..].parse::<usize>().unwrap());
        ids.extend(successful.iter().map(|s| s.message_id().to_owned()));
    }
    ids
}

/// Groups of 25, 11, 10 and 1 raw messages; returns (group, body) in send order.
pub(crate) fn grouped_bodies() -> Vec<(String, String)> {
    [("g25", 25), ("g11", 11), ("g10", 10), ("g1", 1)]
        .iter()
        .flat_map(|(group, n)| (0..*n).map(move |i| ((*group).to_owned(), format!("{group}-{i}"))))
        .collect()
}

pub(crate) fn by_group(bodies: &[(String, String)]) -> BTreeMap<String, Vec<String>> {
    let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (group, body) in bodies {
        groups.entry(group.clone()).or_default().push(body.clone());
    }
    groups
}

async fn fifo_reads(sqs: Sqs) {
    let aws = aws_on(sqs).await;
    let url = queue(&aws, "dlq", true).await;
    let bodies = grouped_bodies();
    let ids = send_in_order(&aws, &url, &bodies).await;

    // Without moving: the first messages of each group only, and said so.
    let held = cli_on(sqs, &["stats", "--queue-url", &url, "--json"]).await;
    assert_eq!(code(&held), Some(5), "{sqs:?}: {}", show(&held));
    let stats: Value = serde_json::from_str(&stdout(&held)).unwrap();
    assert_eq!(stats["complete"], false, "{stats}");
    assert_eq!(stats["queueCounted"], 47, "{stats}");
    assert!(stats["read"].as_u64().unwrap() < 47, "{stats}");
    assert_eq!(stats["unread"].as_u64().unwrap() + stats["read"].as_u64().unwrap(), 47);
    assert!(stderr(&held).contains("--rotate-groups"), "{}", stderr(&held));
    assert_eq!(aws.counts(&url).await.unwrap(), (47, 0), "{sqs:?}: all visible again");
    let table = cli_on(sqs, &["stats", "--queue-url", &url]).await;
    let first = stdout(&table).lines().next().unwrap_or_default().to_owned();
    assert!(
        first.starts_with("INCOMPLETE: ") && first.contains(" of the 47 message(s)"),
        "the first line says the read was incomplete: {}",
        show(&table)
    );

    let partial = temp_path("export.jsonl");
    let export =
        cli_on(sqs, &["export", "--queue-url", &url, "--out", partial.to_str().unwrap()]).await;
    assert_eq!(code(&export), Some(5), "{sqs:?}: {}", show(&export));
    assert!(!partial.exists(), "an incomplete export never takes the evidence's name");
    let incomplete = partial.with_extension("jsonl.incomplete");
    assert!(incomplete.exists(), "{}", show(&export));

    // Moving each message to the end of its group: every message, in order, ids kept.
    let out = temp_path("export.jsonl");
    let export = cli_on(
        sqs,
        &["export", "--queue-url", &url, "--rotate-groups", "--out", out.to_str().unwrap()],
    )
    .await;
    assert_eq!(code(&export), Some(0), "{sqs:?}: {}", show(&export));
    let lines: Vec<Value> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 47, "{sqs:?}");
    let exported: Vec<(String, String)> = lines
        .iter()
        .map(|l| {
            (
                l["messageGroupId"].as_str().unwrap().to_owned(),
                l["body"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(by_group(&exported), by_group(&bodies), "{sqs:?}: each group in its order");
    let mut exported_ids: Vec<&str> =
        lines.iter().map(|l| l["queueMessageId"].as_str().unwrap()).collect();
    let mut sent_ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    exported_ids.sort_unstable();
    sent_ids.sort_unstable();
    assert_eq!(exported_ids, sent_ids, "{sqs:?}: the first ids, not the copies'");

    // A second moving read sees the moved copies as the originals.
    let again = cli_on(sqs, &["stats", "--queue-url", &url, "--rotate-groups", "--json"]).await;
    assert_eq!(code(&again), Some(0), "{sqs:?}: {}", show(&again));
    let stats: Value = serde_json::from_str(&stdout(&again)).unwrap();
    assert_eq!((stats["total"].as_u64(), stats["complete"].as_bool()), (Some(47), Some(true)));

    let left = aws.drain_by_group(&url).await.unwrap();
    assert_eq!(left, by_group(&bodies), "{sqs:?}: nothing lost, each group in its order");
}

#[tokio::test]
async fn fifo_reads_say_what_they_missed_and_read_every_group_when_moving_on_moto() {
    fifo_reads(Sqs::Moto).await;
}

#[tokio::test]
async fn fifo_reads_say_what_they_missed_and_read_every_group_when_moving_on_localstack() {
    fifo_reads(Sqs::LocalStack).await;
}

#[tokio::test]
async fn fifo_reads_say_what_they_missed_and_read_every_group_when_moving_on_fauxqs() {
    fifo_reads(Sqs::Fauxqs).await;
}

/// A quarantine record, as the consumer writes it, of a message of `group`
/// from `source_arn`.
pub(crate) fn record(id: &str, code: &str, group: &str, source_arn: &str, body: &str) -> String {
    json!({
        "messageId": id, "sourceQueueArn": source_arn, "errorCode": code,
        "errorDetail": "test", "lastSeen": "2026-11-30T12:00:00.000Z",
        "remediationStatus": "new", "messageGroupId": group, "body": body,
        "attributes": {}, "messageAttributes": {}
    })
    .to_string()
}

async fn filtered_fifo_replay(sqs: Sqs) {
    let aws = aws_on(sqs).await;
    let work = queue(&aws, "work", false).await;
    let work_arn = aws.queue_arn(&work).await.unwrap();
    let quarantine = queue(&aws, "quarantine", true).await;
    // Group "big" of 25 with every other record code_a (13), group "small" of 3 (2 code_a).
    let records: Vec<(String, String)> = [("big", 25), ("small", 3)]
        .iter()
        .flat_map(|(group, n)| (0..*n).map(move |i| (*group, i)))
        .map(|(group, i)| {
            let code = if i % 2 == 0 { "code_a" } else { "code_b" };
            let id = format!("{group}-{i}");
            (group.to_owned(), record(&id, code, group, &work_arn, &format!("{{\"n\":\"{id}\"}}")))
        })
        .collect();
    send_in_order(&aws, &quarantine, &records).await;
    let audit = temp_path("audit.jsonl");
    let replay = |rotate: bool| {
        let (quarantine, audit) = (quarantine.clone(), audit.clone());
        async move {
            let mut args = vec!["replay", "--queue-url", &quarantine, "--error-code", "code_a"];
            args.extend(["--yes", "--audit", audit.to_str().unwrap()]);
            if rotate {
                args.push("--rotate-groups");
            }
            cli_on(sqs, &args).await
        }
    };
    let held = replay(false).await;
    assert_eq!(code(&held), Some(5), "{sqs:?}: {}", show(&held));
    let first = aws.counts(&work).await.unwrap().0;
    assert!(first < 15, "{sqs:?}: {first} of 15 replayed before the groups were held");

    let moved = replay(true).await;
    assert_eq!(code(&moved), Some(0), "{sqs:?}: {}", show(&moved));
    assert_eq!(aws.counts(&work).await.unwrap(), (15, 0), "{sqs:?}: each code_a record once");
    let replayed = audit_lines(&audit).iter().filter(|l| l["result"] == "replayed").count();
    assert_eq!(replayed, 15, "{sqs:?}");
    let left = aws.drain_by_group(&quarantine).await.unwrap();
    let ids: BTreeMap<String, Vec<String>> = left
        .into_iter()
        .map(|(g, bodies)| {
            let ids = bodies
                .iter()
                .map(|b| serde_json::from_str::<Value>(b).unwrap()["messageId"].to_string())
                .collect();
            (g, ids)
        })
        .collect();
    let odd = |group: &str, n: usize| -> Vec<String> {
        (1..n).step_by(2).map(|i| format!("\"{group}-{i}\"")).collect()
    };
    assert_eq!(ids["big"], odd("big", 25), "{sqs:?}: the code_b records, in order");
    assert_eq!(ids["small"], odd("small", 3), "{sqs:?}");
}

#[tokio::test]
async fn a_filtered_replay_of_a_fifo_queue_reaches_every_group_on_moto() {
    filtered_fifo_replay(Sqs::Moto).await;
}

#[tokio::test]
async fn a_filtered_replay_of_a_fifo_queue_reaches_every_group_on_localstack() {
    filtered_fifo_replay(Sqs::LocalStack).await;
}

#[tokio::test]
async fn a_filtered_replay_of_a_fifo_queue_reaches_every_group_on_fauxqs() {
    filtered_fifo_replay(Sqs::Fauxqs).await;
}

async fn fair_queue_replay(sqs: Sqs) {
    let aws = aws_on(sqs).await;
    let work = queue(&aws, "work", false).await;
    let work_arn = aws.queue_arn(&work).await.unwrap();
    let quarantine = queue(&aws, "quarantine", false).await;
    let records: Vec<(String, String)> = ["tenant-1", "tenant-2"]
        .iter()
        .map(|t| ((*t).to_owned(), record(&format!("m-{t}"), "code_a", t, &work_arn, "{}")))
        .collect();
    send_in_order(&aws, &quarantine, &records).await;
    let audit = temp_path("audit.jsonl");
    let output = cli_on(
        sqs,
        &["replay", "--queue-url", &quarantine, "--yes", "--audit", audit.to_str().unwrap()],
    )
    .await;
    assert_eq!(code(&output), Some(0), "{sqs:?}: {}", show(&output));
    let groups = aws.drain_by_group(&work).await.unwrap();
    let tenants: Vec<&String> = groups.keys().collect();
    assert_eq!(tenants, ["tenant-1", "tenant-2"], "{sqs:?}: each tenant's group kept: {groups:?}");
}

#[tokio::test]
async fn a_replay_to_a_fair_queue_keeps_each_tenants_group_on_moto() {
    fair_queue_replay(Sqs::Moto).await;
}

#[tokio::test]
async fn a_replay_to_a_fair_queue_keeps_each_tenants_group_on_localstack() {
    fair_queue_replay(Sqs::LocalStack).await;
}

// Not on fauxqs: fauxqs drops a standard queue's MessageGroupId (it has no fair queues)
// (docs/testing.md).

async fn interrupted_move(sqs: Sqs) {
    let aws = aws_on(sqs).await;
    let url = queue(&aws, "dlq", true).await;
    let ids = send_in_order(&aws, &url, &[("g".into(), "one".into())]).await;
    // What a run killed between a copy's send and the original's delete leaves behind.
    let origin = json!({"id": ids[0], "movedBy": "an-earlier-run"}).to_string();
    aws.sqs
        .send_message()
        .queue_url(&url)
        .message_body("one")
        .message_group_id("g")
        .message_deduplication_id("left-behind")
        .message_attributes(
            "sqs-backpressure-origin",
            MessageAttributeValue::builder()
                .data_type("String")
                .string_value(origin)
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    let read = cli_on(sqs, &["stats", "--queue-url", &url, "--json"]).await;
    assert_eq!(code(&read), Some(0), "{sqs:?}: {}", show(&read));
    let stats: Value = serde_json::from_str(&stdout(&read)).unwrap();
    assert_eq!(stats["total"], 1, "{sqs:?}: one message, read once: {stats}");
    let moved = cli_on(sqs, &["stats", "--queue-url", &url, "--rotate-groups", "--json"]).await;
    assert_eq!(code(&moved), Some(0), "{sqs:?}: {}", show(&moved));
    let left = aws.drain_by_group(&url).await.unwrap();
    assert_eq!(left["g"], ["one"], "{sqs:?}: the second copy removed, the message kept");
}

#[tokio::test]
async fn a_copy_left_by_an_interrupted_move_is_read_once_and_removed_by_the_next_on_moto() {
    interrupted_move(Sqs::Moto).await;
}

#[tokio::test]
async fn a_copy_left_by_an_interrupted_move_is_read_once_and_removed_by_the_next_on_localstack() {
    interrupted_move(Sqs::LocalStack).await;
}

// Not on fauxqs: fauxqs hands out one message of a FIFO group at a time, where SQS hands out up to
// 10, so the copy and its original are never in one receive (docs/testing.md).
