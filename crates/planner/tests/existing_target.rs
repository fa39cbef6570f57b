//! `recommend --scaling-target existing`: a service that scales on its CPU
//! keeps its own target, and the answer is the ScalingLoad policy to add
//! beside the CPU one, against the CPU policy alone, with lines that set
//! only what that stack applies.

#![allow(clippy::unwrap_used)]

mod common;

use capacity_planner::Scenario;
use capacity_planner::commands::existing_json_and_text;
use capacity_planner::recommend::Robustness;
use capacity_planner::sim::cpu::CpuPolicy;
use capacity_planner::trace::BuiltIn;
use common::{assert_deployable, scratch, simulate, text};

/// An I/O-bound worker: a message in work adds 1 % to its task's CPU, so 32 busy slots
/// reach 37 % and the CPU policy at 70 % never scales out.
fn io_bound() -> CpuPolicy {
    CpuPolicy {
        target_percent: 70.0,
        scale_in_cooldown: 300,
        idle_percent: 5.0,
        percent_per_message: 1.0,
    }
}

fn diurnal(min_tasks: u64) -> Scenario {
    let mut scenario = Scenario::new(
        BuiltIn::Diurnal.trace(1),
        backlog_publisher::BacklogTarget::new(100.0).unwrap(),
    );
    scenario.initial_tasks = BuiltIn::Diurnal.initial_tasks();
    scenario.scaling.min_tasks = min_tasks;
    scenario
}

#[test]
fn beside_a_cpu_policy_that_cannot_see_the_queue_the_load_keeps_the_slo() {
    let robustness = Robustness { seeds: 1, ..Robustness::default() };
    let (text, json) = existing_json_and_text(&diurnal(1), io_bound(), robustness);
    assert_eq!(json["met"], true, "{text}");
    assert_eq!(
        json["cpu_alone"]["over_seeds"]["seeds_met"], 0,
        "the CPU alone lets the queue grow"
    );
    let change = &json["against_cpu_alone"];
    let late = change["late"].as_array().unwrap();
    assert!(late[0].as_f64().unwrap() > 0.0 && late[1].as_f64().unwrap() == 0.0, "{change}");
    // The text says what the JSON says.
    let said = format!(
        "against CPU alone: task-min {:.1} → {:.1}",
        change["task_minutes"][0].as_f64().unwrap(),
        change["task_minutes"][1].as_f64().unwrap()
    );
    assert!(text.contains(&said), "{said}\n{text}");
    let target = json["rows"][0]["target"].as_f64().unwrap();
    assert!(text.contains(&format!("add beside it: TargetLoadPercent={target}:")), "{text}");
    let cells = |label: &str| {
        let row = text.lines().find(|l| l.starts_with(&format!("| {label}"))).unwrap();
        row.split('|').map(str::trim).nth(5).unwrap().to_owned()
    };
    assert_eq!(
        cells("CPU alone"),
        format!("{:.1}", json["cpu_alone"]["task_minutes"].as_f64().unwrap())
    );
    assert_eq!(
        cells("CPU + load"),
        format!("{:.1}", json["rows"][0]["task_minutes"].as_f64().unwrap())
    );

    // The two commands: the publisher with only what ScalingTarget=existing applies, and the
    // policy with the target found.
    let deploy = json["deploy"].as_str().unwrap();
    assert!(text.contains(deploy));
    assert_deployable(deploy);
    assert!(deploy.contains("ScalingTarget=existing"));
    for not_applied in [
        " MinTasks=",
        " MaxTasks=",
        " WorkerVisibilityTimeout=",
        " DrainSeconds=",
        " MaxReceiveCount=",
    ] {
        assert!(!deploy.contains(not_applied), "{not_applied} in {deploy}");
    }
    for note in json["notes"].as_array().unwrap() {
        assert!(text.contains(note.as_str().unwrap()), "a note the text lacks: {note}");
    }
    assert!(text.contains(json["metric_command"].as_str().unwrap()), "how to get $metric");
    let policy = json["put_scaling_policy"].as_str().unwrap();
    assert!(text.contains(policy));
    assert!(policy.contains(&format!("\\\"TargetValue\\\": {target},")), "{policy}");
}

#[test]
fn at_min_tasks_zero_the_answer_is_to_give_the_targets_min_capacity() {
    let robustness = Robustness { seeds: 1, ..Robustness::default() };
    let mut scenario = Scenario::new(
        BuiltIn::BurstFromIdle.trace(1),
        backlog_publisher::BacklogTarget::new(100.0).unwrap(),
    );
    scenario.scaling.min_tasks = 0;
    let (text, json) = existing_json_and_text(&scenario, io_bound(), robustness);
    assert_eq!(json["met"], false);
    let limit = json["binding_limit"].as_str().unwrap();
    assert!(limit.contains("--min-tasks") && text.contains(limit), "{text}");
    assert!(json["deploy"].is_null() && !text.contains("sam deploy"));
}

#[test]
fn the_command_draws_both_runs_and_prints_json() {
    let dir = scratch("existing");
    let out = dir.to_str().unwrap();
    let args = [
        "recommend",
        "--scaling-target",
        "existing",
        "--trace",
        "steady",
        "--min-tasks",
        "1",
        "--cpu-per-message",
        "1",
        "--seeds",
        "1",
        "--out",
        out,
    ];
    let output = simulate(&args);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let said = text(&output.stdout);
    assert!(said.contains("CPU alone (as it scales today):"), "{said}");
    let svg = std::fs::read_to_string(dir.join("steady-existing.svg")).unwrap();
    assert!(svg.contains("CPU, %") && svg.contains("CPU alone"), "the CPU's strip and its run");
    let json = simulate(&[&args[..], &["--json"]].concat());
    let line: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(line["scaling_target"], "existing");
    assert_eq!(line["cpu_policy"]["percent_per_message"], 1.0);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_cpu_policy_that_can_never_scale_out_is_said_to() {
    let robustness = Robustness { seeds: 1, ..Robustness::default() };
    let (text, json) = existing_json_and_text(&diurnal(1), io_bound(), robustness);
    // 5 % idle and 32 messages at 1 % each: 37 %, below the target of 70 %.
    let said = "a task with all 32 slots busy uses at most 37.0 % CPU, not above the CPU policy's \
                target of 70 %: on its own the CPU policy never scales out";
    assert!(text.contains(said), "{text}");
    assert!(json["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().contains(said)));
    let cpu_bound = CpuPolicy { percent_per_message: 3.0, ..io_bound() };
    let (text, _) = existing_json_and_text(&diurnal(1), cpu_bound, robustness);
    assert!(!text.contains("never scales out"), "{text}");
}
