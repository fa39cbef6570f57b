//! `sqs-backpressure doctor --template --parameters` on this repository's
//! template, before any deploy: every parameter set the repository carries
//! passes; a set breaking each of the template's Rules is refused exactly as
//! CloudFormation's evaluation of them (template_topology's) refuses it; a bad
//! value is refused as its parameter's constraints say; and what a set would
//! change of what already runs is named.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use e2e_tests::fixtures::{binary, unique};
use serde_json::Value;

use crate::template_topology::{Deployment, template};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// doctor's exit code and JSON report for a parameter file.
fn doctor(parameters: &Path) -> (i32, Value) {
    let output = std::process::Command::new(binary("sqs-backpressure").unwrap())
        .args(["doctor", "--json", "--template"])
        .arg(root().join("template.yaml"))
        .arg("--parameters")
        .arg(parameters)
        .output()
        .unwrap();
    let report = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (output.status.code().unwrap_or(-1), report)
}

fn doctor_on(set: &[(&str, &str)]) -> (i32, Value) {
    let map: BTreeMap<&str, &str> = set.iter().copied().collect();
    let path = std::env::temp_dir().join(format!("{}.json", unique("doctor-set")));
    std::fs::write(&path, serde_json::to_string(&map).unwrap()).unwrap();
    let answer = doctor(&path);
    std::fs::remove_file(&path).unwrap();
    answer
}

/// The (rule, resource) of each finding.
fn findings(report: &Value) -> Vec<(String, String)> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_owned(),
                f["resource"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

fn refused_rules(report: &Value) -> Vec<String> {
    let mut rules: Vec<String> = findings(report)
        .into_iter()
        .filter(|(rule, _)| rule == "template-rule-refuses")
        .map(|(_, resource)| resource.trim_start_matches("rule ").to_owned())
        .collect();
    rules.sort();
    rules
}

#[test]
fn every_parameter_set_in_the_repository_passes_doctor() {
    let mut sets = Vec::new();
    for dir in ["deploy", "tests/template-sets"] {
        for entry in std::fs::read_dir(root().join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml" || e == "json") {
                sets.push(path);
            }
        }
    }
    assert!(sets.len() >= 13, "found only {} parameter sets", sets.len());
    for set in sets {
        let (exit, report) = doctor(&set);
        assert_eq!((exit, findings(&report)), (0, vec![]), "{}", set.display());
    }
}

/// For each of the template's Rules, a set that breaks it.
const BREAKING: &[(&str, &[(&str, &str)])] = &[
    ("OurConsumerHasADownstream", &[]),
    (
        "OwnFunctionIsTheLambdaConsumer",
        &[
            ("ConsumerType", "ecs"),
            ("EcsClusterName", "workers"),
            ("EcsServiceName", "orders-worker"),
            ("ConsumerFunctionArn", "arn:aws:lambda:us-east-1:123456789012:function:ledger"),
        ],
    ),
    (
        "AnExistingServiceKeepsItsScalingUnlessAsked",
        &[
            ("ConsumerType", "ecs"),
            ("EcsClusterName", "workers"),
            ("EcsServiceName", "orders-worker"),
            ("ScalingSignal", "metric-math"),
        ],
    ),
    (
        "ExistingScalingTargetIsAnExistingService",
        &[
            ("ConsumerType", "ecs"),
            ("EcsClusterName", "workers"),
            ("EcsServiceName", "orders-worker"),
            ("ScalingTarget", "existing"),
            ("ScalingSignal", "metric-math"),
        ],
    ),
    (
        "OffloadedPayloadsHaveABucket",
        &[("DownstreamUrl", "https://d.example/w"), ("OffloadedPayloads", "read")],
    ),
    (
        "MaximumConcurrencyIsValid",
        &[("DownstreamUrl", "https://d.example/w"), ("MaximumConcurrency", "1")],
    ),
    (
        "ProvisionedPollersAlone",
        &[
            ("DownstreamUrl", "https://d.example/w"),
            ("MaximumConcurrency", "10"),
            ("ProvisionedMinimumPollers", "2"),
            ("ProvisionedMaximumPollers", "10"),
        ],
    ),
    (
        "OneConsumerWithLambda",
        &[("DownstreamUrl", "https://d.example/w"), ("EcsServiceName", "orders-worker")],
    ),
    ("EcsConsumerIsNamed", &[("ConsumerType", "ecs"), ("DownstreamUrl", "https://d.example/w")]),
    (
        "WorkerServiceHasSubnets",
        &[
            ("ConsumerType", "ecs"),
            ("EcsClusterName", "workers"),
            ("EcsServiceName", "orders-worker"),
            ("WorkerImage", "123456789012.dkr.ecr.us-east-1.amazonaws.com/worker:1"),
            ("DownstreamUrl", "https://d.example/w"),
        ],
    ),
];

#[test]
fn each_rule_of_the_template_broken_is_refused_as_cloudformation_refuses_it() {
    let template = template();
    let mut declared: Vec<String> = template["Rules"]
        .as_mapping()
        .unwrap()
        .keys()
        .map(|k| k.as_str().unwrap().to_owned())
        .collect();
    let mut covered: Vec<String> = BREAKING.iter().map(|(rule, _)| (*rule).to_owned()).collect();
    declared.sort();
    covered.sort();
    assert_eq!(covered, declared, "one breaking set per rule of the template");
    for (rule, set) in BREAKING {
        let given = set.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        let mut expected = Deployment::new(template.clone(), &given).refused_by();
        expected.sort();
        let (exit, report) = doctor_on(set);
        assert!(expected.contains(&(*rule).to_owned()), "{rule}: the set does not break it");
        assert_eq!((exit, refused_rules(&report)), (4, expected), "{rule}");
    }
}

#[test]
fn values_the_parameters_do_not_take_are_refused_with_what_they_take() {
    let (exit, report) = doctor_on(&[
        ("DownstreamUrl", "https://d.example/w"),
        ("ConsumerTimeout", "45"),
        ("BatchSize", "ten"),
        ("MetricNamespace", "AWS/SQS"),
        ("ConsumerTypo", "lambda"),
    ]);
    assert_eq!(exit, 4);
    let mut found = findings(&report);
    found.sort();
    let expected: Vec<(String, String)> =
        ["BatchSize", "ConsumerTimeout", "ConsumerTypo", "MetricNamespace"]
            .iter()
            .map(|name| ("parameter-invalid".to_owned(), format!("parameter {name}")))
            .collect();
    assert_eq!(found, expected);
    let measured: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["measured"].as_str().unwrap())
        .collect();
    assert!(
        measured.iter().any(|m| m.contains("one of 10, 15, 30, 60, 120, 300, 600, 900")),
        "{measured:?}"
    );
}

#[test]
fn a_set_that_registers_scaling_on_a_service_you_run_says_so() {
    let existing = [
        ("ConsumerType", "ecs"),
        ("EcsClusterName", "workers"),
        ("EcsServiceName", "orders-worker"),
        ("ExistingWorkQueueArn", "arn:aws:sqs:us-east-1:123456789012:orders"),
    ];
    let changed = |report: &Value| -> Vec<(String, String)> {
        report["offline"]["changes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["resource"].as_str().unwrap().to_owned(),
                    c["change"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    let (exit, left_alone) = doctor_on(&existing);
    assert_eq!((exit, changed(&left_alone)), (0, vec![]));

    let mut create = existing.to_vec();
    create.push(("ScalingTarget", "create"));
    let (exit, report) = doctor_on(&create);
    assert_eq!(exit, 0);
    let changes = changed(&report);
    let target: Vec<&(String, String)> =
        changes.iter().filter(|(r, _)| r == "ScalableTarget").collect();
    assert_eq!(target.len(), 1, "{changes:?}");
    assert!(target[0].1.starts_with(
        "registers a scalable target on service/workers/orders-worker (0 to 10 tasks)"
    ));
    assert!(
        changes.iter().any(|(r, c)| r == "BacklogPerTaskScalingPolicy"
            && c.contains("service/workers/orders-worker"))
    );
}

#[test]
fn a_batch_above_ten_without_a_window_is_refused_before_the_deploy() {
    let (exit, report) =
        doctor_on(&[("DownstreamUrl", "https://d.example/w"), ("BatchSize", "100")]);
    assert_eq!(exit, 4, "{report}");
    let finding = &report["findings"][0];
    assert_eq!(finding["rule"], "batch-without-window", "{report}");
    assert_eq!(finding["resource"], "mapping ConsumerFunctionWorkQueue");
    assert_eq!(
        finding["fix"],
        "in the template, ConsumerFunctionWorkQueue's MaximumBatchingWindowInSeconds: 1 (the \
         template sets it from MaximumBatchingWindowInSeconds)"
    );
    let (exit, report) = doctor_on(&[
        ("DownstreamUrl", "https://d.example/w"),
        ("BatchSize", "100"),
        ("MaximumBatchingWindowInSeconds", "1"),
    ]);
    let rules: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    assert!(!rules.contains(&"batch-without-window"), "{report}");
    assert_ne!(exit, 4, "{report}");
}

#[test]
fn a_batching_window_is_inside_the_visibility_timeout_the_template_sets() {
    for window in ["1", "20", "300"] {
        let (exit, report) = doctor_on(&[
            ("DownstreamUrl", "https://d.example/w"),
            ("MaximumBatchingWindowInSeconds", window),
        ]);
        assert_eq!(exit, 0, "window {window}: {report}");
        assert_eq!(report["findings"], serde_json::json!([]), "window {window}");
    }
    // A window longer than the visibility timeout's allowance is refused before the deploy.
    let (exit, report) = doctor_on(&[
        ("DownstreamUrl", "https://d.example/w"),
        ("MaximumBatchingWindowInSeconds", "301"),
    ]);
    assert_eq!(exit, 4, "{report}");
    assert_eq!(report["findings"][0]["rule"], "parameter-invalid", "{report}");
}

/// A set for a service you run that gives the task bounds: the stack registers no scaling for
/// it, so the bounds take no effect, and doctor says so as a person reads it.
#[test]
fn task_bounds_given_for_a_service_whose_scaling_the_stack_leaves_alone_are_unused() {
    let mut set = vec![
        ("ConsumerType", "ecs"),
        ("EcsClusterName", "workers"),
        ("EcsServiceName", "orders-worker"),
        ("ExistingWorkQueueArn", "arn:aws:sqs:us-east-1:123456789012:orders"),
        ("MinTasks", "2"),
        ("MaxTasks", "20"),
    ];
    let (exit, report) = doctor_on(&set);
    let unused = [
        ("parameter-unused".to_owned(), "parameter MaxTasks".to_owned()),
        ("parameter-unused".to_owned(), "parameter MinTasks".to_owned()),
    ];
    assert_eq!((exit, findings(&report)), (3, unused.to_vec()), "{report}");
    let said: Vec<String> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| format!("{}\nfix: {}", f["measured"], f["fix"]))
        .collect();
    insta::assert_snapshot!(said.join("\n"));
    set.push(("ScalingTarget", "create"));
    let (exit, report) = doctor_on(&set);
    assert_eq!((exit, findings(&report)), (0, vec![]), "the stack registers them: {report}");
    // The wrapper the queue's bodies come in reaches your worker through WorkerEnvironment.
    set.retain(|(name, _)| !["ScalingTarget", "MinTasks", "MaxTasks"].contains(name));
    set.push(("Envelope", "sns"));
    let (exit, report) = doctor_on(&set);
    assert_eq!((exit, findings(&report)), (0, vec![]), "Envelope is used: {report}");
}
