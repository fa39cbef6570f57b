//! Every flag a run would not read is refused as a usage error (exit 2) that
//! names the flag and says what to do instead, reviewed as snapshots: one per
//! subcommand and consumer, each flag of the other consumer and each setting
//! the subcommand chooses itself given alone.

// Only `simulate` and `text` of the shared helpers are needed here.
#[allow(dead_code)]
mod common;

use common::{simulate, text};

/// A valid value for each flag only the ECS worker's model reads (none for a switch).
const ECS_ONLY: [(&str, Option<&str>); 16] = [
    ("--target", Some("5")),
    ("--target-load", Some("100")),
    ("--load-drain-seconds", Some("60")),
    ("--load-hold-seconds", Some("60")),
    ("--min-tasks", Some("1")),
    ("--max-tasks", Some("5")),
    ("--initial-tasks", Some("1")),
    ("--startup-seconds", Some("30")),
    ("--drain-seconds", Some("10")),
    ("--no-protection", None),
    ("--schedule-seconds", Some("120")),
    ("--metric-lag-seconds", Some("10")),
    ("--metric-period", Some("60")),
    ("--backlog-includes", Some("visible")),
    ("--task-count", Some("running")),
    ("--zero-capacity", Some("stay")),
];

/// A valid value for each flag only the Lambda consumer's model reads.
const LAMBDA_ONLY: [(&str, Option<&str>); 11] = [
    ("--batch-size", Some("5")),
    ("--batching-window", Some("1")),
    ("--maximum-concurrency", Some("10")),
    ("--provisioned-min-pollers", Some("2")),
    ("--provisioned-max-pollers", Some("5")),
    ("--account-concurrency", Some("100")),
    ("--function-timeout", Some("60")),
    ("--deadline-margin-ms", Some("1000")),
    ("--memory-mb", Some("512")),
    ("--downstream-max-rps", Some("10")),
    ("--downstream-capacity", Some("100")),
];

/// Each run's command line, exit code and stderr, one after another; every
/// run must be a usage error.
fn refusals(runs: impl IntoIterator<Item = Vec<String>>) -> String {
    let mut said = String::new();
    for args in runs {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = simulate(&args);
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        said.push_str(&format!("$ simulate {}\n{stderr}\n", args.join(" ")));
    }
    said
}

/// `leading…` followed by each flag (with its value) on its own.
fn each_flag(leading: &[&str], flags: &[(&str, Option<&str>)]) -> Vec<Vec<String>> {
    flags
        .iter()
        .map(|(flag, value)| {
            leading.iter().chain([flag]).chain(value).map(|word| (*word).to_owned()).collect()
        })
        .collect()
}

fn words(args: &[&str]) -> Vec<String> {
    args.iter().map(|word| (*word).to_owned()).collect()
}

#[test]
fn compare_for_the_ecs_worker_refuses_the_lambda_consumers_settings() {
    let mut runs = each_flag(&["compare"], &LAMBDA_ONLY);
    runs.push(words(&["compare", "--consumer", "ecs", "--batch-size", "5"]));
    insta::assert_snapshot!("compare_ecs", refusals(runs));
}

#[test]
fn compare_for_the_lambda_consumer_refuses_the_ecs_workers_settings() {
    let mut runs = each_flag(&["compare", "--consumer", "lambda"], &ECS_ONLY);
    runs.push(words(&["compare", "--consumer", "lambda", "--best-settings"]));
    insta::assert_snapshot!("compare_lambda", refusals(runs));
}

#[test]
fn recommend_for_the_ecs_worker_refuses_what_it_searches_and_the_lambda_consumers_settings() {
    let searched =
        [("--target", Some("5")), ("--target-load", Some("100")), ("--min-tasks", Some("1"))];
    let mut runs = each_flag(&["recommend"], &searched);
    runs.extend(each_flag(&["recommend"], &LAMBDA_ONLY));
    // What it searches is said before the other consumer's flag.
    runs.push(words(&["recommend", "--batch-size", "5", "--min-tasks", "1"]));
    insta::assert_snapshot!("recommend_ecs", refusals(runs));
}

#[test]
fn recommend_for_the_lambda_consumer_refuses_what_it_searches_and_the_ecs_workers_settings() {
    let searched = [
        ("--maximum-concurrency", Some("10")),
        ("--batch-size", Some("5")),
        ("--provisioned-min-pollers", Some("2")),
    ];
    let lambda = ["recommend", "--consumer", "lambda"];
    let mut runs = each_flag(&lambda, &searched);
    runs.extend(each_flag(&lambda, &ECS_ONLY));
    runs.push(words(&["recommend", "--consumer", "lambda", "--target", "5", "--batch-size", "5"]));
    insta::assert_snapshot!("recommend_lambda", refusals(runs));
}

#[test]
fn cross_validate_refuses_one_trace_the_lambda_consumer_and_what_it_chooses() {
    let chosen = [
        ("--target-load", Some("100")),
        ("--load-hold-seconds", Some("60")),
        ("--min-tasks", Some("1")),
        ("--target", Some("5")),
    ];
    let mut runs = vec![
        words(&["cross-validate", "--trace", "steady"]),
        words(&["cross-validate", "--csv", "trace.csv"]),
        words(&["cross-validate", "--consumer", "lambda"]),
        words(&["cross-validate", "--consumer", "lambda", "--trace", "steady", "--target", "5"]),
        words(&["cross-validate", "--trace", "steady", "--target", "5"]),
    ];
    runs.extend(each_flag(&["cross-validate"], &chosen));
    runs.extend(each_flag(&["cross-validate"], &LAMBDA_ONLY));
    insta::assert_snapshot!("cross_validate", refusals(runs));
}

#[test]
fn the_cpu_policy_is_read_only_for_a_service_that_keeps_its_own_target() {
    let cpu = [
        ("--cpu-target", Some("50")),
        ("--cpu-idle-percent", Some("2")),
        ("--cpu-per-message", Some("1")),
        ("--cpu-scale-in-cooldown", Some("60")),
    ];
    let mut runs = each_flag(&["recommend"], &cpu);
    runs.push(words(&["recommend", "--scaling-target", "existing", "--consumer", "lambda"]));
    // Beside the CPU policy the load's target is still what recommend searches.
    runs.push(words(&["recommend", "--scaling-target", "existing", "--target-load", "100"]));
    runs.push(words(&["recommend", "--scaling-target", "existing", "--cpu-target", "0"]));
    insta::assert_snapshot!("recommend_existing", refusals(runs));
}
