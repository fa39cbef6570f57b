//! `recommend`'s text, its JSON and its table, from one search, say the same
//! thing on every built-in trace and on the shapes users bring (a day of no
//! arrivals, one spike, a trickle, saturation): no figure or verdict
//! printed contradicts another.

#![allow(clippy::unwrap_used)]

#[allow(dead_code)]
mod common;

use capacity_planner::Scenario;
use capacity_planner::args::ScenarioArgs;
use capacity_planner::commands::Found;
use capacity_planner::recommend::Robustness;
use clap::Parser;
use common::scratch;
use serde_json::Value;

#[derive(Parser)]
struct Command {
    #[command(flatten)]
    scenario: ScenarioArgs,
}

fn scenarios(args: &[&str]) -> Vec<Scenario> {
    let command = Command::try_parse_from(std::iter::once("simulate").chain(args.iter().copied()));
    command.unwrap().scenario.scenarios().unwrap()
}

/// A CSV of `rows` five-minute periods from 09:10, each with `arrivals(row)`.
fn csv(dir: &std::path::Path, name: &str, rows: u32, arrivals: impl Fn(u32) -> u64) -> String {
    let path = dir.join(format!("{name}.csv"));
    let mut text = String::from("Timestamp,NumberOfMessagesSent\n");
    for row in 0..rows {
        let at = 1_796_029_800 + u64::from(row) * 300 + 600;
        text.push_str(&format!("{at},{}\n", arrivals(row)));
    }
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

/// The cells of the one-run table's row: the line after its header's rule.
fn table_row(text: &str) -> Vec<String> {
    let mut lines = text.lines().skip_while(|l| !l.starts_with("its run on seed"));
    let row = lines.find(|l| l.starts_with("| load")).unwrap();
    row.trim_matches('|').split('|').map(|cell| cell.trim().to_owned()).collect()
}

fn shown(value: &Value, unit: &str) -> String {
    match value {
        Value::Null => "-".to_owned(),
        Value::Number(n) => format!("{n}{unit}"),
        other => panic!("not a figure: {other}"),
    }
}

fn agrees(text: &str, json: &Value) {
    let name = json["trace"].as_str().unwrap();
    let met = json["met"].as_bool().unwrap();
    let row = &json["rows"][0];
    let seeds = &row["over_seeds"];
    assert_eq!(text.contains("\nrecommended: "), met, "{name}: {text}");
    assert_eq!(text.contains("no setting meets the SLO"), !met, "{name}");

    let cells = table_row(text);
    assert_eq!(cells[2], shown(&row["p50_wait_s"], " s"), "{name}: p50");
    assert_eq!(cells[3], shown(&row["p99_wait_s"], " s"), "{name}: p99");
    assert_eq!(cells[4], format!("{:.1}", row["task_minutes"].as_f64().unwrap()), "{name}");
    assert_eq!(cells[5], row["actions"].to_string(), "{name}: actions");
    assert_eq!(cells[6], row["reversals"].to_string(), "{name}: reversals");
    assert_eq!(cells[8], row["peak_desired"].to_string(), "{name}: peak");
    assert_eq!(cells[9], row["left"].to_string(), "{name}: left");
    let run_met = row["slo_met"].as_bool().unwrap();
    assert_eq!(cells[11], if run_met { "met" } else { "no" }, "{name}: SLO column");
    if cells[7] == "never" {
        assert!(row["left"].as_u64().unwrap() > 0, "{name}: never woke, yet nothing was left");
    }
    if run_met && !met {
        assert!(text.contains("(this one run meets the SLO;"), "{name}: the table's met unsaid");
    }

    let over = format!(
        "{:.1} task-min, {:.1} actions and {:.1} reversals a day",
        seeds["task_minutes_mean"].as_f64().unwrap(),
        seeds["actions_per_day"].as_f64().unwrap(),
        seeds["reversals_per_day"].as_f64().unwrap(),
    );
    assert!(text.contains(&over), "{name}: {over} not in {text}");
    let worst = shown(&seeds["worst_quantile_wait_s"], " s");
    let verdict =
        format!("worst p99 {worst}, met on {} of {} seeds", seeds["seeds_met"], json["seeds"]);
    assert!(text.contains(&verdict), "{name}: {verdict}");
    if met {
        assert_eq!(seeds["seeds_met"], json["seeds"], "{name}: met on every seed");
    }

    match json["deploy"].as_str() {
        Some(deploy) => assert!(met && text.contains(deploy), "{name}: the deploy line"),
        None => assert!(
            !text.contains(
                "sam deploy --parameter-overrides ConsumerType=ecs Scaling\
             Signal=load"
            ),
            "{name}: a deploy line the JSON has not"
        ),
    }
    match json["binding_limit"].as_str() {
        Some(limit) => assert!(!met && text.contains(limit), "{name}: the binding limit"),
        None => assert!(met, "{name}: unmet with no limit named"),
    }
    assert_eq!(
        text.contains("\ncheaper on this trace: "),
        !json["cheaper_alternative"].is_null(),
        "{name}: the cheaper alternative"
    );
    for alternative in json["alternatives"].as_array().unwrap() {
        let policy = alternative["policy"].as_str().unwrap();
        assert!(text.contains(policy), "{name}: {policy} is not mentioned");
        if !alternative["met"].as_bool().unwrap() {
            let unmet = text.lines().find(|l| l.contains("at no setting here")).unwrap_or("");
            assert!(unmet.contains(policy), "{name}: {policy}'s failure unsaid");
        }
        if let Some(past) = alternative["past_reversal_limit"].as_object() {
            let said = format!(
                "note: {policy} costs less at target {} and MinTasks {}, {:.1} task-min",
                past["target"].as_f64().unwrap(),
                past["min_tasks"],
                past["task_minutes"].as_f64().unwrap()
            );
            assert!(text.contains(&said), "{name}: {said}");
        }
    }
    for note in json["notes"].as_array().unwrap() {
        assert!(text.contains(note.as_str().unwrap()), "{name}: a note the text lacks: {note}");
    }
    assert_eq!(
        text.contains("note: the load costs less"),
        !json["past_reversal_limit"].is_null(),
        "{name}: the load's setting past the reversal limit"
    );
}

fn check_all(scenarios: &[Scenario]) {
    let robustness = Robustness { seeds: 1, ..Robustness::default() };
    for scenario in scenarios {
        let found = Found::search(scenario, robustness);
        agrees(&found.text(scenario, false), &found.json(scenario));
    }
}

#[test]
fn text_json_and_table_agree_on_every_built_in_trace() {
    check_all(&scenarios(&[]));
}

#[test]
fn text_json_and_table_agree_on_the_shapes_users_bring() {
    let dir = scratch("recommend-agrees");
    let zero = csv(&dir, "zero", 288, |_| 0);
    let spike = csv(&dir, "spike", 72, |row| if row == 20 { 20_000 } else { 0 });
    let trickle = csv(&dir, "trickle", 288, |row| u64::from(row % 6 == 0));
    let saturation = csv(&dir, "saturation", 72, |_| 300_000);
    for path in [&zero, &spike, &trickle, &saturation] {
        check_all(&scenarios(&["--csv", path]));
    }
    let zero = &scenarios(&["--csv", &zero])[0];
    let found = Found::search(zero, Robustness::default()).json(zero);
    assert_eq!(found["met"], true, "nothing arrives: nothing can wait");
    assert_eq!(found["rows"][0]["min_tasks"], 0);
    assert_eq!(found["rows"][0]["task_minutes"], 0.0);
}
