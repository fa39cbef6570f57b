//! The `simulate` binary as a user runs it: tables, pictures, a CSV trace,
//! and clear errors for bad settings.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use capacity_planner::sim::policy::Policy;
use std::process::Output;

use common::{assert_deployable, scratch, simulate, text};

fn stdout(output: &Output) -> String {
    text(&output.stdout)
}

fn stderr(output: &Output) -> String {
    text(&output.stderr)
}

#[test]
fn compare_prints_a_row_per_policy_and_draws_a_panel_per_policy() {
    let dir = scratch("compare");
    let out = dir.to_str().unwrap();
    let output = simulate(&["compare", "--trace", "burst-from-idle", "--out", out]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    for label in [
        "ours: load ",
        "ours: backlog per task",
        "queue depth",
        "÷ running, 0 at zero",
        "metric math ÷ running",
        "copilot",
        "ours with Sum",
    ] {
        assert_eq!(
            text.lines().filter(|line| line.starts_with(&format!("| {label}"))).count(),
            1,
            "{label}\n{text}"
        );
    }
    assert!(text.contains("### burst-from-idle — "), "{text}");
    let svg = std::fs::read_to_string(dir.join("burst-from-idle-detail.svg")).unwrap();
    assert!(svg.starts_with("<svg"), "{}", &svg[..80.min(svg.len())]);
    for label in ["ours: load — ", "queue depth — ", "ours with Sum — "] {
        assert_eq!(svg.matches(label).count(), 1, "{label}");
    }
    let texts: Vec<&str> = svg.lines().map(str::trim).collect();
    for said in ["SLO 300 s", "head-of-queue wait", "00:20", "01:50"] {
        assert!(texts.contains(&said), "the legend, the SLO and the clock: {said}");
    }
    assert!(!texts.contains(&"02:00"), "the trace ends at 02:00: a label there would be cut");
    assert!(!texts.contains(&"20.0"), "minutes are on the clock, not counted from 0");
    let png = std::fs::read(dir.join("burst-from-idle-detail.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "a PNG beside the SVG");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_csv_trace_is_simulated_and_a_bad_one_is_refused_with_its_line() {
    let dir = scratch("csv");
    let good = dir.join("exported.csv");
    std::fs::write(&good, "Timestamp,NumberOfMessagesSent\n0,0\n60,600\n120,600\n180,0\n").unwrap();
    let output =
        simulate(&["compare", "--csv", good.to_str().unwrap(), "--out", dir.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("### exported — 1200 messages over 4 min"),
        "{}",
        stdout(&output)
    );
    assert!(dir.join("exported.svg").exists());

    let binary = dir.join("binary.csv");
    std::fs::write(&binary, b"0,5\n\xff\xfe,1\n").unwrap();
    let output =
        simulate(&["compare", "--csv", binary.to_str().unwrap(), "--out", dir.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains(&format!("--csv {}: ", binary.display())),
        "{}",
        stderr(&output)
    );
    assert!(stderr(&output).contains("UTF-8"), "{}", stderr(&output));

    let huge = dir.join("huge.csv");
    std::fs::File::create(&huge).unwrap().set_len(200 * 1024 * 1024).unwrap();
    let output =
        simulate(&["compare", "--csv", huge.to_str().unwrap(), "--out", dir.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("209715200 bytes; a trace file may hold at most 134217728"),
        "{}",
        stderr(&output)
    );

    let bad = dir.join("bad.csv");
    std::fs::write(&bad, "0,5\n60,five\n").unwrap();
    let output =
        simulate(&["compare", "--csv", bad.to_str().unwrap(), "--out", dir.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("line 2: arrivals \"five\""), "{}", stderr(&output));
    assert_eq!(stderr(&output).matches("line 2").count(), 1, "said once: {}", stderr(&output));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_cloudwatch_export_with_missing_periods_is_no_arrivals_said_once() {
    let dir = scratch("gaps");
    let gaps = dir.join("gaps.csv");
    let rows = "\"Timestamp\",\"Sum\"\n2026-11-30 00:00:00,10\n2026-11-30 00:05:00,10\n\
                2026-11-30 05:00:00,2\n";
    std::fs::write(&gaps, rows).unwrap();
    let output =
        simulate(&["compare", "--csv", gaps.to_str().unwrap(), "--out", dir.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    let note = format!(
        "--csv {}: 58 of the trace's 300-second periods had no row and are taken as no arrivals",
        gaps.display()
    );
    assert_eq!(stderr(&output).matches(&note).count(), 1, "{}", stderr(&output));
    assert!(stdout(&output).contains("22 messages over 305 min"), "{}", stdout(&output));

    let columns = dir.join("columns.csv");
    std::fs::write(&columns, "0,1\n60,1\n120,1\n180,1\n240,1\n300,1\n360,1,2\n").unwrap();
    let output =
        simulate(&["compare", "--csv", columns.to_str().unwrap(), "--out", dir.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1));
    let said = "line 7: expected 2 columns (timestamp,arrivals), got 3";
    assert_eq!(stderr(&output).matches(said).count(), 1, "{}", stderr(&output));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn settings_out_of_range_are_refused_naming_the_flag_and_value() {
    let cases: &[(&[&str], &str)] = &[
        (&["--target", "0"], "--target 0:"),
        (&["--min-tasks", "30", "--max-tasks", "20"], "--min-tasks 30: at most --max-tasks"),
        (&["--slo-quantile", "1.5"], "--slo-quantile 1.5:"),
        (&["--service-seconds", "NaN"], "--service-seconds NaN:"),
        (&["--poison-fraction=-0.1"], "--poison-fraction -0.1:"),
        (&["--csv", "/nonexistent/trace.csv"], "--csv /nonexistent/trace.csv:"),
    ];
    for (args, expected) in cases {
        let mut all = vec!["compare", "--trace", "steady", "--out", "target/simulate-test"];
        all.extend_from_slice(args);
        let output = simulate(&all);
        assert_eq!(output.status.code(), Some(1), "{args:?}");
        assert!(stderr(&output).contains(expected), "{args:?}: {}", stderr(&output));
    }
    let file = std::env::temp_dir().join(format!("simulate-test-{}-out-file", std::process::id()));
    std::fs::write(&file, "").unwrap();
    let output =
        simulate(&["compare", "--trace", "burst-from-idle", "--out", file.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains(&format!("--out {}: ", file.display())),
        "{}",
        stderr(&output)
    );
    std::fs::remove_file(file).unwrap();
    let output = simulate(&["compare", "--task-count", "pending"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("expected running, running+pending or desired"),
        "{}",
        stderr(&output)
    );
    let output = simulate(&["compare", "--schedule-seconds", "10"]);
    assert_eq!(output.status.code(), Some(2), "clap's usage error");
}

#[test]
fn recommend_names_the_cheapest_robust_setting_and_the_line_to_deploy_it() {
    let dir = scratch("recommend");
    let out = dir.to_str().unwrap();
    let output =
        simulate(&["recommend", "--trace", "burst-from-idle", "--seeds", "2", "--out", out]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    let line = text.lines().find(|line| line.starts_with("recommended: ")).unwrap();
    let target: f64 = line
        .split("TargetLoadPercent=")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(capacity_planner::recommend::LOAD_TARGETS.contains(&target), "{line}");
    assert!(line.contains("met on 2 of 2 seeds") && line.contains("reversals a day"), "{line}");
    let deploys: Vec<&str> = text
        .lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with("sam deploy ") && l.contains(" ScalingSignal=load "))
        .collect();
    assert!(deploys.len() == 2 && deploys[1].contains("ScalingTarget=create"), "{text}");
    let deploy = deploys[0];
    assert!(
        deploy.contains(&format!("ScalingSignal=load TargetLoadPercent={target} ")),
        "{deploy}"
    );
    assert!(deploy.contains(" AvgProcessingSeconds=1 LoadDrainSeconds=240 "), "{deploy}");
    assert!(deploy.contains(" MaxTasks=10 "), "the template's default: {deploy}");
    assert!(deploy.contains("ConsumerType=ecs") && deploy.contains("ConsumerConcurrency=32"));
    assert_deployable(deploy);
    // The row is the recommended setting's run on the seed given, named so.
    let setting = format!("| load {target} %, MinTasks ");
    assert!(text.contains("its run on seed 1 (the picture's):\n| setting "), "{text}");
    assert!(
        text.lines().any(|row| row.starts_with(&setting) && row.ends_with("| met |")),
        "{text}"
    );
    assert!(!text.contains("(template)"), "a searched setting is not the template's: {text}");
    assert!(dir.join("burst-from-idle-recommended.svg").exists());

    // Nothing meets it: the limit that bound is named, with how far to move it.
    let tight = ["--trace", "steady", "--slots", "4", "--max-tasks", "2", "--seeds", "1"];
    let output = simulate(&[&["recommend", "--out", out][..], &tight[..]].concat());
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("no setting meets the SLO; closest"), "{text}");
    assert!(text.contains("peak reached MaxTasks=2 on 1 of 1 seeds: raise MaxTasks"), "{text}");
    assert!(!text.contains("sam deploy"), "nothing to deploy: {text}");

    for (flag, said) in [
        ("--target-load", "recommend searches --target-load itself"),
        ("--min-tasks", "recommend searches --min-tasks itself"),
        ("--target", "--target is backlog per task's: `simulate compare --best-settings`"),
    ] {
        let output = simulate(&["recommend", "--trace", "steady", flag, "1"]);
        assert_eq!(output.status.code(), Some(2), "{flag}: {}", stderr(&output));
        assert!(stderr(&output).contains(said), "{flag}: {}", stderr(&output));
    }
    let output = simulate(&["recommend", "--margin", "1.5"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn every_model_setting_is_accepted_as_the_docs_spell_it() {
    let dir = scratch("settings");
    let args = [
        "compare",
        "--trace",
        "sparse-trickle",
        "--seed",
        "7",
        "--target",
        "0.5",
        "--min-tasks",
        "1",
        "--max-tasks",
        "3",
        "--slo-seconds",
        "60",
        "--slo-quantile",
        "0.95",
        "--service-seconds",
        "0.2",
        "--service-distribution",
        "lognormal",
        "--slots",
        "2",
        "--startup-seconds",
        "30",
        "--drain-seconds",
        "0",
        "--no-protection",
        "--visibility-timeout",
        "10",
        "--max-receive-count",
        "2",
        "--poison-fraction",
        "0.5",
        "--schedule-seconds",
        "120",
        "--metric-lag-seconds",
        "0",
        "--backlog-includes",
        "visible,inflight",
        "--task-count",
        "running+pending",
        "--zero-capacity",
        "as-one",
        "--target-load",
        "90",
        "--load-drain-seconds",
        "30",
        "--load-hold-seconds",
        "0",
        "--out",
        dir.to_str().unwrap(),
    ];
    let output = simulate(&args);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(
        text.contains(
            "targets: load 90 %, the others 0.5 per task; 1–3 tasks, 2 slots × 0.20 s mean \
             service, start-up 30 s, seed 7"
        ),
        "{text}"
    );
    assert!(text.contains("SLO: 95 % wait ≤ 60 s"), "{text}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn json_is_one_object_per_trace_with_every_run_and_its_setting() {
    let dir = scratch("json");
    let out = dir.to_str().unwrap();
    let traces = ["--trace", "burst-from-idle", "--trace", "steady"];
    let output = simulate(&[&["compare", "--json", "--out", out][..], &traces[..]].concat());
    assert!(output.status.success(), "{}", stderr(&output));
    let lines: Vec<serde_json::Value> =
        stdout(&output).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2, "one line per trace");
    assert_eq!(lines[0]["trace"], "burst-from-idle");
    assert_eq!(lines[0]["slo_seconds"], 300);
    assert!(lines[0]["messages"].as_u64().unwrap() > 0);
    let rows = lines[0]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), Policy::ALL.len(), "every policy");
    for key in [
        "policy",
        "target",
        "min_tasks",
        "max_tasks",
        "slo_met",
        "task_minutes",
        "p50_wait_s",
        "p99_wait_s",
        "actions",
        "reversals",
        "late",
        "left",
    ] {
        assert!(rows.iter().all(|r| r.get(key).is_some()), "{key} in every row");
    }
    assert_eq!(rows[0]["policy"], "ours: load");
    assert_eq!(rows[0]["target"], 120.0, "TargetLoadPercent's default");
    assert_eq!(rows[1]["policy"], "ours: backlog per task");
    assert_eq!(rows[1]["target"], 100.0, "TargetBacklogPerTask's default");

    let output = simulate(&[
        "recommend",
        "--json",
        "--trace",
        "burst-from-idle",
        "--seeds",
        "1",
        "--out",
        out,
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let line: serde_json::Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    assert_eq!(line["trace"], "burst-from-idle");
    assert_eq!(line["rows"].as_array().unwrap().len(), 1, "the recommendation");
    assert_eq!(line["met"], line["rows"][0]["slo_met"]);
    assert!(line["settings_tried"].as_u64().unwrap() > 1);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn best_settings_runs_each_policy_at_its_own_setting_and_says_which() {
    let dir = scratch("best");
    let out = dir.to_str().unwrap();
    let args = ["compare", "--best-settings", "--trace", "sparse-trickle", "--out", out];
    let output = simulate(&[&args[..], &["--json"][..]].concat());
    assert!(output.status.success(), "{}", stderr(&output));
    let line: serde_json::Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    let rows = line["rows"].as_array().unwrap();
    assert_eq!(rows.len(), Policy::ALL.len(), "every policy");
    for row in rows {
        let target = row["target"].as_f64().unwrap();
        let grid = match row["policy"].as_str() {
            Some("ours: load") => &capacity_planner::recommend::LOAD_TARGETS[..],
            _ => &capacity_planner::recommend::TARGETS[..],
        };
        assert!(grid.contains(&target), "{row}");
        assert!(row["min_tasks"].as_u64().unwrap() <= 2, "{row}");
        assert!(row["over_seeds"]["seeds_met"].as_u64().unwrap() <= 5, "{row}");
    }
    // The anchors that cannot leave zero meet the SLO only with a floor of tasks.
    let depth = rows.iter().find(|r| r["policy"] == "queue depth").unwrap();
    assert_eq!(depth["over_seeds"]["seeds_met"], 5, "{depth}");
    assert!(depth["min_tasks"].as_u64().unwrap() >= 1, "{depth}");
    let output = simulate(&args);
    assert!(output.status.success(), "{}", stderr(&output));
    let table = stdout(&output);
    assert!(table.contains("| MinTasks |"), "{table}");
    assert!(table.contains("× the cheapest alternative (queue depth"), "{table}");
    assert!(dir.join("sparse-trickle-best-settings.svg").exists());
    std::fs::remove_dir_all(dir).unwrap();
}
