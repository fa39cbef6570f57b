//! Fuzz targets: each takes arbitrary bytes, drives one piece of the pure
//! logic with them, and panics only when a promise is broken. `make fuzz`
//! runs them under AFL++ (coverage-guided, on the stable toolchain);
//! `make test` replays the committed corpus in `fuzz/corpus/<target>/`.

// A fuzz target reports a broken promise by panicking: that is what AFL++ records.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use backlog_publisher::backlog::{BacklogPolicy, Readings};
use backlog_publisher::metrics::{cloudwatch_accepts, datums};
use backlog_publisher::{
    BacklogIncludes, BacklogTarget, PublisherConfig, QueueCounts, ServiceCounts, Target,
    TaskCountMode,
};
use backpressure_app::WorkRequest;
use backpressure_app::config::ConsumerConfig;
use backpressure_app::delivery::Downstream;
use backpressure_batch::ErrorCode;
use backpressure_batch::Labels;
use backpressure_batch::quarantine::record_for;
use backpressure_batch::{record::SqsEvent, record::SqsRecord};
use backpressure_core::config::Vars;
use backpressure_core::queue::{QueueKind, QueueRef};
use backpressure_core::sqs_limits::sqs_accepts;
use serde_json::Value;

/// Every target, by the name `make fuzz` and the corpus folders use.
pub type FuzzTarget = fn(&[u8]);

pub const TARGETS: &[(&str, FuzzTarget)] = &[
    ("event", event),
    ("contract", contract),
    ("quarantine", quarantine),
    ("config", config),
    ("arithmetic", arithmetic),
];

pub fn target(name: &str) -> Option<FuzzTarget> {
    TARGETS.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
}

/// An SQS event as Lambda would deliver it (or not): decoding never panics,
/// any JSON is either an SQS event or says what it is instead (the handler's
/// `InvalidEvent`), and every record it
/// yields makes a quarantine record SQS accepts, from which the body comes
/// back byte for byte.
pub fn event(data: &[u8]) {
    let strict = serde_json::from_slice::<SqsEvent>(data);
    if let (Ok(_), Err(error)) = (serde_json::from_slice::<Value>(data), &strict) {
        let said = error.to_string();
        assert!(
            said.contains("not an SQS event") || said.contains("not SQS records"),
            "JSON that is not an SQS event must say what it is instead: {said}"
        );
    }
    let Ok(event) = strict else { return };
    for record in &event.records {
        let _ = record.trace_context().map(|trace| trace.traceparent());
        let _ = (record.receive_count(), record.message_group_id());
        check_record(record, &Labels::default(), "fuzzed");
    }
}

/// A message body: the contract parse never panics, and what it accepts has
/// every required field non-blank.
pub fn contract(data: &[u8]) {
    let Ok(body) = std::str::from_utf8(data) else { return };
    match WorkRequest::parse(body) {
        Ok(request) => {
            for field in [
                &request.schema_version,
                &request.operation,
                &request.tenant_id,
                &request.idempotency_key,
            ] {
                assert!(!field.trim().is_empty(), "accepted a blank field in {body:?}");
            }
        }
        Err(violation) => {
            assert!(
                matches!(
                    violation.code,
                    ErrorCode::InvalidJson
                        | ErrorCode::SchemaViolation
                        | ErrorCode::UnsupportedSchemaVersion
                ),
                "{:?}",
                violation.code
            );
            let record = SqsRecord::new("m").with_body(body);
            check_record(&record, &violation.labels, &violation.detail);
        }
    }
}

/// Arbitrary text in every field a quarantine record takes from a message.
pub fn quarantine(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.split('\u{1}');
    let mut next = || parts.next().map(str::to_owned);
    let mut record = SqsRecord::new(next().unwrap_or_else(|| "m".into()));
    record.body = next();
    record.event_source_arn = next();
    let labels = Labels::default().schema_version(next()).operation(next()).tenant_id(next());
    let detail = next().unwrap_or_default();
    check_record(&record, &labels, &detail);
}

fn check_record(record: &SqsRecord, labels: &Labels, detail: &str) {
    let code = &ErrorCode::SchemaViolation;
    let quarantined = record_for(record, code, detail, labels, "fuzz", UNIX_EPOCH);
    let json = quarantined.to_sqs_json().expect("a quarantine record always encodes");
    assert!(json.chars().all(sqs_accepts), "SQS would refuse the record {json:?}");
    for (name, value) in quarantined.message_attributes() {
        assert!(value.chars().all(sqs_accepts), "SQS would refuse attribute {name}={value:?}");
    }
    let back: Value = serde_json::from_str(&json).expect("the record is JSON");
    assert_eq!(back["body"].as_str(), record.body.as_deref(), "the body must round-trip");
    assert_eq!(back["tenantId"].as_str(), labels.tenant_id.as_deref(), "tenantId must round-trip");
}

/// Lines of `NAME=value`: the configuration parsers never panic, and what
/// they accept is within the documented ranges.
pub fn config(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let pairs: Vec<(String, String)> = text
        .lines()
        .filter_map(|line| line.split_once('='))
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .collect();
    let lookup = |name: &str| pairs.iter().rev().find(|(n, _)| n == name).map(|(_, v)| v.clone());
    let vars = Vars::new(lookup);
    if let Ok(config) = PublisherConfig::from_vars(&vars) {
        assert!(!config.targets.is_empty());
        for target in &config.targets {
            if let Some(goal) = target.backlog_target {
                assert!((BacklogTarget::MIN..=BacklogTarget::MAX).contains(&goal.get()));
            }
        }
        assert!((100..=60_000).contains(&config.api_call_timeout.as_millis()));
    }
    if let Ok(config) = ConsumerConfig::from_vars(&vars) {
        assert!(config.concurrency >= 1);
        assert!(config.backoff.base <= config.backoff.max);
    }
    if let Ok(downstream) = Downstream::from_vars(&vars)
        && let Some(rps) = downstream.max_rps
    {
        // What the rate limiter does with it: must not panic.
        let _ = Duration::from_secs_f64(1.0 / rps);
    }
}

/// Counts and a target from the bytes: every datum is one CloudWatch
/// accepts, and `DesiredTasks` is the exact ceiling.
pub fn arithmetic(data: &[u8]) {
    let mut words = data.chunks(8).map(|chunk| {
        let mut bytes = [0_u8; 8];
        bytes[..chunk.len()].copy_from_slice(chunk);
        u64::from_le_bytes(bytes)
    });
    let mut next = || words.next().unwrap_or(0);
    let counts = QueueCounts { visible: next(), in_flight: next(), delayed: next() };
    let service = ServiceCounts { running: next(), pending: next(), desired: next() };
    let flags = next();
    let goal = BacklogTarget::new(f64::from_bits(next()));
    let dlq = (flags & 8 != 0).then(&mut next);
    let policy = BacklogPolicy {
        includes: BacklogIncludes { in_flight: flags & 1 != 0, delayed: flags & 2 != 0 },
        task_count: match flags >> 4 & 3 {
            0 => TaskCountMode::Running,
            1 => TaskCountMode::RunningPlusPending,
            _ => TaskCountMode::Desired,
        },
    };
    let readings = Readings { queue: counts, service, dlq_visible: dlq };
    let kind = if flags & 4 != 0 { QueueKind::Fifo } else { QueueKind::Standard };
    let sample = policy.sample(readings, kind, goal);
    let queue = QueueRef::parse("https://sqs.us-east-1.amazonaws.com/1/q").expect("a valid URL");
    let target = Target { queue, cluster: "c".into(), service: "s".into(), backlog_target: goal };
    for datum in datums(&target, &sample, SystemTime::UNIX_EPOCH) {
        assert!(cloudwatch_accepts(datum.value), "{} = {}", datum.name, datum.value);
    }
    if let Some(goal) = goal {
        let millionths = (goal.get() * 1e6).round() as u128;
        let exact = (u128::from(sample.backlog) * 1_000_000).div_ceil(millionths);
        let expected = u64::try_from(exact).unwrap_or(u64::MAX);
        assert_eq!(sample.desired_tasks, Some(expected));
        if sample.backlog > 0 && sample.task_count == 0 {
            assert!(sample.backlog_per_task > goal.get(), "the zero guard must exceed the target");
        }
    }
}
