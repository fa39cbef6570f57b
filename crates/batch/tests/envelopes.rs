//! Messages as other services deliver them, through the batch processor:
//! the peers' own sample events (`events/envelopes/SOURCES.md`) open to the
//! message inside, of the processor's own type, with the envelope's fields
//! at hand; what does not open is quarantined with the layer that failed.
#![allow(clippy::unwrap_used)]

use std::borrow::Cow;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use backpressure_batch::envelope::{Delivery, Envelope, S3Notification};
use backpressure_batch::idempotency::Idempotency;
use backpressure_batch::{
    BatchProcessor, Body, ContractViolation, ErrorCode, JsonBody, Message, Verdict,
    record::SqsEvent, report::Outcome,
};
use tokio::time::Instant;

fn fixture(name: &str) -> SqsEvent {
    let path = format!("{}/../../events/envelopes/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

fn deadline() -> Instant {
    Instant::now() + Duration::from_secs(30)
}

/// What a processor saw of each message: its payload and delivery.
type Seen<T> = Arc<Mutex<Vec<(T, Option<Delivery>)>>>;

fn recording<T: Clone + Send + Sync + 'static>(
    seen: &Seen<T>,
) -> impl Fn(&Message<'_, T>) -> std::future::Ready<Verdict> + Send + Sync + use<T> {
    let seen = seen.clone();
    move |message: &Message<'_, T>| {
        seen.lock().unwrap().push((message.decoded.clone(), message.delivery.cloned()));
        std::future::ready(Verdict::Done)
    }
}

#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
struct Greeting {
    message: String,
    username: String,
}
impl JsonBody for Greeting {
    fn idempotency_key(&self) -> Option<Cow<'_, str>> {
        Some(self.username.as_str().into())
    }
}

#[tokio::test]
async fn powertools_sns_through_sqs_gives_the_published_message_and_snss_id() {
    let seen = Seen::default();
    let batch = BatchProcessor::builder(recording::<Greeting>(&seen))
        .envelope(Envelope::Sns)
        .build()
        .unwrap();
    let event = fixture("powertools-sns-sqs.json");
    let report = batch.process(&event.records, deadline()).await.unwrap();
    assert_eq!(report.outcomes[0].outcome, Outcome::Done);
    let seen = seen.lock().unwrap();
    let expected = Greeting { message: "hello world".into(), username: "lessa".into() };
    assert_eq!(seen[0].0, expected);
    assert_eq!(seen[0].1.as_ref().unwrap().id(), Some("d88d4479-6ec0-54fe-b63f-1cf9df4bb16e"));
}

/// Any text, as published: the AWS documentation's SNS example is not JSON.
#[derive(Debug, Clone, PartialEq)]
struct Text(String);
impl Body for Text {
    fn decode(text: &str) -> Result<Self, ContractViolation> {
        Ok(Self(text.to_owned()))
    }
}

#[tokio::test]
async fn the_aws_documentations_sns_example_gives_its_text_and_subject() {
    let seen = Seen::default();
    let batch =
        BatchProcessor::builder(recording::<Text>(&seen)).envelope(Envelope::Sns).build().unwrap();
    let event = fixture("aws-docs-sns-sqs.json");
    batch.process(&event.records, deadline()).await.unwrap();
    let seen = seen.lock().unwrap();
    assert_eq!(seen[0].0, Text("Hello world!".into()));
    let Some(Delivery::Sns { subject, topic_arn, .. }) = &seen[0].1 else { panic!("{seen:?}") };
    assert_eq!(subject.as_deref(), Some("Testing publish to subscribed queues"));
    assert_eq!(topic_arn.as_deref(), Some("arn:aws:sns:us-west-2:123456789012:MyTopic"));
}

#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
struct InstanceState {
    instance_id: String,
    state: String,
}
impl JsonBody for InstanceState {}

#[tokio::test]
async fn powertools_eventbridge_event_gives_its_detail_as_the_processors_type() {
    let seen = Seen::default();
    let batch = BatchProcessor::builder(recording::<InstanceState>(&seen))
        .envelope(Envelope::EventBridge)
        .build()
        .unwrap();
    let event = fixture("powertools-eventbridge-sqs.json");
    batch.process(&event.records, deadline()).await.unwrap();
    let seen = seen.lock().unwrap();
    assert_eq!(seen[0].0.instance_id, "i-1234567890abcdef0");
    assert_eq!(seen[0].0.state, "terminated");
    let Some(Delivery::EventBridge { source, detail_type, .. }) = &seen[0].1 else { panic!() };
    assert_eq!(
        (source.as_str(), detail_type.as_str()),
        ("aws.ec2", "EC2 Instance State-change Notification")
    );
}

#[tokio::test]
async fn s3_notifications_are_processed_and_s3s_test_event_is_skipped_not_quarantined() {
    let seen = Seen::default();
    let batch = BatchProcessor::builder(recording::<S3Notification>(&seen))
        .envelope(Envelope::S3)
        .build()
        .unwrap();
    let mut records = fixture("powertools-s3-sqs.json").records;
    records.extend(fixture("aws-docs-s3-test-event-sqs.json").records);
    let report = batch.process(&records, deadline()).await.unwrap();
    let outcomes: Vec<_> = report.outcomes.iter().map(|o| o.outcome.clone()).collect();
    assert_eq!(outcomes, [Outcome::Done, Outcome::Skipped]);
    assert!(report.response().batch_item_failures.is_empty(), "the test event is acknowledged");
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1, "the processor never sees the test event");
    let object = &seen[0].0.records[0];
    assert_eq!((object.bucket.as_str(), object.key.as_str()), ("xxx", "test.pdf"));
    assert_eq!((object.size, object.event_name.as_str()), (Some(104_681), "ObjectCreated:Put"));
}

#[tokio::test]
async fn what_does_not_open_is_quarantined_with_the_layer_that_failed() {
    let batch = BatchProcessor::builder(|_: &Message<'_, Greeting>| async { Verdict::Done })
        .envelope(Envelope::Sns)
        .build()
        .unwrap();
    let mut records = fixture("powertools-sns-sqs.json").records;
    let sns_body = records[0].body.clone().unwrap();
    let plain = records[0].clone().with_body(r#"{"message":"hi","username":"u"}"#);
    let mut bad_inside =
        records[0].clone().with_body(sns_body.replace("hello world", "\\\"broken"));
    bad_inside.message_id = Some("bad-inside".into());
    records = vec![plain, bad_inside];
    records[0].message_id = Some("plain".into());
    let report = batch.process(&records, deadline()).await.unwrap();
    let codes: Vec<_> = report
        .outcomes
        .iter()
        .map(|o| match &o.outcome {
            // Without a quarantine store, a permanent failure is returned for the redrive policy.
            Outcome::QuarantineFailed { code, detail } => (code.clone(), detail.clone()),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(codes[0].0, ErrorCode::InvalidEnvelope);
    assert!(codes[0].1.contains("sns-raw"), "{}", codes[0].1);
    assert_eq!(codes[1].0, ErrorCode::InvalidJson);
    assert!(codes[1].1.contains("in the SNS Message: "), "{}", codes[1].1);
}

#[tokio::test]
async fn one_message_published_twice_is_a_duplicate_not_a_reused_key() {
    let batch = BatchProcessor::builder(|_: &Message<'_, Greeting>| async { Verdict::Done })
        .envelope(Envelope::Sns)
        .idempotency(Idempotency::in_memory())
        .build()
        .unwrap();
    let first = fixture("powertools-sns-sqs.json").records;
    // SNS gives a second publish of the same message its own MessageId and time.
    let body = first[0].body.clone().unwrap();
    let again = body.replace("d88d4479", "e99e5580").replace("10:07:07.287Z", "10:09:00.000Z");
    let mut second = first.clone();
    second[0] = second[0].clone().with_body(again);
    second[0].message_id = Some("another-sqs-id".into());
    batch.process(&first, deadline()).await.unwrap();
    let report = batch.process(&second, deadline()).await.unwrap();
    assert!(
        matches!(report.outcomes[0].outcome, Outcome::Duplicate { .. }),
        "{:?}",
        report.outcomes[0].outcome
    );
}
