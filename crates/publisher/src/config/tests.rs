use std::collections::HashMap;
use std::time::Duration;

use super::*;
use backpressure_core::config::DEFAULT_NAMESPACE;
use backpressure_core::config::variables::{Reader, read_by};

const QUEUE: &str = "https://sqs.eu-west-1.amazonaws.com/123456789012/work";

fn config(pairs: &[(&str, &str)]) -> Result<PublisherConfig, ConfigError> {
    let env: HashMap<String, String> =
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    PublisherConfig::from_vars(&Vars::new(move |name| env.get(name).cloned()))
}

fn single(extra: &[(&'static str, &'static str)]) -> Vec<(&'static str, &'static str)> {
    let mut pairs = vec![
        ("QUEUE_URL", QUEUE),
        ("ECS_CLUSTER_NAME", "workers"),
        ("ECS_SERVICE_NAME", "consumer"),
    ];
    pairs.extend_from_slice(extra);
    pairs
}

/// The error's message, which must name the variable and the bad value.
fn message(pairs: &[(&str, &str)]) -> String {
    config(pairs).expect_err("configuration should be rejected").to_string()
}

#[test]
fn defaults_for_one_target() {
    let config = config(&single(&[])).unwrap();
    assert_eq!(config.targets.len(), 1);
    let target = &config.targets[0];
    assert_eq!(
        (target.queue.name(), target.cluster.as_str(), target.service.as_str()),
        ("work", "workers", "consumer")
    );
    assert_eq!(target.backlog_target, None);
    assert_eq!(config.namespace, "SqsBackpressure");
    assert_eq!(config.storage_resolution.seconds(), 60);
    assert_eq!(config.policy, BacklogPolicy::default());
    assert_eq!(config.sampling, Sampling { samples: 1, interval: Duration::ZERO });
}

#[test]
fn every_setting_parsed() {
    let config = config(&single(&[
        ("TARGET_BACKLOG_PER_TASK", "100"),
        ("METRIC_NAMESPACE", "Team/Workers"),
        ("STORAGE_RESOLUTION", "1"),
        ("BACKLOG_INCLUDES", "visible, inflight,delayed"),
        ("TASK_COUNT", "running+pending"),
        ("SAMPLES_PER_INVOCATION", "6"),
        ("SAMPLE_INTERVAL_SECONDS", "10"),
    ]))
    .unwrap();
    assert_eq!(config.targets[0].backlog_target.map(BacklogTarget::get), Some(100.0));
    assert_eq!(config.namespace, "Team/Workers");
    assert_eq!(config.storage_resolution, StorageResolution::High);
    assert_eq!(config.policy.includes, BacklogIncludes { in_flight: true, delayed: true });
    assert_eq!(config.policy.task_count, TaskCountMode::RunningPlusPending);
    assert_eq!(config.sampling, Sampling { samples: 6, interval: Duration::from_secs(10) });
}

#[test]
fn target_derived_from_latency_and_processing_time() {
    let config =
        config(&single(&[("ACCEPTABLE_LATENCY_SECONDS", "10"), ("AVG_PROCESSING_SECONDS", "0.1")]))
            .unwrap();
    let target = config.targets[0].backlog_target.unwrap().get();
    assert!((target - 100.0).abs() < 1e-9, "{target}");
}

#[test]
fn several_targets_from_json() {
    let json = format!(
        r#"[{{"queueUrl":"{QUEUE}","cluster":"a","service":"one","targetBacklogPerTask":5}},
            {{"queueUrl":"{QUEUE}-2","cluster":"b","service":"two"}}]"#
    );
    let config = config(&[("TARGETS", &json), ("TARGET_BACKLOG_PER_TASK", "50")]).unwrap();
    let targets: Vec<_> = config
        .targets
        .iter()
        .map(|t| {
            (
                t.queue.name(),
                t.cluster.as_str(),
                t.service.as_str(),
                t.backlog_target.map(BacklogTarget::get),
            )
        })
        .collect();
    assert_eq!(targets, [("work", "a", "one", Some(5.0)), ("work-2", "b", "two", Some(50.0))]);
}

#[test]
fn empty_values_count_as_unset() {
    let config =
        config(&single(&[("TARGETS", ""), ("METRIC_NAMESPACE", " "), ("TASK_COUNT", "")])).unwrap();
    assert_eq!(config.namespace, DEFAULT_NAMESPACE);
}

#[test]
fn errors_name_the_variable_and_the_value() {
    type Case = (Vec<(&'static str, &'static str)>, &'static [&'static str]);
    let cases: Vec<Case> = vec![
        (vec![], &["QUEUE_URL is required"]),
        (vec![("QUEUE_URL", QUEUE), ("ECS_CLUSTER_NAME", "c")], &["ECS_SERVICE_NAME is required"]),
        (single(&[("TARGETS", "[]")]), &["TARGETS", "QUEUE_URL", "not both"]),
        (
            vec![("QUEUE_URL", "work"), ("ECS_CLUSTER_NAME", "c"), ("ECS_SERVICE_NAME", "s")],
            &["QUEUE_URL=\"work\"", "not an SQS queue URL"],
        ),
        (
            vec![("QUEUE_URL", QUEUE), ("ECS_CLUSTER_NAME", "bad name"), ("ECS_SERVICE_NAME", "s")],
            &["ECS_CLUSTER_NAME=\"bad name\""],
        ),
        (
            single(&[("TARGET_BACKLOG_PER_TASK", "0")]),
            &["TARGET_BACKLOG_PER_TASK=\"0\"", "from 0.001 to 1000000000"],
        ),
        (
            single(&[("TARGET_BACKLOG_PER_TASK", "1e300")]),
            &["TARGET_BACKLOG_PER_TASK=\"1e300\"", "from 0.001 to 1000000000"],
        ),
        (
            single(&[
                ("ACCEPTABLE_LATENCY_SECONDS", "1e200"),
                ("AVG_PROCESSING_SECONDS", "1e-200"),
            ]),
            &["ACCEPTABLE_LATENCY_SECONDS", "from 0.001 to 1000000000"],
        ),
        (single(&[("TARGET_BACKLOG_PER_TASK", "lots")]), &["TARGET_BACKLOG_PER_TASK=\"lots\""]),
        (single(&[("TARGET_BACKLOG_PER_TASK", "NaN")]), &["TARGET_BACKLOG_PER_TASK=\"NaN\""]),
        (single(&[("TARGET_BACKLOG_PER_TASK", "inf")]), &["TARGET_BACKLOG_PER_TASK=\"inf\""]),
        (
            single(&[("TARGET_BACKLOG_PER_TASK", "5"), ("ACCEPTABLE_LATENCY_SECONDS", "10")]),
            &["TARGET_BACKLOG_PER_TASK", "not both"],
        ),
        (single(&[("ACCEPTABLE_LATENCY_SECONDS", "10")]), &["AVG_PROCESSING_SECONDS is required"]),
        (single(&[("AVG_PROCESSING_SECONDS", "0.1")]), &["ACCEPTABLE_LATENCY_SECONDS is required"]),
        (
            single(&[("ACCEPTABLE_LATENCY_SECONDS", "-3"), ("AVG_PROCESSING_SECONDS", "0.1")]),
            &["ACCEPTABLE_LATENCY_SECONDS=\"-3\""],
        ),
        (single(&[("METRIC_NAMESPACE", "AWS/SQS")]), &["METRIC_NAMESPACE=\"AWS/SQS\"", "reserved"]),
        (single(&[("METRIC_NAMESPACE", "bad*name")]), &["METRIC_NAMESPACE=\"bad*name\""]),
        (single(&[("STORAGE_RESOLUTION", "30")]), &["STORAGE_RESOLUTION=\"30\"", "60 or 1"]),
        (
            single(&[("BACKLOG_INCLUDES", "visible,queued")]),
            &["BACKLOG_INCLUDES=\"visible,queued\"", "\"queued\""],
        ),
        (
            single(&[("BACKLOG_INCLUDES", "inflight")]),
            &["BACKLOG_INCLUDES=\"inflight\"", "must include visible"],
        ),
        (single(&[("TASK_COUNT", "pending")]), &["TASK_COUNT=\"pending\""]),
        (single(&[("SAMPLES_PER_INVOCATION", "0")]), &["SAMPLES_PER_INVOCATION=\"0\""]),
        (
            single(&[("SAMPLES_PER_INVOCATION", "61"), ("SAMPLE_INTERVAL_SECONDS", "1")]),
            &["SAMPLES_PER_INVOCATION=\"61\""],
        ),
        (single(&[("SAMPLES_PER_INVOCATION", "-1")]), &["SAMPLES_PER_INVOCATION=\"-1\""]),
        (single(&[("SAMPLES_PER_INVOCATION", "4")]), &["SAMPLE_INTERVAL_SECONDS is required"]),
        (
            single(&[("SAMPLES_PER_INVOCATION", "4"), ("SAMPLE_INTERVAL_SECONDS", "0")]),
            &["SAMPLE_INTERVAL_SECONDS=\"0\""],
        ),
        (
            single(&[("SAMPLES_PER_INVOCATION", "4"), ("SAMPLE_INTERVAL_SECONDS", "2.5")]),
            &["SAMPLE_INTERVAL_SECONDS=\"2.5\""],
        ),
        (single(&[("TARGET_LOAD_PERCENT", "80")]), &["CONSUMER_CONCURRENCY is required"]),
        (
            single(&[("TARGET_LOAD_PERCENT", "80"), ("CONSUMER_CONCURRENCY", "32")]),
            &["AVG_PROCESSING_SECONDS is required", "mean seconds"],
        ),
        (
            single(&[("TARGET_LOAD_PERCENT", "5000"), ("CONSUMER_CONCURRENCY", "32")]),
            &["TARGET_LOAD_PERCENT=\"5000\"", "from 1 to 1000"],
        ),
        (
            single(&[("TARGET_LOAD_PERCENT", "80"), ("CONSUMER_CONCURRENCY", "0")]),
            &["CONSUMER_CONCURRENCY=\"0\""],
        ),
        (
            single(&[
                ("TARGET_LOAD_PERCENT", "80"),
                ("CONSUMER_CONCURRENCY", "32"),
                ("AVG_PROCESSING_SECONDS", "1"),
                ("LOAD_HOLD_SECONDS", "soon"),
            ]),
            &["LOAD_HOLD_SECONDS=\"soon\""],
        ),
    ];
    for (pairs, expected) in cases {
        let text = message(&pairs);
        for fragment in expected {
            assert!(text.contains(fragment), "{pairs:?}: {text:?} lacks {fragment:?}");
        }
    }
}

#[test]
fn targets_errors_name_the_value() {
    let cases = [
        ("not json", "expected a JSON array"),
        (r#"{"queueUrl":"x"}"#, "expected a JSON array"),
        ("[]", "empty"),
        (r#"[{"queueUrl":"https://h/1/q","cluster":"c"}]"#, "expected a JSON array"),
        (
            r#"[{"queueUrl":"https://h/1/q","cluster":"c","service":"s","extra":1}]"#,
            "expected a JSON array",
        ),
        (
            r#"[{"queueUrl":"q","cluster":"c","service":"s"}]"#,
            "target 0: `q` is not an SQS queue URL",
        ),
        (r#"[{"queueUrl":"https://h/1/q","cluster":"","service":"s"}]"#, "target 0: cluster"),
        (
            r#"[{"queueUrl":"https://h/1/q","cluster":"c","service":"s","targetBacklogPerTask":-1}]"#,
            "target 0: targetBacklogPerTask",
        ),
        (
            r#"[{"queueUrl":"https://h/1/q","cluster":"c","service":"s"},{"queueUrl":"https://h/1/q","cluster":"c","service":"s"}]"#,
            "target 1 repeats",
        ),
    ];
    for (json, expected) in cases {
        let text = message(&[("TARGETS", json)]);
        assert!(text.starts_with(&format!("TARGETS={json:?}")), "{text}");
        assert!(text.contains(expected), "{json}: {text:?} lacks {expected:?}");
    }
}

#[test]
fn the_variable_list_is_exactly_what_the_code_reads() {
    let asked = std::sync::Mutex::new(std::collections::BTreeSet::new());
    let required = [
        ("QUEUE_URL", "https://sqs.us-east-1.amazonaws.com/1/q"),
        ("ECS_CLUSTER_NAME", "c"),
        ("ECS_SERVICE_NAME", "s"),
        // The load's variables are read only when it is on.
        ("TARGET_LOAD_PERCENT", "100"),
        ("CONSUMER_CONCURRENCY", "32"),
        ("AVG_PROCESSING_SECONDS", "1"),
    ];
    let lookup = |name: &str| {
        asked.lock().unwrap().insert(name.to_owned());
        required.iter().find(|(n, _)| *n == name).map(|(_, v)| (*v).to_owned())
    };
    assert!(PublisherConfig::from_vars(&Vars::new(lookup)).is_ok());
    let expected: std::collections::BTreeSet<String> =
        read_by(Reader::Publisher).map(|v| v.name.to_owned()).collect();
    assert_eq!(asked.into_inner().unwrap(), expected);
}

#[test]
fn the_load_needs_its_variables_and_keeps_the_backlog_target() {
    let config = config(&single(&[
        ("TARGET_BACKLOG_PER_TASK", "100"),
        ("TARGET_LOAD_PERCENT", "90"),
        ("CONSUMER_CONCURRENCY", "16"),
        ("AVG_PROCESSING_SECONDS", "0.5"),
        ("LOAD_DRAIN_SECONDS", "200"),
    ]))
    .unwrap();
    let load = config.load.unwrap();
    assert_eq!((load.target_percent, load.slots, load.processing_seconds), (90.0, 16, 0.5));
    assert_eq!(
        (load.drain_seconds, load.hold_seconds),
        (200.0, LoadSettings::DEFAULT.hold_seconds)
    );
    assert_eq!(config.targets[0].backlog_target.map(BacklogTarget::get), Some(100.0));
    assert_eq!(self::config(&single(&[])).unwrap().load, None);
}
