//! Queues fed by other services, end to end: an SNS topic subscribed to the
//! work queue (moto and LocalStack deliver through SNS), S3 event
//! notifications to it (moto's S3), and payloads an Extended Client put in
//! S3. The forwarder POSTs the message inside, keyed from inside; the
//! operator's CLI selects inside; the example Lambda runs its own type on
//! EventBridge-shaped records (`envelopes_own_types.rs` has the rest).
use std::time::Duration;

use aws_sdk_s3::types::{Event, NotificationConfiguration, QueueConfiguration};
use e2e_tests::fixtures::{Aws, Sqs, binary, sqs_record, unique};
use e2e_tests::idempotency_table::Table;
use e2e_tests::process::Process;
use e2e_tests::runtime_host::LambdaHost;
use serde_json::json;

use crate::worker_setup::{SETTLED, Setup, setup_on};

/// An SNS client on the emulator whose SQS `sqs` is, and a topic on it
/// subscribed (raw message delivery off) to the setup's work queue.
pub(crate) async fn topic_to_queue(setup: &Setup) -> (aws_sdk_sns::Client, String) {
    let config = aws_config::load_from_env().await;
    let endpoint = match setup.sqs {
        Sqs::LocalStack => std::env::var("E2E_LOCALSTACK_SNS").unwrap(),
        _ => std::env::var("AWS_ENDPOINT_URL_SNS").unwrap(),
    };
    let sns_config = aws_sdk_sns::config::Builder::from(&config).endpoint_url(endpoint).build();
    let sns = aws_sdk_sns::Client::from_conf(sns_config);
    let topic = sns.create_topic().name(unique("orders")).send().await.unwrap();
    let topic_arn = topic.topic_arn.unwrap();
    let queue_arn = setup.aws.queue_arn(&setup.work_url).await.unwrap();
    sns.subscribe().topic_arn(&topic_arn).protocol("sqs").endpoint(queue_arn).send().await.unwrap();
    (sns, topic_arn)
}

pub(crate) async fn publish(sns: &aws_sdk_sns::Client, topic: &str, message: &str) {
    sns.publish().topic_arn(topic).message(message).subject("order").send().await.unwrap();
}

/// Waits until SNS delivered `count` messages to the work queue.
pub(crate) async fn delivered(setup: &Setup, count: u64) {
    let give_up = tokio::time::Instant::now() + Duration::from_secs(20);
    while setup.counts().await.0 < count {
        assert!(tokio::time::Instant::now() < give_up, "SNS delivered {:?}", setup.counts().await);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A new bucket whose object creations S3 notifies the setup's work queue
/// of (moto sends its test event then).
pub(crate) async fn bucket_notifying(setup: &Setup) -> String {
    let bucket = unique("uploads").to_lowercase();
    setup.aws.create_bucket(&bucket).await.unwrap();
    let queue_arn = setup.aws.queue_arn(&setup.work_url).await.unwrap();
    let notify = QueueConfiguration::builder().queue_arn(queue_arn).events(Event::S3ObjectCreated);
    let configuration =
        NotificationConfiguration::builder().queue_configurations(notify.build().unwrap()).build();
    let put = setup.aws.s3.put_bucket_notification_configuration().bucket(&bucket);
    put.notification_configuration(configuration).send().await.unwrap();
    bucket
}

pub(crate) async fn stop(mut worker: Process) -> Vec<String> {
    worker.signal("TERM").await.unwrap();
    assert_eq!(worker.exit(SETTLED).await.unwrap().code(), Some(0), "{:#?}", worker.lines());
    worker.lines()
}

async fn forwarder_posts_the_published_message(sqs: Sqs) {
    let setup = setup_on(sqs, false).await;
    let table = Table::create().await.unwrap();
    let (sns, topic) = topic_to_queue(&setup).await;
    let first = r#"{"orderId":"o-1","tenant":"acme","cents":5}"#;
    let second = r#"{"orderId":"o-2","tenant":"globex","note":"é \"quoted\""}"#;
    // Published twice: SNS gives each its own MessageId; the key inside is one.
    for message in [first, first, second] {
        publish(&sns, &topic, message).await;
    }
    delivered(&setup, 3).await;
    let worker = setup.start(&[
        ("BODY_FORMAT", "raw"),
        ("ENVELOPE", "sns"),
        ("IDEMPOTENCY_KEY_FROM", "/orderId"),
        ("TENANT_FROM", "/tenant"),
        ("IDEMPOTENCY_TABLE", table.name.as_str()),
    ]);
    setup.wait_until_empty().await;
    stop(worker).await;
    let mut seen: Vec<(String, Option<String>, Option<String>)> = setup
        .downstream
        .received()
        .into_iter()
        .map(|r| (r.body, r.idempotency_key, r.tenant_id))
        .collect();
    seen.sort();
    let expected = [
        (first.to_owned(), Some("o-1".to_owned()), Some("acme".to_owned())),
        (second.to_owned(), Some("o-2".to_owned()), Some("globex".to_owned())),
    ];
    assert_eq!(seen, expected, "{sqs:?}: the messages as published, keyed from inside, once");
    let quarantined = setup.aws.quarantined(&setup.quarantine_url, 0).await.unwrap();
    assert!(quarantined.is_empty(), "{sqs:?}: {quarantined:?}");
}

#[tokio::test]
async fn the_forwarder_posts_what_was_published_to_sns_on_moto() {
    forwarder_posts_the_published_message(Sqs::Moto).await;
}

#[tokio::test]
async fn the_forwarder_posts_what_was_published_to_sns_on_localstack() {
    forwarder_posts_the_published_message(Sqs::LocalStack).await;
}

#[tokio::test]
async fn the_example_lambda_runs_its_own_type_on_eventbridge_events() {
    let aws = Aws::from_env().await.unwrap();
    let quarantine_url = aws.create_queue(&unique("quarantine")).await.unwrap();
    let env = [("QUARANTINE_QUEUE_URL", quarantine_url.as_str()), ("ENVELOPE", "eventbridge")];
    let host = LambdaHost::start(&binary("examples/ledger").unwrap(), &env).await.unwrap();
    let event = |id: &str, detail: serde_json::Value| {
        json!({"version":"0","id":id,"detail-type":"Entry Posted","source":"com.example.ledger",
               "account":"123456789012","time":"2026-12-07T10:00:00Z","region":"us-east-1",
               "resources":[],"detail":detail})
        .to_string()
    };
    let source = "arn:aws:sqs:us-east-1:123456789012:ledger-events";
    let records = json!({"Records": [
        sqs_record("posted", json!(event("e-1", json!({"account":"acct-1","cents":250}))), source),
        sqs_record("zero", json!(event("e-2", json!({"account":"acct-1","cents":0}))), source),
        sqs_record("plain", json!(r#"{"account":"acct-1","cents":5}"#), source),
    ]});
    let outcome = host.invoke(&records, Duration::from_secs(30)).await;
    assert_eq!(outcome.batch_item_failures(), Some(vec![]), "{outcome:?}");
    let expected = [("plain", "invalid_envelope"), ("zero", "zero_amount")];
    let expected = expected.map(|(id, code)| (id.to_owned(), code.to_owned()));
    assert_eq!(codes(&aws, &quarantine_url, 2).await, expected);
}

#[tokio::test]
async fn s3_notifications_reach_the_forwarder_and_the_test_event_is_skipped() {
    let setup = setup_on(Sqs::Moto, false).await;
    let bucket = bucket_notifying(&setup).await;
    let s3 = &setup.aws.s3;
    let key = "reports/q4 summary.csv";
    s3.put_object().bucket(&bucket).key(key).body(b"a,b\n".to_vec().into()).send().await.unwrap();
    delivered(&setup, 2).await;
    let worker = setup.start(&[("BODY_FORMAT", "raw"), ("ENVELOPE", "s3")]);
    setup.wait_until_empty().await;
    let lines = stop(worker).await;
    let received = setup.downstream.received();
    assert_eq!(received.len(), 1, "the test event is not POSTed: {received:#?}");
    let notification: serde_json::Value = serde_json::from_str(&received[0].body).unwrap();
    assert_eq!(notification["Records"][0]["s3"]["bucket"]["name"], bucket.as_str());
    assert!(lines.iter().any(|l| l.contains("skipped=1")), "counted: {lines:#?}");
    let quarantined = setup.aws.quarantined(&setup.quarantine_url, 0).await.unwrap();
    assert!(quarantined.is_empty(), "{quarantined:?}");
}

/// A pointer as the SQS Extended Client (Java) writes it.
fn pointer(bucket: &str, key: &str) -> String {
    json!(["software.amazon.payloadoffloading.PayloadS3Pointer",
           {"s3BucketName": bucket, "s3Key": key}])
    .to_string()
}

#[tokio::test]
async fn an_offloaded_payload_is_fetched_forwarded_whole_and_deleted_once_processed() {
    let setup = setup_on(Sqs::Moto, false).await;
    let bucket = unique("large-payloads").to_lowercase();
    setup.aws.create_bucket(&bucket).await.unwrap();
    // Beyond what SQS takes in a message (1 MiB): only S3 can carry it.
    let large = json!({"orderId": "o-big", "blob": "x".repeat(1_200_000)}).to_string();
    let s3 = &setup.aws.s3;
    s3.put_object()
        .bucket(&bucket)
        .key("big")
        .body(large.clone().into_bytes().into())
        .send()
        .await
        .unwrap();
    setup.send(&[pointer(&bucket, "big"), pointer(&bucket, "gone")]).await;
    let worker = setup.start(&[
        ("BODY_FORMAT", "raw"),
        ("IDEMPOTENCY_KEY_FROM", "/orderId"),
        ("OFFLOADED_PAYLOADS", "read-and-delete"),
    ]);
    setup.wait_until_empty().await;
    stop(worker).await;
    let received = setup.downstream.received();
    assert_eq!(
        received.len(),
        1,
        "{:?}",
        received.iter().map(|r| r.body.len()).collect::<Vec<_>>()
    );
    assert_eq!(received[0].body, large, "the payload whole");
    assert_eq!(received[0].idempotency_key.as_deref(), Some("o-big"));
    assert_eq!(setup.aws.object(&bucket, "big").await.unwrap(), None, "deleted once processed");
    let quarantined = setup.aws.quarantined(&setup.quarantine_url, 1).await.unwrap();
    let record = &quarantined[0].record;
    assert_eq!(record["errorCode"], "offloaded_payload_missing");
    let detail = record["errorDetail"].as_str().unwrap();
    assert!(detail.starts_with(&format!("s3://{bucket}/gone could not be read")), "{detail}");
    assert_eq!(record["body"].as_str(), Some(pointer(&bucket, "gone").as_str()));
}

/// A dead-letter queue of SNS notifications as SNS delivered them (moto's
/// SNS, raw message delivery off), and one plain message beside them.
async fn sns_dead_letters() -> (Setup, String) {
    let setup = setup_on(Sqs::Moto, false).await;
    let (sns, topic) = topic_to_queue(&setup).await;
    publish(&sns, &topic, r#"{"tenantId":"acme","idempotencyKey":"k-1","orderId":"o-1"}"#).await;
    publish(&sns, &topic, r#"{"tenantId":"globex","idempotencyKey":"k-2","orderId":"o-2"}"#).await;
    setup.send(&[r#"{"tenantId":"acme","idempotencyKey":"k-3"}"#.to_owned()]).await;
    delivered(&setup, 3).await;
    let url = setup.work_url.clone();
    (setup, url)
}

#[tokio::test]
async fn the_operators_cli_selects_by_fields_inside_the_envelope_and_exports_the_message() {
    use crate::operator_cli::{cli, stderr, stdout};
    let (_setup, url) = sns_dead_letters().await;
    let listed = |args: Vec<&'static str>| {
        let url = url.clone();
        async move {
            let mut all = vec!["list", "--queue-url", url.as_str(), "--json"];
            all.extend(args);
            let output = cli(&all).await;
            assert!(output.status.success(), "{all:?}: {}", stderr(&output));
            let mut keys: Vec<String> = stdout(&output)
                .lines()
                .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
                .map(|entry| entry["idempotencyKey"].as_str().unwrap_or("-").to_owned())
                .collect();
            keys.sort();
            keys
        }
    };
    assert_eq!(listed(vec!["--tenant", "acme"]).await, ["k-1", "k-3"], "detected and read inside");
    assert_eq!(listed(vec!["--tenant", "acme", "--envelope", "none"]).await, ["k-3"]);
    assert_eq!(listed(vec!["--where", "/orderId=o-2", "--envelope", "sns"]).await, ["k-2"]);
    let output = cli(&["export", "--queue-url", &url, "--out", "-", "--tenant", "globex"]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    let line: serde_json::Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    assert_eq!(line["envelope"], "sns");
    let published = r#"{"tenantId":"globex","idempotencyKey":"k-2","orderId":"o-2"}"#;
    assert_eq!(line["payload"], published, "the message as published");
    assert!(line["body"].as_str().unwrap().contains("\"TopicArn\""), "the body as delivered");
    let text = cli(&["list", "--queue-url", &url, "--tenant", "globex"]).await;
    let text = stdout(&text);
    assert!(text.contains("envelope=sns"), "said: {text}");
    assert!(text.contains(&format!("message: {published}")), "the message read: {text}");
    // The publisher knows SNS's MessageId; `show` finds the message by it too.
    let sns_id = line["envelopeId"].as_str().unwrap();
    let shown = cli(&["show", "--queue-url", &url, "--message-id", sns_id]).await;
    assert!(shown.status.success(), "{}", stderr(&shown));
    let shown: serde_json::Value = serde_json::from_str(&stdout(&shown)).unwrap();
    assert_eq!(shown["payload"], published);
}

/// Each peer's sample event (`events/envelopes/SOURCES.md`) through
/// batch-consumer with its envelope: what reaches the downstream is the
/// message inside, and nothing is returned or quarantined.
#[tokio::test]
async fn every_peer_fixture_passes_through_the_forwarder() {
    use e2e_tests::downstream::Downstream;
    let aws = Aws::from_env().await.unwrap();
    // The Extended Client fixture's objects, where its pointers say.
    let _ = aws.create_bucket("large-payloads").await;
    for key in ["4e0d2c71-1f0a-4a5e-8d36-0a6c1d1b7a11", "b2f6a1f0-7d9e-4c52-9b11-3c8e2f6d0a42"] {
        let put = aws.s3.put_object().bucket("large-payloads").key(key);
        put.body(format!("offloaded {key}").into_bytes().into()).send().await.unwrap();
    }
    let fixtures = [
        (
            "powertools-sns-sqs.json",
            "sns",
            vec![r#"{"message": "hello world", "username": "lessa"}"#.to_owned()],
        ),
        ("aws-docs-sns-sqs.json", "sns", vec!["Hello world!".to_owned()]),
        (
            "powertools-eventbridge-sqs.json",
            "eventbridge",
            vec![r#"{"instance_id": "i-1234567890abcdef0", "state": "terminated"}"#.to_owned()],
        ),
        ("aws-docs-s3-test-event-sqs.json", "s3", vec![]),
        (
            "extended-client-sqs.json",
            "none",
            vec![
                "offloaded 4e0d2c71-1f0a-4a5e-8d36-0a6c1d1b7a11".to_owned(),
                "offloaded b2f6a1f0-7d9e-4c52-9b11-3c8e2f6d0a42".to_owned(),
            ],
        ),
    ];
    for (file, envelope, expected) in fixtures {
        let quarantine_url = aws.create_queue(&unique("quarantine")).await.unwrap();
        let downstream = Downstream::start().await.unwrap();
        let url = downstream.url();
        let env = [
            ("QUARANTINE_QUEUE_URL", quarantine_url.as_str()),
            ("DOWNSTREAM_URL", url.as_str()),
            ("BODY_FORMAT", "raw"),
            ("ENVELOPE", envelope),
            ("OFFLOADED_PAYLOADS", "read"),
        ];
        let host = LambdaHost::start(&binary("batch-consumer").unwrap(), &env).await.unwrap();
        let path = format!("{}/../events/envelopes/{file}", env!("CARGO_MANIFEST_DIR"));
        let event: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let outcome = host.invoke(&event, Duration::from_secs(30)).await;
        assert_eq!(outcome.batch_item_failures(), Some(vec![]), "{file}: {outcome:?}");
        let mut posted: Vec<String> = downstream.received().into_iter().map(|r| r.body).collect();
        posted.sort();
        assert_eq!(posted, expected, "{file}");
        let quarantined = aws.quarantined(&quarantine_url, 0).await.unwrap();
        assert!(quarantined.is_empty(), "{file}: {quarantined:?}");
    }
}

/// What AWS's own SQS Extended Client for Python writes (its pointer, its
/// `ExtendedPayloadSize` attribute, its object) is read and forwarded whole.
#[tokio::test]
async fn a_message_the_python_extended_client_sent_is_read_from_s3() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let setup = setup_on(Sqs::Moto, false).await;
    let bucket = unique("python-extended").to_lowercase();
    setup.aws.create_bucket(&bucket).await.unwrap();
    let payload = json!({"orderId": "o-py", "blob": "z".repeat(400_000)}).to_string();
    let file = std::env::temp_dir().join(unique("extended-payload"));
    std::fs::write(&file, &payload).unwrap();
    let sent = tokio::process::Command::new(format!("{root}/.venv/bin/python"))
        .arg(format!("{root}/scripts/extended_client_send.py"))
        .args([setup.work_url.as_str(), bucket.as_str(), file.to_str().unwrap()])
        .output()
        .await
        .unwrap();
    assert!(sent.status.success(), "{}", String::from_utf8_lossy(&sent.stderr));
    let worker = setup.start(&[
        ("BODY_FORMAT", "raw"),
        ("IDEMPOTENCY_KEY_FROM", "/orderId"),
        ("OFFLOADED_PAYLOADS", "read"),
    ]);
    setup.wait_until_empty().await;
    stop(worker).await;
    let received = setup.downstream.received();
    assert_eq!(received.len(), 1);
    assert_eq!(received[0].body, payload, "the payload whole");
    assert_eq!(received[0].idempotency_key.as_deref(), Some("o-py"));
    let kept = setup.aws.s3.list_objects_v2().bucket(&bucket).send().await.unwrap();
    assert_eq!(kept.key_count(), Some(1), "read, not deleted: OFFLOADED_PAYLOADS=read keeps it");
}

/// The quarantined records' `(messageId, errorCode)`, sorted.
pub(crate) async fn codes(aws: &Aws, url: &str, count: usize) -> Vec<(String, String)> {
    let mut codes: Vec<(String, String)> = aws
        .quarantined(url, count)
        .await
        .unwrap()
        .into_iter()
        .map(|q| (q.message_id().to_owned(), q.record["errorCode"].as_str().unwrap().to_owned()))
        .collect();
    codes.sort();
    codes
}
