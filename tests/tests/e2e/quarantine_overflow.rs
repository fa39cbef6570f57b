//! Quarantine of any size, end to end on moto's S3 and SQS: a record too large
//! for the quarantine queue keeps its body in S3 (written and confirmed before
//! the record), and the operator's CLI shows, exports, replays and discards it
//! byte-identical, reporting — never replaying — a body that is missing or altered.

use std::time::Duration;

use aws_sdk_sqs::types::QueueAttributeName;
use e2e_tests::downstream::Downstream;
use e2e_tests::fault_proxy::{Fault, FaultProxy, Rule};
use e2e_tests::fixtures::{Aws, binary, sqs_record, unique};
use e2e_tests::runtime_host::LambdaHost;
use serde_json::{Value, json};

use crate::operator_cli::{audit_lines, cli, stderr, stdout, temp_path};

pub(crate) const TIMEOUT: Duration = Duration::from_secs(30);

/// A body of exactly `bytes` bytes that is not JSON (so it is poison), with
/// multi-byte characters and the control characters SQS accepts, which a
/// quarantine record escapes and a replay must give back as they were.
pub(crate) fn poison_body(bytes: usize) -> String {
    let unit = "not json: é😀\t\r\n<>&\"\\ ";
    let mut body = unit.repeat(bytes / unit.len() + 1);
    while body.len() > bytes {
        body.pop();
    }
    body.extend(std::iter::repeat_n('x', bytes - body.len()));
    assert_eq!(body.len(), bytes);
    body
}

pub(crate) struct Overflow {
    pub(crate) aws: Aws,
    pub(crate) work_url: String,
    pub(crate) work_arn: String,
    pub(crate) quarantine_url: String,
    pub(crate) bucket: String,
    pub(crate) downstream: Downstream,
}

impl Overflow {
    /// A work queue of 1 MiB messages, a quarantine queue of
    /// `quarantine_max` bytes and a bucket.
    pub(crate) async fn new(quarantine_max: u32) -> Self {
        let aws = Aws::from_env().await.unwrap();
        let work_url = aws.create_queue(&unique("work")).await.unwrap();
        let work_arn = aws.queue_arn(&work_url).await.unwrap();
        let quarantine_url = aws
            .sqs
            .create_queue()
            .queue_name(unique("quarantine"))
            .attributes(QueueAttributeName::MaximumMessageSize, quarantine_max.to_string())
            .send()
            .await
            .unwrap()
            .queue_url
            .unwrap();
        let bucket = unique("overflow").to_lowercase();
        aws.create_bucket(&bucket).await.unwrap();
        let downstream = Downstream::start().await.unwrap();
        Self { aws, work_url, work_arn, quarantine_url, bucket, downstream }
    }

    /// The consumer with the bucket, and `extra` (a proxy's endpoint, say).
    pub(crate) async fn consumer(&self, extra: &[(&str, &str)]) -> LambdaHost {
        let url = self.downstream.url();
        let mut env = vec![
            ("DOWNSTREAM_URL", url.as_str()),
            ("QUARANTINE_QUEUE_URL", self.quarantine_url.as_str()),
            ("QUARANTINE_OVERFLOW_BUCKET", self.bucket.as_str()),
            ("API_CALL_TIMEOUT_MS", "2500"),
        ];
        env.extend_from_slice(extra);
        LambdaHost::start(&binary("batch-consumer").unwrap(), &env).await.unwrap()
    }

    pub(crate) fn event(&self, poison: &[(&str, &str)]) -> Value {
        let records: Vec<Value> = poison
            .iter()
            .map(|(id, body)| sqs_record(id, Value::String((*body).to_owned()), &self.work_arn))
            .collect();
        json!({ "Records": records })
    }

    /// Every record on the quarantine queue, read with the CLI's `export`
    /// (which leaves them there), by the poison message's id.
    pub(crate) async fn exported(&self) -> (std::process::Output, Vec<Value>) {
        let out = temp_path("export.jsonl");
        let output =
            cli(&["export", "--queue-url", &self.quarantine_url, "--out", out.to_str().unwrap()])
                .await;
        let lines = std::fs::read_to_string(&out)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        (output, lines)
    }

    /// Every record replayed to the work queue with the CLI, and its audit file.
    pub(crate) async fn replay(&self) -> (std::process::Output, std::path::PathBuf) {
        let audit = temp_path("audit.jsonl");
        let args = ["replay", "--queue-url", &self.quarantine_url, "--to", &self.work_url];
        let output =
            cli(&[&args[..], &["--yes", "--audit", audit.to_str().unwrap()]].concat()).await;
        (output, audit)
    }

    /// The raw quarantine records (the SQS bodies), without the CLI.
    pub(crate) async fn records(&self, expected: usize) -> Vec<Value> {
        let messages = self.aws.receive_all(&self.quarantine_url, expected).await.unwrap();
        let handles: Vec<String> =
            messages.iter().filter_map(|m| m.receipt_handle().map(str::to_owned)).collect();
        for handle in handles {
            self.aws
                .sqs
                .change_message_visibility()
                .queue_url(&self.quarantine_url)
                .receipt_handle(handle)
                .visibility_timeout(0)
                .send()
                .await
                .unwrap();
        }
        messages.iter().map(|m| serde_json::from_str(m.body().unwrap()).unwrap()).collect()
    }

    pub(crate) async fn object(&self, record: &Value) -> Option<Vec<u8>> {
        let key = record["bodyObject"]["key"].as_str().unwrap();
        self.aws.object(&self.bucket, key).await.unwrap()
    }
}

/// Quarantines `body` through S3, replays it with the CLI and checks every step.
pub(crate) async fn quarantined_through_s3_and_replayed(quarantine_max: u32, body_bytes: usize) {
    let o = Overflow::new(quarantine_max).await;
    let body = poison_body(body_bytes);
    let host = o.consumer(&[]).await;
    let outcome = host.invoke(&o.event(&[("big-1", &body)]), TIMEOUT).await;
    assert_eq!(outcome.batch_item_failures(), Some(vec![]), "quarantined, not retried");

    let records = o.records(1).await;
    assert_eq!(records.len(), 1);
    let record = &records[0];
    assert_eq!(record["body"], Value::Null, "the body is not in the record");
    assert_eq!(record["bodyObject"]["bucket"], o.bucket.as_str());
    assert_eq!(record["bodyObject"]["bytes"], body.len());
    let key = record["bodyObject"]["key"].as_str().unwrap();
    assert!(key.ends_with("/big-1"), "{key}");
    assert_eq!(o.object(record).await.as_deref(), Some(body.as_bytes()), "the object is the body");

    let shown = cli(&["show", "--queue-url", &o.quarantine_url, "--message-id", "big-1"]).await;
    assert!(shown.status.success(), "{}", stderr(&shown));
    let shown: Value = serde_json::from_str(&stdout(&shown)).unwrap();
    assert_eq!(shown["body"].as_str(), Some(body.as_str()), "show reads the object");

    let (exported, lines) = o.exported().await;
    assert!(exported.status.success(), "{}", stderr(&exported));
    assert_eq!(lines[0]["body"].as_str(), Some(body.as_str()), "export reads the object");

    let (replayed, audit) = o.replay().await;
    assert!(replayed.status.success(), "{}\n{}", stdout(&replayed), stderr(&replayed));
    let arrived = o.aws.receive_all(&o.work_url, 1).await.unwrap();
    assert_eq!(arrived.len(), 1);
    assert_eq!(arrived[0].body().map(str::as_bytes), Some(body.as_bytes()), "byte-identical");
    assert_eq!(o.aws.counts(&o.quarantine_url).await.unwrap(), (0, 0), "the record is gone");
    assert_eq!(o.object(record).await, None, "and so is its object");
    let lines = audit_lines(&audit);
    let results: Vec<&str> = lines.iter().map(|l| l["result"].as_str().unwrap()).collect();
    assert_eq!(results, ["replayed", "object_deleted"]);
    let uri = format!("s3://{}/{key}", o.bucket);
    assert!(lines.iter().all(|l| l["object"] == uri.as_str()), "{lines:?}");
}

#[tokio::test]
async fn a_1_mib_poison_body_is_quarantined_through_s3_and_replayed_byte_identical() {
    quarantined_through_s3_and_replayed(1_048_576, 1_048_576).await;
}

#[tokio::test]
async fn a_300_kb_body_on_a_256_kib_quarantine_queue_is_quarantined_through_s3() {
    quarantined_through_s3_and_replayed(262_144, 300_000).await;
}

#[tokio::test]
async fn without_a_bucket_a_record_too_large_is_retried_not_lost() {
    let o = Overflow::new(262_144).await;
    let url = o.downstream.url();
    let env = [("DOWNSTREAM_URL", url.as_str()), ("QUARANTINE_QUEUE_URL", &o.quarantine_url)];
    let host = LambdaHost::start(&binary("batch-consumer").unwrap(), &env).await.unwrap();
    let outcome = host.invoke(&o.event(&[("big-1", &poison_body(300_000))]), TIMEOUT).await;
    assert_eq!(outcome.batch_item_failures(), Some(vec!["big-1".to_owned()]));
    assert_eq!(o.aws.counts(&o.quarantine_url).await.unwrap(), (0, 0));
    let logs = host.logs().join("\n");
    assert!(logs.contains("above the 262144-byte message limit"), "{logs}");
    assert!(logs.contains("QUARANTINE_OVERFLOW_BUCKET"), "the hint names the variable: {logs}");
}

#[tokio::test]
async fn an_s3_write_that_fails_retries_the_message_and_leaves_no_record() {
    let o = Overflow::new(262_144).await;
    let upstream = std::env::var("AWS_ENDPOINT_URL_S3").unwrap();
    let proxy = FaultProxy::start(&upstream).await.unwrap();
    let body = poison_body(300_000);
    for fault in [Fault::Deny, Fault::Throttle, Fault::ServerError, Fault::Hang] {
        proxy.clear();
        proxy.inject(Rule::new("PutObject", fault.clone()));
        let host = o.consumer(&[("AWS_ENDPOINT_URL_S3", proxy.url())]).await;
        let outcome = host.invoke(&o.event(&[("big-1", &body)]), TIMEOUT).await;
        assert_eq!(
            outcome.batch_item_failures(),
            Some(vec!["big-1".to_owned()]),
            "{fault:?}: retried"
        );
        assert_eq!(o.aws.counts(&o.quarantine_url).await.unwrap(), (0, 0), "{fault:?}: no record");
        let logs = host.logs().join("\n");
        assert!(logs.contains("the body could not be written to s3://"), "{fault:?}: {logs}");
    }
    assert!(proxy.counts()["PutObject"] >= 4, "{:?}", proxy.counts());
    // The fault gone, the retried message is quarantined, and its record's object exists.
    proxy.clear();
    let host = o.consumer(&[("AWS_ENDPOINT_URL_S3", proxy.url())]).await;
    let outcome = host.invoke(&o.event(&[("big-1", &body)]), TIMEOUT).await;
    assert_eq!(outcome.batch_item_failures(), Some(vec![]));
    let records = o.records(1).await;
    assert_eq!(records.len(), 1);
    assert_eq!(o.object(&records[0]).await.as_deref(), Some(body.as_bytes()));
}

#[tokio::test]
async fn a_missing_or_altered_object_is_reported_and_nothing_is_replayed() {
    let o = Overflow::new(262_144).await;
    let (missing, altered) = (poison_body(300_000), poison_body(300_001));
    let host = o.consumer(&[]).await;
    let event = o.event(&[("gone-1", &missing), ("changed-1", &altered)]);
    assert_eq!(host.invoke(&event, TIMEOUT).await.batch_item_failures(), Some(vec![]));
    let records = o.records(2).await;
    let key_of = |id: &str| {
        let record = records.iter().find(|r| r["messageId"] == id).unwrap();
        record["bodyObject"]["key"].as_str().unwrap().to_owned()
    };
    o.aws.s3.delete_object().bucket(&o.bucket).key(key_of("gone-1")).send().await.unwrap();
    let tampered = altered.replacen("not", "NOT", 1);
    assert_ne!(tampered, altered);
    o.aws
        .s3
        .put_object()
        .bucket(&o.bucket)
        .key(key_of("changed-1"))
        .body(tampered.into_bytes().into())
        .send()
        .await
        .unwrap();

    let shown = cli(&["show", "--queue-url", &o.quarantine_url, "--message-id", "gone-1"]).await;
    assert_eq!(shown.status.code(), Some(1), "{}", stderr(&shown));
    assert!(stderr(&shown).contains("does not exist"), "{}", stderr(&shown));
    let shown: Value = serde_json::from_str(&stdout(&shown)).unwrap();
    assert_eq!(shown["body"], Value::Null);

    let (exported, lines) = o.exported().await;
    assert_eq!(exported.status.code(), Some(1), "{}", stderr(&exported));
    assert!(stderr(&exported).contains("2 of them without their body"), "{}", stderr(&exported));
    assert!(lines.iter().all(|l| l["body"].is_null() && l["bodyProblem"].is_string()));
    let changed = lines.iter().find(|l| l["originalMessageId"] == "changed-1").unwrap();
    assert!(changed["bodyProblem"].as_str().unwrap().contains("SHA-256"), "{changed}");

    let (replayed, audit) = o.replay().await;
    assert_eq!(replayed.status.code(), Some(1), "{}", stderr(&replayed));
    assert!(stderr(&replayed).contains("failed=2"), "{}", stderr(&replayed));
    assert_eq!(o.aws.counts(&o.work_url).await.unwrap(), (0, 0), "nothing was replayed");
    assert_eq!(o.aws.counts(&o.quarantine_url).await.unwrap(), (2, 0), "both records stay");
    let lines = audit_lines(&audit);
    assert_eq!(lines.len(), 2);
    for line in &lines {
        assert_eq!(line["result"], "send_failed", "{line}");
        assert!(line["reason"].as_str().unwrap().contains("cannot be replayed"), "{line}");
        assert!(line["object"].as_str().unwrap().starts_with("s3://"), "{line}");
    }

    // A discard removes the records and, after them, what is left of their objects.
    let discarded = cli(&[
        "discard",
        "--queue-url",
        &o.quarantine_url,
        "--yes",
        "--audit",
        audit.to_str().unwrap(),
    ])
    .await;
    assert!(discarded.status.success(), "{}", stderr(&discarded));
    assert_eq!(o.aws.counts(&o.quarantine_url).await.unwrap(), (0, 0));
    assert_eq!(o.aws.object(&o.bucket, &key_of("changed-1")).await.unwrap(), None);
    let results: Vec<String> =
        audit_lines(&audit)[2..].iter().map(|l| l["result"].as_str().unwrap().to_owned()).collect();
    assert_eq!(results.iter().filter(|r| *r == "discarded").count(), 2, "{results:?}");
    assert_eq!(results.iter().filter(|r| *r == "object_deleted").count(), 2, "{results:?}");
}
