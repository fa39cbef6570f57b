//! The rows of `--json`: one object per trace, a row per run or searched setting.

use crate::sim::Scenario;
use crate::sim::autoscaling::ScalingConfig;
use crate::stats::Outcome;

/// `x` to a tenth, exactly as the text prints it (`{:.1}`): rounding by
/// arithmetic differs from it at halves (52.05 is 52.0 printed, 52.1 rounded).
pub fn tenth(x: f64) -> f64 {
    format!("{x:.1}").parse().unwrap_or(x)
}

/// One run as a row of the JSON output: the policy, the setting it ran at,
/// and what it did.
pub fn json_row(outcome: &Outcome, scaling: &ScalingConfig, quantile: f64) -> serde_json::Value {
    serde_json::json!({
        "consumer": "ecs",
        "policy": outcome.consumer.label(),
        "target": scaling.target.get(),
        "min_tasks": scaling.min_tasks,
        "max_tasks": scaling.max_tasks,
        "slo_met": outcome.meets_slo(quantile),
        "task_minutes": tenth(outcome.task_minutes()),
        "p50_wait_s": outcome.waits.quantile(0.5),
        "p99_wait_s": outcome.waits.quantile(0.99),
        "actions": outcome.actions.len(),
        "reversals": outcome.direction_changes(),
        "late": outcome.slo_misses(),
        "left": outcome.left,
        "dead_lettered": outcome.dead_lettered,
        "peak_desired": outcome.peak_desired(),
    })
}

/// A searched setting's run as a JSON row, at its own setting, with how it did over the seeds.
pub fn json_candidate(
    scenario: &Scenario,
    candidate: &crate::recommend::Candidate,
) -> serde_json::Value {
    let mut scaling = scenario.scaling;
    scaling.target = candidate.target;
    // The row's target is its policy's: percent for the load.
    scaling.min_tasks = candidate.min_tasks;
    let mut row = json_row(&candidate.outcome, &scaling, scenario.slo.quantile);
    row["over_seeds"] = json_seeds(candidate);
    row
}

/// How a setting did over the seeds, for `recommend --json` and `--best-settings --json`.
fn json_seeds(candidate: &crate::recommend::Candidate) -> serde_json::Value {
    serde_json::json!({
        "seeds_met": candidate.seeds_met,
        "task_minutes_mean": tenth(candidate.task_minutes),
        "late_mean": tenth(candidate.late),
        "worst_quantile_wait_s": candidate.worst_wait,
        "actions_per_day": tenth(candidate.actions_per_day),
        "reversals_per_day": tenth(candidate.reversals_per_day),
    })
}

/// One trace's runs as one JSON object (one line of `--json`).
pub fn json_trace(scenario: &Scenario, rows: Vec<serde_json::Value>) -> serde_json::Value {
    serde_json::json!({
        "trace": scenario.trace.name,
        "messages": scenario.trace.total(),
        "slo_seconds": scenario.slo.latency_seconds,
        "slo_quantile": scenario.slo.quantile,
        "metric_period_s": scenario.publisher.metric_period,
        "rows": rows,
    })
}
