//! `simulate recommend --scaling-target existing`: for a service that scales
//! itself on CPU, the ScalingLoad policy to add beside the CPU one, against
//! the CPU policy alone, with a picture of both runs.

use std::io::Write;
use std::path::Path;

use serde_json::{Value, json};

use super::Result;
use crate::deployable::{METRIC_COMMAND, existing_deploy_line, put_scaling_policy};
use crate::existing::{self, Change, Existing};
use crate::recommend::Robustness;
use crate::report::existing::{
    CPU_ALONE, EXISTING_FIRST_DEPLOY, beside_label, binding_limit, run_notes,
};
use crate::report::json::{json_candidate, json_trace, tenth};
use crate::sim::Scenario;
use crate::sim::cpu::CpuPolicy;
use crate::{plot, report};

/// The search on one trace beside `cpu`, its picture in `out`, and what it found.
pub(super) fn for_trace(
    scenario: &Scenario,
    cpu: CpuPolicy,
    robustness: Robustness,
    out: &Path,
    json: bool,
    w: &mut impl Write,
) -> Result {
    let found = existing::search(scenario, cpu, robustness);
    let shown = found.beside.best.as_ref().or(found.beside.closest.as_ref());
    let path = out.join(format!("{}-existing.svg", scenario.trace.name));
    if let Some(shown) = shown {
        let title = format!(
            "{}: the CPU policy at {} % alone, and with ScalingLoad at {} % beside it, the runs \
             on seed {}",
            scenario.trace.name,
            cpu.target_percent,
            shown.target.get(),
            scenario.seed
        );
        let alone = plot::Panel {
            label: CPU_ALONE.to_owned(),
            outcome: &found.cpu_alone.outcome,
            target: Some(cpu.target_percent),
            unit: Some("CPU, %"),
        };
        let beside = plot::Panel {
            label: beside_label(shown.target.get()),
            ..plot::Panel::of(&shown.outcome, Some(shown.target.get()))
        };
        plot::write(&path, &title, &[alone, beside], plot::Frame::of(scenario))?;
    }
    if json {
        writeln!(w, "{}", json_line(scenario, &found))?;
        return Ok(());
    }
    writeln!(w, "{}", report::existing::existing(scenario, &found))?;
    if shown.is_some() {
        plot::announce(w, &path)?;
    }
    Ok(())
}

/// The answer on one trace as text and as JSON, from one search: what a
/// test compares.
pub fn existing_json_and_text(
    scenario: &Scenario,
    cpu: CpuPolicy,
    robustness: Robustness,
) -> (String, Value) {
    let found = existing::search(scenario, cpu, robustness);
    (report::existing::existing(scenario, &found), json_line(scenario, &found))
}

/// One trace's answer as a JSON object.
fn json_line(scenario: &Scenario, found: &Existing) -> Value {
    let beside = &found.beside;
    let shown = beside.best.as_ref().or(beside.closest.as_ref());
    let rows = shown.map(|c| vec![json_candidate(scenario, c)]).unwrap_or_default();
    let mut line = json_trace(scenario, rows);
    let cpu = found.cpu;
    line["scaling_target"] = "existing".into();
    line["cpu_policy"] = json!({
        "target_percent": cpu.target_percent,
        "idle_percent": cpu.idle_percent,
        "percent_per_message": cpu.percent_per_message,
        "scale_in_cooldown_s": cpu.scale_in_cooldown,
    });
    line["min_tasks"] = scenario.scaling.min_tasks.into();
    line["max_tasks"] = scenario.scaling.max_tasks.into();
    line["settings_tried"] = beside.tried.into();
    line["seeds"] = beside.robustness.seeds.into();
    line["met"] = beside.best.is_some().into();
    let mut alone = json_candidate(scenario, &found.cpu_alone);
    alone["policy"] = CPU_ALONE.into();
    alone["target"] = cpu.target_percent.into();
    line["cpu_alone"] = alone;
    line["against_cpu_alone"] = beside.best.as_ref().map_or(Value::Null, |best| {
        let change = Change::of(&found.cpu_alone, best);
        let pair = |(a, b): (f64, f64)| json!([tenth(a), tenth(b)]);
        json!({
            "task_minutes": pair(change.task_minutes),
            "late": pair(change.late),
            "reversals_per_day": pair(change.reversals_per_day),
        })
    });
    let target = beside.best.as_ref().map(|best| best.target.get());
    line["deploy"] = target.map(|t| existing_deploy_line(scenario, t)).into();
    line["put_scaling_policy"] = target.map(put_scaling_policy).into();
    let mut notes: Vec<String> =
        target.map(|_| EXISTING_FIRST_DEPLOY.to_owned()).into_iter().collect();
    notes.extend(run_notes(scenario, found));
    line["notes"] = notes.into();
    line["metric_command"] = target.map(|_| METRIC_COMMAND).into();
    if let (None, Some(closest)) = (&beside.best, &beside.closest) {
        line["binding_limit"] = binding_limit(scenario, closest, beside.robustness.seeds).into();
    }
    line["past_reversal_limit"] = beside.cheapest_flapping.as_ref().map_or(Value::Null, |c| {
        json!({"target": c.target.get(), "min_tasks": c.min_tasks,
               "task_minutes": tenth(c.task_minutes), "reversals_per_day": tenth(c.reversals_per_day)})
    });
    line
}
