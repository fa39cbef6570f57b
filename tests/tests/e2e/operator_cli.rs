//! sqs-backpressure (the operator's CLI) end to end: the binary as a process
//! against moto, on quarantine records the real consumer wrote and on raw
//! dead-lettered messages.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::process::Output;
use std::time::Duration;

use aws_sdk_sqs::types::{
    MessageAttributeValue, MessageSystemAttributeName, QueueAttributeName,
    SendMessageBatchRequestEntry,
};
use aws_smithy_types::Blob;
use e2e_tests::downstream::Downstream;
use e2e_tests::fault_proxy::{Fault, FaultProxy, Rule};
use e2e_tests::fixtures::{Aws, binary, sqs_record, unique};
use e2e_tests::runtime_host::LambdaHost;
use serde_json::{Value, json};

const TIMEOUT: Duration = Duration::from_secs(30);

/// Runs the CLI to its end.
pub(crate) async fn cli(args: &[&str]) -> Output {
    tokio::process::Command::new(binary("sqs-backpressure").unwrap())
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap()
}

pub(crate) fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub(crate) fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn ok(output: Output) -> Output {
    assert!(
        output.status.success(),
        "{:?}\n{}\n{}",
        output.status,
        stdout(&output),
        stderr(&output)
    );
    output
}

pub(crate) fn temp_path(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(unique("cli"));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

pub(crate) fn audit_lines(path: &PathBuf) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A work queue and a quarantine queue holding the records the real consumer
/// wrote for poison messages; returns the poison messages' ids by the error
/// code the consumer gave them.
struct Quarantine {
    aws: Aws,
    work_url: String,
    quarantine_url: String,
    bodies: HashMap<String, String>,
}

async fn quarantine_filled_by_the_consumer() -> Quarantine {
    let aws = Aws::from_env().await.unwrap();
    let work_url = aws.create_queue(&unique("work")).await.unwrap();
    let work_arn = aws.queue_arn(&work_url).await.unwrap();
    let quarantine_url = aws.create_queue(&unique("quarantine")).await.unwrap();
    let poison = [
        ("p-json-1", "this is not json".to_owned()),
        ("p-json-2", "{\"unclosed\": ".to_owned()),
        ("p-json-3", "<xml/>".to_owned()),
        ("p-schema-a1", json!({"schemaVersion": "2.0", "operation": "invoice.create", "tenantId": "tenant-a", "idempotencyKey": "k1"}).to_string()),
        ("p-schema-a2", json!({"schemaVersion": "2.0", "operation": "invoice.void", "tenantId": "tenant-a", "idempotencyKey": "k2"}).to_string()),
        ("p-schema-b", json!({"schemaVersion": "1", "operation": "invoice.create", "idempotencyKey": "k3"}).to_string()),
    ];
    let records: Vec<Value> = poison
        .iter()
        .map(|(id, body)| {
            let mut record = sqs_record(id, Value::String(body.clone()), &work_arn);
            record["messageAttributes"] =
                json!({"trace": {"stringValue": format!("tr-{id}"), "dataType": "String"}});
            record
        })
        .collect();
    let downstream = Downstream::start().await.unwrap();
    let url = downstream.url();
    let env = [("DOWNSTREAM_URL", url.as_str()), ("QUARANTINE_QUEUE_URL", quarantine_url.as_str())];
    let host = LambdaHost::start(&binary("batch-consumer").unwrap(), &env).await.unwrap();
    let outcome = host.invoke(&json!({"Records": records}), TIMEOUT).await;
    assert_eq!(outcome.batch_item_failures(), Some(vec![]), "all six quarantined");
    assert_eq!(aws.counts(&quarantine_url).await.unwrap(), (6, 0));
    let bodies = poison.iter().map(|(id, body)| ((*id).to_owned(), body.clone())).collect();
    Quarantine { aws, work_url, quarantine_url, bodies }
}

fn stats_json(output: &Output) -> Value {
    serde_json::from_str(&stdout(output)).unwrap()
}

#[tokio::test]
async fn stats_lists_and_filters_read_the_consumers_records_without_consuming_them() {
    let q = quarantine_filled_by_the_consumer().await;
    let url = q.quarantine_url.as_str();
    let work_arn = q.aws.queue_arn(&q.work_url).await.unwrap();

    let all = stats_json(&ok(cli(&["stats", "--queue-url", url, "--json"]).await));
    assert_eq!(all["total"], 6);
    assert_eq!(all["byErrorCode"]["invalid_json"], 3, "{all}");
    assert_eq!(
        all["byErrorCode"].as_object().unwrap().values().map(|v| v.as_u64().unwrap()).sum::<u64>(),
        6
    );
    assert_eq!(all["byTenant"]["tenant-a"], 2);
    assert_eq!(all["bySourceQueue"][&work_arn], 6);
    assert_eq!(all["byAge"]["under1h"], 6);
    let table = stdout(&ok(cli(&["stats", "--queue-url", url]).await));
    assert!(
        table.contains("ERROR CODE")
            && table.contains("invalid_json")
            && table.contains("6 message(s)")
            && table.starts_with("Complete: 6 message(s) read, every one the queue counted (6)"),
        "{table}"
    );

    let filtered = stats_json(&ok(cli(&[
        "stats",
        "--queue-url",
        url,
        "--json",
        "--error-code",
        "invalid_json",
    ])
    .await));
    assert_eq!(filtered["total"], 3);
    let tenant = stats_json(&ok(cli(&[
        "stats",
        "--queue-url",
        url,
        "--json",
        "--tenant",
        "tenant-a",
        "--operation",
        "invoice.void",
    ])
    .await));
    assert_eq!(tenant["total"], 1, "filters combine");
    let none =
        stats_json(&ok(cli(&["stats", "--queue-url", url, "--json", "--until", "1h"]).await));
    assert_eq!(none["total"], 0, "all quarantined within the hour");

    let listed =
        stdout(&ok(
            cli(&["list", "--queue-url", url, "--json", "--error-code", "invalid_json"]).await
        ));
    let mut ids: Vec<String> = listed
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["originalMessageId"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    ids.sort();
    assert_eq!(ids, ["p-json-1", "p-json-2", "p-json-3"]);
    let text = stdout(&ok(cli(&["list", "--queue-url", url, "--limit", "2"]).await));
    assert!(text.contains("2 shown"), "{text}");
    assert!(text.starts_with("Stopped at --limit 2, with more messages matching"), "{text}");
    let whole = stdout(&ok(cli(&["list", "--queue-url", url, "--limit", "6"]).await));
    assert!(whole.starts_with("Complete: 6 message(s) read"), "{whole}");

    let shown: Value = serde_json::from_str(&stdout(&ok(cli(&[
        "show",
        "--queue-url",
        url,
        "--message-id",
        "p-json-2",
    ])
    .await)))
    .unwrap();
    assert_eq!(shown["body"], q.bodies["p-json-2"]);
    assert!(!shown["errorDetail"].as_str().unwrap().is_empty());
    let missing = cli(&["show", "--queue-url", url, "--message-id", "nope"]).await;
    assert!(!missing.status.success() && stderr(&missing).contains("nope"));

    assert_eq!(q.aws.counts(url).await.unwrap(), (6, 0), "every read record visible again");
    let bad = cli(&["stats", "--queue-url", url, "--since", "yesterday"]).await;
    assert_eq!(bad.status.code(), Some(2), "a usage error");
    assert!(
        stderr(&bad).contains("--since") && stderr(&bad).contains("yesterday"),
        "{}",
        stderr(&bad)
    );
}

fn attribute(data_type: &str, text: Option<&str>, bytes: Option<&[u8]>) -> MessageAttributeValue {
    let mut value = MessageAttributeValue::builder().data_type(data_type);
    if let Some(text) = text {
        value = value.string_value(text);
    }
    if let Some(bytes) = bytes {
        value = value.binary_value(Blob::new(bytes.to_vec()));
    }
    value.build().unwrap()
}

/// A new queue named after `prefix`, FIFO or standard.
async fn new_queue(aws: &Aws, prefix: &str, fifo: bool) -> String {
    let name = if fifo { format!("{}.fifo", unique(prefix)) } else { unique(prefix) };
    let mut create = aws.sqs.create_queue().queue_name(name);
    if fifo {
        create = create.attributes(QueueAttributeName::FifoQueue, "true");
    }
    create.send().await.unwrap().queue_url.unwrap()
}

/// `replay --queue-url from --to to --yes --audit audit`, plus `extra`.
async fn replay_to(from: &str, to: &str, audit: &std::path::Path, extra: &[&str]) -> Output {
    let mut args = vec!["replay", "--queue-url", from, "--to", to, "--yes", "--audit"];
    args.push(audit.to_str().unwrap());
    args.extend_from_slice(extra);
    cli(&args).await
}

/// Raw messages on a "dead-letter queue", with bodies and attributes that
/// test exactness; returns (dlq url, sent bodies by message id).
pub(crate) async fn dead_letter_queue(
    aws: &Aws,
    fifo: bool,
    bodies: &[String],
) -> (String, BTreeMap<String, String>) {
    let url = new_queue(aws, "dlq", fifo).await;
    let mut sent = BTreeMap::new();
    for (chunk_index, chunk) in bodies.chunks(10).enumerate() {
        let entries = chunk
            .iter()
            .enumerate()
            .map(|(i, body)| {
                let n = chunk_index * 10 + i;
                let mut entry = SendMessageBatchRequestEntry::builder()
                    .id(format!("e{i}"))
                    .message_body(body)
                    .message_attributes("n", attribute("Number", Some(&n.to_string()), None))
                    .message_attributes(
                        "raw",
                        attribute("Binary.bytes", None, Some(&[0, 159, 146, 150, 255])),
                    )
                    .message_attributes("note", attribute("String.custom", Some("é 😀 \t"), None));
                if fifo {
                    entry = entry
                        .message_group_id(format!("g{}", n % 3))
                        .message_deduplication_id(format!("d{n}"));
                }
                entry.build().unwrap()
            })
            .collect();
        let output = aws
            .sqs
            .send_message_batch()
            .queue_url(&url)
            .set_entries(Some(entries))
            .send()
            .await
            .unwrap();
        assert!(output.failed().is_empty());
        for success in output.successful() {
            let index: usize = success.id()[1..].parse().unwrap();
            sent.insert(success.message_id().to_owned(), chunk[index].clone());
        }
    }
    (url, sent)
}

fn tricky_bodies() -> Vec<String> {
    vec![
        "plain".into(),
        "{\"a\": [1, 2, {\"b\": null}], \"c\": \"\\u0000\"}".into(),
        "line\r\nbreaks\tand \"quotes\" and \\ backslashes".into(),
        "é 😀 \u{10FFFF} \u{FFFD} \u{E000}".into(),
        " leading and trailing spaces ".into(),
        "x".repeat(200_000),
    ]
}

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
    let aws = Aws::from_env().await.unwrap();
    let bodies: Vec<String> = (0..4).map(|n| format!("m{n}")).collect();
    let (dlq, _) = dead_letter_queue(&aws, false, &bodies).await;
    let work = aws.create_queue(&unique("work")).await.unwrap();
    let audit = temp_path("audit.jsonl");
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

/// A quarantine queue holding `count` records as the consumer writes them
/// (core's own `QuarantineRecord`), whose source is a new work queue (FIFO:
/// 3 groups); returns (quarantine, work queue, original ids).
pub(crate) async fn quarantined_records(
    aws: &Aws,
    fifo: bool,
    count: usize,
) -> (String, String, Vec<String>) {
    use backpressure_batch::body::PartialRequest;
    use backpressure_batch::event::SqsRecord;
    use backpressure_batch::outcome::ErrorCode;
    use backpressure_batch::quarantine::{Failure, QuarantineRecord};

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
            let partial = PartialRequest::default();
            let failure = Failure {
                code: &ErrorCode::DownstreamRejected,
                detail: "HTTP 422",
                request: &partial,
            };
            let record =
                QuarantineRecord::new(&event, failure, "test", std::time::SystemTime::now());
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
        assert_eq!(output.status.code(), Some(4), "{}", stderr(&output));
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
    let aws = Aws::from_env().await.unwrap();
    let bodies: Vec<String> = (0..5).map(|n| format!("m{n}")).collect();
    let (dlq, sent) = dead_letter_queue(&aws, false, &bodies).await;
    let work = aws.create_queue(&unique("work")).await.unwrap();
    let audit = temp_path("audit.jsonl");
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
