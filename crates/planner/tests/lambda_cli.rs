//! `simulate --consumer lambda` as a user runs it: the table, the picture,
//! the recommendation and its deploy line, and flags that do not apply refused.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{assert_deployable, scratch, simulate, text};

#[test]
fn compare_runs_the_mapping_at_the_templates_settings_and_draws_it() {
    let dir = scratch("compare");
    let out = dir.to_str().unwrap();
    let args = ["compare", "--consumer", "lambda", "--trace", "burst-from-idle", "--out", out];
    let output = simulate(&args);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    let row =
        stdout.lines().find(|l| l.starts_with("| MaximumConcurrency=5 BatchSize=10")).unwrap();
    assert!(row.ends_with("| met |") || row.ends_with("|  no |"), "{row}");
    assert!(stdout.contains("ConsumerConcurrency 32"), "{stdout}");
    assert!(dir.join("burst-from-idle-lambda.svg").exists());
    assert!(dir.join("burst-from-idle-lambda.png").exists());

    let json = simulate(&[&args[..], &["--json", "--maximum-concurrency", "0"]].concat());
    assert!(json.status.success(), "{}", text(&json.stderr));
    let line: serde_json::Value = serde_json::from_str(text(&json.stdout).trim()).unwrap();
    let row = &line["rows"][0];
    assert_eq!(
        (row["consumer"].as_str(), row["mode"].as_str()),
        (Some("lambda"), Some("standard"))
    );
    assert!(row["maximum_concurrency"].is_null(), "0 is no cap: {row}");
    assert_eq!(row["batch_size"], 10);
    assert_eq!(line["notes"], serde_json::json!([]), "no deploy line, nothing to note: {line}");
    assert!(row["gb_seconds"].as_f64().unwrap() > 0.0 && row["invocations"].as_u64().unwrap() > 0);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn recommend_names_a_setting_within_the_downstreams_capacity_and_the_line_to_deploy_it() {
    let dir = scratch("recommend");
    let out = dir.to_str().unwrap();
    let base = ["recommend", "--consumer", "lambda", "--trace", "burst-from-idle", "--seeds", "2"];
    let args = [&base[..], &["--downstream-capacity", "50", "--out", out]].concat();
    let output = simulate(&args);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    let line = stdout.lines().find(|l| l.starts_with("recommended: ")).unwrap();
    assert!(line.contains("met on 2 of 2 seeds"), "{line}");
    let peak: u64 = line
        .rsplit("downstream peak ")
        .next()
        .unwrap()
        .trim_end_matches(" rps (worst seed)")
        .parse()
        .unwrap();
    assert!(peak <= 50, "{line}");
    let deploys: Vec<&str> =
        stdout.lines().map(str::trim_start).filter(|l| l.starts_with("sam deploy ")).collect();
    let deploy = deploys[0];
    assert!(deploy.contains("ConsumerType=lambda ") && deploy.contains(" BatchSize="), "{deploy}");
    assert_deployable(deploy);
    // A function of your own: the mapping's and the queue's settings, not the function's.
    let own = deploys[1];
    assert!(own.contains(" BatchSize=") && !own.contains("ConsumerMemorySize="), "{own}");
    assert_deployable(own);
    assert!(dir.join("burst-from-idle-lambda-recommended.png").exists());

    // Provisioned mode searches the pollers, and its line turns MaximumConcurrency off.
    let provisioned = [&base[..], &["--provisioned-max-pollers", "50", "--out", out]].concat();
    let output = simulate(&provisioned);
    let stdout = text(&output.stdout);
    let deploy = stdout.lines().map(str::trim_start).find(|l| l.starts_with("sam deploy")).unwrap();
    assert!(deploy.contains("MaximumConcurrency=0 ProvisionedMinimumPollers="), "{deploy}");
    assert!(deploy.contains("ProvisionedMaximumPollers=50 "), "{deploy}");
    assert_deployable(deploy);

    // Nothing can meet it: the limit that bound is named.
    let starved = [
        &base[..],
        &["--service-seconds", "20", "--slots", "1", "--account-concurrency", "50", "--out", out],
    ]
    .concat();
    let output = simulate(&starved);
    let stdout = text(&output.stdout);
    assert!(stdout.contains("no setting meets the SLO; closest"), "{stdout}");
    assert!(stdout.contains("the account's concurrency (50)"), "{stdout}");
    assert!(!stdout.contains("sam deploy"), "{stdout}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_flag_the_run_would_not_read_is_refused_and_the_mappings_rules_are_kept() {
    let refused: &[(&[&str], &str)] = &[
        (&["compare", "--consumer", "lambda", "--target", "5"], "--target is a setting of the ECS"),
        (
            &["compare", "--consumer", "lambda", "--best-settings"],
            "the Lambda consumer has no policies",
        ),
        (&["compare", "--batch-size", "5"], "--batch-size is a setting of the Lambda consumer"),
        (
            &["recommend", "--consumer", "lambda", "--maximum-concurrency", "10"],
            "recommend searches --maximum-concurrency itself",
        ),
        (&["compare", "--consumer", "lambda", "--maximum-concurrency", "1"], "from 2 to 1000"),
    ];
    for (args, expected) in refused {
        let output = simulate(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(text(&output.stderr).contains(expected), "{args:?}: {}", text(&output.stderr));
    }
    let invalid: &[(&[&str], &str)] = &[
        (&["--batch-size", "20"], "--batch-size 20: must be at most 10 unless --batching-window"),
        (&["--provisioned-min-pollers", "5"], "provisioned mode takes both"),
        (
            &["--provisioned-max-pollers", "5", "--maximum-concurrency", "10"],
            "AWS makes the two mutually exclusive",
        ),
        (
            &["--provisioned-min-pollers", "9", "--provisioned-max-pollers", "5"],
            "at most --provisioned-max-pollers",
        ),
    ];
    for (args, expected) in invalid {
        let all = [&["compare", "--consumer", "lambda", "--trace", "steady"][..], args].concat();
        let output = simulate(&all);
        assert_eq!(output.status.code(), Some(1), "{args:?}");
        assert!(text(&output.stderr).contains(expected), "{args:?}: {}", text(&output.stderr));
    }
}

#[test]
fn a_deploy_line_carries_only_what_the_template_can_deploy_and_says_what_to_add() {
    let dir = scratch("deployable");
    let out = dir.to_str().unwrap();
    let ecs = ["recommend", "--trace", "burst-from-idle", "--seeds", "1", "--out", out];
    let lambda = [&ecs[..], &["--consumer", "lambda"]].concat();
    for base in [&ecs[..], &lambda[..]] {
        let output = simulate(base);
        let stdout = text(&output.stdout);
        let deploy =
            stdout.lines().map(str::trim_start).find(|l| l.starts_with("sam deploy")).unwrap();
        assert_deployable(deploy);
        assert!(stdout.contains("a first deploy needs DownstreamUrl"), "{stdout}");
        let json = simulate(&[base, &["--json"]].concat());
        let line: serde_json::Value = serde_json::from_str(text(&json.stdout).trim()).unwrap();
        assert_eq!(line["deploy"].as_str(), Some(deploy), "{line}");
        assert!(line["notes"][0].as_str().unwrap().contains("a first deploy needs"), "{line}");

        let output = simulate(&[base, &["--max-receive-count", "2"]].concat());
        let stdout = text(&output.stdout);
        assert!(!stdout.contains("sam deploy"), "{stdout}");
        assert!(
            stdout.contains(
                "no deploy line: the template cannot deploy this run as simulated: \
                 MaxReceiveCount=2 (the template takes 5–1000)"
            ),
            "{stdout}"
        );
        let json = simulate(&[base, &["--max-receive-count", "2", "--json"]].concat());
        let line: serde_json::Value = serde_json::from_str(text(&json.stdout).trim()).unwrap();
        assert!(line["deploy"].is_null(), "{line}");
        assert_eq!(line["not_deployable"][0], "MaxReceiveCount=2 (the template takes 5–1000)");
    }
    let output = simulate(&[&ecs[..], &["--schedule-seconds", "120"]].concat());
    let stdout = text(&output.stdout);
    assert!(stdout.contains(" \"ScheduleRate='rate(2 minutes)'\" "), "{stdout}");
    let output = simulate(&[&ecs[..], &["--schedule-seconds", "90"]].concat());
    assert!(text(&output.stdout).contains("ScheduleRate of 90 s"), "{}", text(&output.stdout));

    // Standard mode turns provisioned pollers off, rather than leave a stack's in place.
    let json = simulate(&[&lambda[..], &["--json"]].concat());
    let line: serde_json::Value = serde_json::from_str(text(&json.stdout).trim()).unwrap();
    let deploy = line["deploy"].as_str().unwrap();
    assert!(deploy.contains(" ProvisionedMinimumPollers=0 ProvisionedMaximumPollers=0 "));
    let notes = line["notes"].as_array().unwrap();
    assert!(notes.iter().any(|n| n.as_str().unwrap().contains("6 MB of payload")), "{line}");
    assert!(line["rows"][0]["dead_lettered"].is_u64(), "{line}");
    std::fs::remove_dir_all(dir).unwrap();
}
