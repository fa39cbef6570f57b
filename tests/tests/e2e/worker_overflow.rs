//! sqs-worker's quarantine of any size: the quarantine queue's
//! `MaximumMessageSize` read at start-up (on moto's and LocalStack's SQS), a
//! record too large for it quarantined with its body in S3 (moto), and a
//! queue whose size cannot be read refusing to start.

use aws_sdk_sqs::types::QueueAttributeName;
use e2e_tests::fault_proxy::{Fault, FaultProxy, Rule};
use e2e_tests::fixtures::{Sqs, unique};
use serde_json::Value;

use crate::worker_setup::{STARTED, Setup, setup_on};

/// A quarantine queue of SQS's default 256 KiB next to the setup's work queue.
async fn small_quarantine(setup: &Setup) -> String {
    let created = setup
        .aws
        .sqs
        .create_queue()
        .queue_name(unique("quarantine-256k"))
        .attributes(QueueAttributeName::MaximumMessageSize, "262144")
        .send()
        .await
        .unwrap();
    created.queue_url.unwrap()
}

async fn a_record_too_large_for_the_queue_keeps_its_body_in_s3(sqs: Sqs) {
    let setup = setup_on(sqs, false).await;
    let quarantine = small_quarantine(&setup).await;
    let bucket = unique("worker-overflow").to_lowercase();
    setup.aws.create_bucket(&bucket).await.unwrap();
    let poison = format!("not json {}", "é".repeat(150_000));
    setup.send(std::slice::from_ref(&poison)).await;
    let endpoint = sqs.endpoint().unwrap();
    let env = [
        ("AWS_ENDPOINT_URL_SQS", endpoint.as_str()),
        ("QUARANTINE_QUEUE_URL", quarantine.as_str()),
        ("QUARANTINE_OVERFLOW_BUCKET", bucket.as_str()),
    ];
    let mut worker = crate::worker_setup::start_worker(
        &setup.work_url,
        &quarantine,
        &setup.downstream.url(),
        &env,
    );
    let read = worker.wait_for_line("quarantine queue read", STARTED).await.unwrap();
    assert!(read.contains("262144"), "the queue's own size: {read}");
    setup.wait_until_empty().await;
    worker.signal("TERM").await.unwrap();
    assert_eq!(worker.exit(STARTED).await.unwrap().code(), Some(0));

    let messages = setup.aws.receive_all(&quarantine, 1).await.unwrap();
    assert_eq!(messages.len(), 1);
    let record: Value = serde_json::from_str(messages[0].body().unwrap()).unwrap();
    assert_eq!(record["body"], Value::Null);
    let key = record["bodyObject"]["key"].as_str().unwrap();
    let object = setup.aws.object(&bucket, key).await.unwrap();
    assert_eq!(object.as_deref(), Some(poison.as_bytes()), "the object is the body");
    assert!(setup.downstream.received().is_empty(), "poison never reaches the downstream");
}

#[tokio::test]
async fn a_record_too_large_for_the_queue_keeps_its_body_in_s3_on_moto() {
    a_record_too_large_for_the_queue_keeps_its_body_in_s3(Sqs::Moto).await;
}

#[tokio::test]
async fn a_record_too_large_for_the_queue_keeps_its_body_in_s3_on_localstack() {
    a_record_too_large_for_the_queue_keeps_its_body_in_s3(Sqs::LocalStack).await;
}

#[tokio::test]
async fn a_record_too_large_for_the_queue_keeps_its_body_in_s3_on_fauxqs() {
    a_record_too_large_for_the_queue_keeps_its_body_in_s3(Sqs::Fauxqs).await;
}

#[tokio::test]
async fn a_quarantine_queue_whose_size_cannot_be_read_stops_the_start() {
    let setup = setup_on(Sqs::Moto, false).await;
    let proxy = FaultProxy::start(&Sqs::Moto.endpoint().unwrap()).await.unwrap();
    let quarantine_name = setup.quarantine_url.rsplit('/').next().unwrap().to_owned();
    proxy.inject(Rule::new("GetQueueAttributes", Fault::Deny).when_body_contains(&quarantine_name));
    let mut worker = setup.start(&[("AWS_ENDPOINT_URL_SQS", proxy.url())]);
    assert_eq!(worker.exit(STARTED).await.unwrap().code(), Some(1));
    let lines = worker.lines();
    let error = lines.iter().find(|l| l.contains("cannot read the quarantine queue")).unwrap();
    assert!(error.contains("QUARANTINE_MAX_MESSAGE_BYTES"), "the hint: {error}");
    assert!(error.contains(&setup.quarantine_url), "and the queue: {error}");
    assert!(error.contains("AccessDenied"), "and the cause: {error}");
}
