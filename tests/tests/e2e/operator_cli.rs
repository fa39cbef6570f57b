//! sqs-backpressure (the operator's CLI) end to end: the binary as a process
//! against moto, on quarantine records the real consumer wrote and on raw
//! dead-lettered messages.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::process::Output;
use std::time::Duration;

use aws_sdk_sqs::types::{MessageAttributeValue, QueueAttributeName, SendMessageBatchRequestEntry};
use aws_smithy_types::Blob;
use e2e_tests::downstream::Downstream;
use e2e_tests::fixtures::{Aws, binary, sqs_record, unique};
use e2e_tests::runtime_host::LambdaHost;
use serde_json::{Value, json};

pub(crate) const TIMEOUT: Duration = Duration::from_secs(30);

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

/// `text` with each log line's leading timestamp replaced by `[TIME]`, for a snapshot.
pub(crate) fn untimed(text: &str) -> String {
    text.lines()
        .map(|line| match line.split_once(' ') {
            Some((first, rest)) if first.parse::<jiff::Timestamp>().is_ok() => {
                format!("[TIME] {}", rest.trim_start())
            }
            _ => line.to_owned(),
        })
        .map(|line| line + "\n")
        .collect()
}

pub(crate) fn ok(output: Output) -> Output {
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
pub(crate) struct Quarantine {
    pub(crate) aws: Aws,
    pub(crate) work_url: String,
    pub(crate) quarantine_url: String,
    pub(crate) bodies: HashMap<String, String>,
}

pub(crate) async fn quarantine_filled_by_the_consumer() -> Quarantine {
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

pub(crate) fn stats_json(output: &Output) -> Value {
    serde_json::from_str(&stdout(output)).unwrap()
}

#[tokio::test]
pub(crate) async fn stats_lists_and_filters_read_the_consumers_records_without_consuming_them() {
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
    // A date, and a date and time without a zone, as operators type them: UTC.
    let today = jiff::Timestamp::now().to_zoned(jiff::tz::TimeZone::UTC).date();
    let (yesterday, tomorrow) = (today.yesterday().unwrap(), today.tomorrow().unwrap());
    let by_date = |since: String, until: String| async move {
        let args = ["stats", "--queue-url", url, "--json", "--since", &since, "--until", &until];
        stats_json(&ok(cli(&args).await))["total"].clone()
    };
    assert_eq!(by_date(yesterday.to_string(), format!("{tomorrow} 00:00:00")).await, 6);
    assert_eq!(by_date(format!("{tomorrow}T00:00"), format!("{tomorrow}T01:00")).await, 0);

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

pub(crate) fn attribute(
    data_type: &str,
    text: Option<&str>,
    bytes: Option<&[u8]>,
) -> MessageAttributeValue {
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
pub(crate) async fn new_queue(aws: &Aws, prefix: &str, fifo: bool) -> String {
    let name = if fifo { format!("{}.fifo", unique(prefix)) } else { unique(prefix) };
    let mut create = aws.sqs.create_queue().queue_name(name);
    if fifo {
        create = create.attributes(QueueAttributeName::FifoQueue, "true");
    }
    create.send().await.unwrap().queue_url.unwrap()
}

/// `replay --queue-url from --to to --yes --audit audit`, plus `extra`.
pub(crate) async fn replay_to(
    from: &str,
    to: &str,
    audit: &std::path::Path,
    extra: &[&str],
) -> Output {
    let mut args = vec!["replay", "--queue-url", from, "--to", to, "--yes", "--audit"];
    args.push(audit.to_str().unwrap());
    args.extend_from_slice(extra);
    cli(&args).await
}

/// Raw messages on a "dead-letter queue", with bodies and attributes that
/// test exactness; returns (dlq url, sent bodies by message id).
/// A standard dead-letter queue holding `count` messages (`m0`, `m1`, …), an
/// empty standard queue to replay them to, and a path for the audit trail:
/// (client, dead-letter queue, its messages by id, work queue, audit path).
pub(crate) async fn replayable(
    count: usize,
) -> (Aws, String, BTreeMap<String, String>, String, PathBuf) {
    let aws = Aws::from_env().await.unwrap();
    let bodies: Vec<String> = (0..count).map(|n| format!("m{n}")).collect();
    let (dlq, sent) = dead_letter_queue(&aws, false, &bodies).await;
    let work = aws.create_queue(&unique("work")).await.unwrap();
    (aws, dlq, sent, work, temp_path("audit.jsonl"))
}

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

pub(crate) fn tricky_bodies() -> Vec<String> {
    vec![
        "plain".into(),
        "{\"a\": [1, 2, {\"b\": null}], \"c\": \"\\u0000\"}".into(),
        "line\r\nbreaks\tand \"quotes\" and \\ backslashes".into(),
        "é 😀 \u{10FFFF} \u{FFFD} \u{E000}".into(),
        " leading and trailing spaces ".into(),
        "x".repeat(200_000),
    ]
}
