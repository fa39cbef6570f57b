use std::collections::HashSet;
use std::sync::Mutex;
use std::time::Duration;

use proptest::prelude::*;
use serde_json::json;
use tokio::time::Instant;

use super::*;
use crate::outcome::{ErrorCode, Verdict};
use crate::quarantine::{QuarantineError, QuarantineRecord};
use crate::record::SqsEvent;
use crate::test_request::TestRequest;

/// What a test message asks the scripted processor to do, by its `operation`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Behaviour {
    Ok,
    Retry,
    Reject,
    Panic,
    /// Not JSON at all: the engine rejects it before the processor.
    Garbage,
    /// Takes longer than any deadline in these tests.
    Hang,
}

impl Behaviour {
    fn body(self, index: usize) -> String {
        let operation = match self {
            Self::Garbage => return format!("garbage {index}"),
            Self::Ok => "ok",
            Self::Retry => "retry",
            Self::Reject => "reject",
            Self::Panic => "panic",
            Self::Hang => "hang",
        };
        json!({"schemaVersion": "1", "operation": operation, "tenantId": "t", "idempotencyKey": format!("k{index}")})
            .to_string()
    }
}

#[derive(Default)]
struct ScriptedProcessor {
    started: Mutex<Vec<String>>,
}

impl Processor<TestRequest> for ScriptedProcessor {
    async fn process(&self, message: &Message<'_, TestRequest>) -> Verdict {
        lock(&self.started).push(message.message_id.to_owned());
        match message.decoded.operation.as_str() {
            "ok" => Verdict::Done,
            "retry" => Verdict::retry("downstream said 503"),
            "reject" => Verdict::permanent(ErrorCode::DownstreamRejected, "HTTP 400"),
            "panic" => panic!("processor bug on {}", message.message_id),
            _ => {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                Verdict::Done
            }
        }
    }
}

#[derive(Default)]
struct MemoryQuarantine {
    refuse: HashSet<String>,
    stored: Mutex<Vec<QuarantineRecord>>,
}

impl QuarantineStore for MemoryQuarantine {
    async fn store(&self, records: &[QuarantineRecord]) -> Vec<Result<(), QuarantineError>> {
        records
            .iter()
            .map(|record| {
                if self.refuse.contains(&record.message_id) {
                    Err(QuarantineError::Rejected {
                        code: "Test".into(),
                        message: "refused".into(),
                    })
                } else {
                    lock(&self.stored).push(record.clone());
                    Ok(())
                }
            })
            .collect()
    }
}

fn record(index: usize, behaviour: Behaviour, group: Option<&str>, arn: &str) -> SqsRecord {
    let mut attributes = serde_json::Map::new();
    attributes.insert("ApproximateReceiveCount".into(), json!("1"));
    attributes.insert("SentTimestamp".into(), json!("1700000000000"));
    if let Some(group) = group {
        attributes.insert("MessageGroupId".into(), json!(group));
    }
    SqsRecord {
        message_id: Some(format!("m{index}")),
        receipt_handle: Some(format!("rh{index}")),
        body: Some(behaviour.body(index)),
        attributes,
        event_source_arn: Some(arn.to_owned()),
        ..Default::default()
    }
}

const STANDARD: &str = "arn:aws:sqs:us-east-1:123456789012:work";
const FIFO: &str = "arn:aws:sqs:us-east-1:123456789012:work.fifo";

fn engine(
    refuse: &[&str],
    concurrency: usize,
) -> Engine<ScriptedProcessor, MemoryQuarantine, TestRequest> {
    let quarantine = MemoryQuarantine {
        refuse: refuse.iter().map(|s| (*s).to_owned()).collect(),
        ..Default::default()
    };
    let settings = EngineSettings {
        concurrency,
        deadline_margin: Duration::from_secs(2),
        handler_version: "test".into(),
        envelope: None,
        #[cfg(feature = "offloaded-payloads")]
        offloaded: None,
    };
    Engine::new(ScriptedProcessor::default(), quarantine, settings)
}

fn standard_batch(behaviours: &[Behaviour]) -> SqsEvent {
    SqsEvent {
        records: behaviours
            .iter()
            .enumerate()
            .map(|(i, b)| record(i, *b, None, STANDARD))
            .collect(),
    }
}

fn far_deadline() -> Instant {
    Instant::now() + Duration::from_secs(600)
}

#[tokio::test(start_paused = true)]
async fn each_verdict_becomes_its_outcome() {
    use Behaviour::*;
    let engine = engine(&[], 4);
    let event = standard_batch(&[Ok, Retry, Reject, Garbage, Panic]);
    let report = engine.run(&event.records, far_deadline(), &|_| {}).await.unwrap();
    assert_eq!(report.outcomes[0].outcome, Outcome::Done);
    assert!(matches!(
        &report.outcomes[1].outcome,
        Outcome::Retry { cause: RetryCause::Processor, .. }
    ));
    assert_eq!(
        report.outcomes[2].outcome,
        Outcome::Quarantined { code: ErrorCode::DownstreamRejected }
    );
    assert_eq!(report.outcomes[3].outcome, Outcome::Quarantined { code: ErrorCode::InvalidJson });
    assert!(
        matches!(&report.outcomes[4].outcome, Outcome::Retry { cause: RetryCause::Panicked, detail, .. } if detail.contains("processor bug on m4"))
    );
    assert_eq!(report.batch_item_failures, ["m1", "m4"]);
    let stored: Vec<String> =
        lock(&engine.quarantine.stored).iter().map(|r| r.message_id.clone()).collect();
    assert_eq!(stored, ["m2", "m3"]);
}

#[tokio::test(start_paused = true)]
async fn a_panicking_processor_only_retries_its_own_message() {
    let engine = engine(&[], 1);
    let event = standard_batch(&[Behaviour::Ok, Behaviour::Panic, Behaviour::Ok]);
    let report = engine.run(&event.records, far_deadline(), &|_| {}).await.unwrap();
    assert_eq!(report.batch_item_failures, ["m1"]);
    assert_eq!(report.outcomes[2].outcome, Outcome::Done);
}

#[tokio::test(start_paused = true)]
async fn an_unconfirmed_quarantine_write_means_retry() {
    let engine = engine(&["m1"], 2);
    let event = standard_batch(&[Behaviour::Reject, Behaviour::Garbage]);
    let report = engine.run(&event.records, far_deadline(), &|_| {}).await.unwrap();
    assert_eq!(
        report.outcomes[0].outcome,
        Outcome::Quarantined { code: ErrorCode::DownstreamRejected }
    );
    assert!(matches!(
        &report.outcomes[1].outcome,
        Outcome::QuarantineFailed { code: ErrorCode::InvalidJson, .. }
    ));
    assert_eq!(report.batch_item_failures, ["m1"]);
}

#[tokio::test(start_paused = true)]
async fn a_near_deadline_retries_unfinished_work_instead_of_timing_out() {
    use Behaviour::*;
    let engine = engine(&[], 2);
    let event = standard_batch(&[Ok, Hang, Hang, Ok, Reject]);
    let start = Instant::now();
    let deadline = start + Duration::from_secs(5);
    let report = engine.run(&event.records, deadline, &|_| {}).await.unwrap();
    assert!(
        Instant::now() <= deadline - Duration::from_secs(2) + Duration::from_millis(1),
        "cut at the margin"
    );
    assert_eq!(report.outcomes[0].outcome, Outcome::Done);
    assert!(matches!(
        &report.outcomes[1].outcome,
        Outcome::Retry { cause: RetryCause::Deadline, .. }
    ));
    assert!(matches!(
        &report.outcomes[2].outcome,
        Outcome::Retry { cause: RetryCause::Deadline, .. }
    ));
    // m3 and m4 never started: both hung messages held the two slots.
    assert!(matches!(
        &report.outcomes[3].outcome,
        Outcome::Retry { cause: RetryCause::Deadline, .. }
    ));
    assert_eq!(report.batch_item_failures, ["m1", "m2", "m3", "m4"]);
    assert_eq!(*lock(&engine.processor.started), ["m0", "m1", "m2"]);
}

#[tokio::test(start_paused = true)]
async fn a_deadline_already_inside_the_margin_starts_nothing() {
    let engine = engine(&[], 4);
    let event = standard_batch(&[Behaviour::Ok, Behaviour::Ok]);
    let report =
        engine.run(&event.records, Instant::now() + Duration::from_secs(1), &|_| {}).await.unwrap();
    assert_eq!(report.batch_item_failures, ["m0", "m1"]);
    assert!(lock(&engine.processor.started).is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_record_without_message_id_fails_the_whole_batch() {
    let engine = engine(&[], 4);
    let mut event = standard_batch(&[Behaviour::Ok, Behaviour::Ok, Behaviour::Ok]);
    event.records[2].message_id = Some(String::new());
    let error = engine.run(&event.records, far_deadline(), &|_| {}).await.unwrap_err();
    assert_eq!(error, BatchError::MissingMessageId { position: 2 });
    assert!(lock(&engine.processor.started).is_empty(), "nothing is processed twice");
}

#[tokio::test(start_paused = true)]
async fn fifo_skips_the_rest_of_a_failed_group_only() {
    use Behaviour::*;
    let engine = engine(&[], 4);
    let plan = [(Ok, "a"), (Retry, "a"), (Ok, "a"), (Ok, "b"), (Reject, "b"), (Ok, "b")];
    let event = SqsEvent {
        records: plan.iter().enumerate().map(|(i, (b, g))| record(i, *b, Some(g), FIFO)).collect(),
    };
    let report = engine.run(&event.records, far_deadline(), &|_| {}).await.unwrap();
    assert_eq!(report.batch_item_failures, ["m1", "m2"]);
    assert!(matches!(
        &report.outcomes[2].outcome,
        Outcome::Retry { cause: RetryCause::GroupBlocked, .. }
    ));
    assert_eq!(
        report.outcomes[4].outcome,
        Outcome::Quarantined { code: ErrorCode::DownstreamRejected }
    );
    assert_eq!(
        report.outcomes[5].outcome,
        Outcome::Done,
        "a confirmed quarantine lets the group carry on"
    );
    let started = lock(&engine.processor.started).clone();
    assert!(!started.contains(&"m2".to_owned()));
    let stored = lock(&engine.quarantine.stored);
    assert_eq!(stored[0].message_group_id.as_deref(), Some("b"));
}

#[tokio::test(start_paused = true)]
async fn fifo_quarantine_failure_blocks_the_group() {
    let engine = engine(&["m0"], 4);
    let plan = [Behaviour::Garbage, Behaviour::Ok];
    let event = SqsEvent {
        records: plan.iter().enumerate().map(|(i, b)| record(i, *b, Some("g"), FIFO)).collect(),
    };
    let report = engine.run(&event.records, far_deadline(), &|_| {}).await.unwrap();
    assert_eq!(report.batch_item_failures, ["m0", "m1"]);
    assert!(lock(&engine.processor.started).is_empty());
}

mod acknowledged;
mod property;
mod shared_limit;
mod wrapper;
