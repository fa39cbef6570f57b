//! The comparison table, as plain text (Markdown-compatible).

pub mod existing;
pub mod fidelity;
pub mod held_out;
pub mod json;
pub mod recommend;

use std::fmt::Write;

use crate::sim::Scenario;
use crate::sim::policy::{Consumer, Policy};
use crate::stats::Outcome;

/// The columns and their widths; the first is left-aligned, the rest right.
const COLUMNS: [(&str, usize); 12] = [
    ("policy", 22),
    ("SLO misses", 16),
    ("p50 wait", 8),
    ("p99 wait", 8),
    ("task-min", 9),
    ("actions", 7),
    ("reversals", 9),
    ("zero→first task", 15),
    ("peak", 5),
    ("left", 7),
    ("DLQ", 6),
    ("SLO", 3),
];

fn line(cells: [String; 12]) -> String {
    let mut out = String::from("|");
    for (i, (cell, (_, width))) in cells.iter().zip(COLUMNS).enumerate() {
        let _ = if i == 0 {
            write!(out, " {cell:<width$} |")
        } else {
            write!(out, " {cell:>width$} |")
        };
    }
    out.push('\n');
    out
}

/// The table's header line and separator (Markdown, numbers right-aligned),
/// the first column titled `first`: what its rows name.
pub fn header(first: &str) -> String {
    let mut titles = COLUMNS.map(|(title, _)| title.to_owned());
    first.clone_into(&mut titles[0]);
    let mut out = line(titles);
    out.push('|');
    for (i, (_, width)) in COLUMNS.into_iter().enumerate() {
        let dashes = "-".repeat(width + 1);
        out.push_str(&if i == 0 { format!("{dashes}-|") } else { format!("{dashes}:|") });
    }
    out.push('\n');
    out
}

/// One run's row, named `label`.
pub fn row(label: &str, outcome: &Outcome, quantile: f64) -> String {
    let seconds = |value: Option<u64>| value.map_or_else(|| "-".to_owned(), |s| format!("{s} s"));
    let share = if outcome.counted == 0 {
        0.0
    } else {
        outcome.slo_misses() as f64 / outcome.counted as f64 * 100.0
    };
    let zero = match outcome.worst_zero_to_first_task() {
        None => "-".to_owned(),
        Some(None) => "never".to_owned(),
        Some(Some(worst)) => format!("{worst} s"),
    };
    line([
        label.to_owned(),
        format!("{} ({share:.1}%)", outcome.slo_misses()),
        seconds(outcome.waits.quantile(0.5)),
        seconds(outcome.waits.quantile(0.99)),
        format!("{:.1}", outcome.task_minutes()),
        outcome.actions.len().to_string(),
        outcome.direction_changes().to_string(),
        zero,
        outcome.peak_desired().to_string(),
        outcome.left.to_string(),
        outcome.dead_lettered.to_string(),
        if outcome.meets_slo(quantile) { "met" } else { "no" }.to_owned(),
    ])
}

/// The whole comparison for one trace: a title, the settings, the table and
/// the verdict on ours.
pub fn comparison(scenario: &Scenario, outcomes: &[Outcome]) -> String {
    let mut out = String::new();
    let slo = scenario.slo;
    let _ = writeln!(
        out,
        "### {} — {} messages over {} min, SLO: {:.0} % wait ≤ {} s\n",
        scenario.trace.name,
        scenario.trace.total(),
        scenario.trace.seconds() / 60,
        slo.quantile * 100.0,
        slo.latency_seconds,
    );
    let _ = writeln!(
        out,
        "targets: load {} %, the others {} per task; {}–{} tasks, {} slots × {:.2} s mean \
         service, start-up {:.0} s, seed {}{}{}\n",
        scenario.publisher.load.target_percent,
        scenario.scaling.target.get(),
        scenario.scaling.min_tasks,
        scenario.scaling.max_tasks,
        scenario.workers.slots,
        scenario.workers.service.mean(),
        scenario.workers.startup_seconds,
        scenario.seed,
        metric_period(scenario),
        if at_defaults(scenario) { " (targets and tasks: the template's defaults)" } else { "" },
    );
    out.push_str(&header("policy"));
    for outcome in outcomes {
        out.push_str(&row(outcome.consumer.label(), outcome, slo.quantile));
    }
    let _ = writeln!(out, "\n{}", verdict(outcomes, slo.quantile));
    out
}

/// `, metric period 20 s` when the scaling metric's period is not a minute.
pub fn metric_period(scenario: &Scenario) -> String {
    let period = scenario.publisher.metric_period;
    if period == crate::sim::cloudwatch::PERIOD_SECONDS {
        String::new()
    } else {
        format!(", metric period {period} s")
    }
}

/// Whether every policy runs at the template's default targets and task range.
fn at_defaults(scenario: &Scenario) -> bool {
    let load = backlog_publisher::load::LoadSettings::DEFAULT.target_percent;
    scenario.publisher.load.target_percent == load
        && scenario.scaling.target.get() == crate::defaults::TARGET
        && scenario.scaling.min_tasks == crate::defaults::MIN_TASKS
        && scenario.scaling.max_tasks == crate::defaults::MAX_TASKS
        && scenario.publisher.metric_period == crate::sim::cloudwatch::PERIOD_SECONDS
}

/// Whether the template's policy meets the SLO with fewer task-minutes than
/// every other policy that also meets it.
pub fn verdict(outcomes: &[Outcome], quantile: f64) -> String {
    let template = Consumer::Ecs(Policy::TEMPLATE);
    let Some(ours) = outcomes.iter().find(|o| o.consumer == template) else {
        return "ours was not run".to_owned();
    };
    let others: Vec<&Outcome> =
        outcomes.iter().filter(|o| o.consumer != template && o.meets_slo(quantile)).collect();
    if !ours.meets_slo(quantile) {
        let meeting: Vec<&str> = others.iter().map(|o| o.consumer.label()).collect();
        return format!(
            "ours misses the SLO ({} messages late); meeting it: {}",
            ours.slo_misses(),
            if meeting.is_empty() { "none".to_owned() } else { meeting.join(", ") },
        );
    }
    let cheaper: Vec<String> = others
        .iter()
        .filter(|o| o.task_seconds <= ours.task_seconds)
        .map(|o| format!("{} ({:.1} task-min)", o.consumer.label(), o.task_minutes()))
        .collect();
    if others.is_empty() {
        format!(
            "ours meets the SLO with {:.1} task-min; no other policy meets it",
            ours.task_minutes()
        )
    } else if cheaper.is_empty() {
        let dearer: Vec<String> = others
            .iter()
            .map(|o| format!("{} ({:.1})", o.consumer.label(), o.task_minutes()))
            .collect();
        format!(
            "ours meets the SLO with {:.1} task-min, fewer than every other policy meeting it: {}",
            ours.task_minutes(),
            dearer.join(", ")
        )
    } else {
        format!(
            "ours meets the SLO with {:.1} task-min; as cheap or cheaper and also meeting it: {}",
            ours.task_minutes(),
            cheaper.join(", ")
        )
    }
}

/// Each policy at its own best setting (`compare --best-settings`): which
/// setting, how it did over the seeds, and how ours compares, whatever that shows.
pub fn best_comparison(
    scenario: &Scenario,
    found: &[(Policy, crate::recommend::Recommendation)],
) -> String {
    let slo = scenario.slo;
    let mut out = String::new();
    let Some(r) = found.first().map(|(_, f)| f.robustness) else { return out };
    let _ = writeln!(
        out,
        "### {} — {} messages over {} min, SLO: {:.0} % wait ≤ {} s\n\neach policy at its own \
         cheapest setting meeting the SLO on {} seeds with p{:.0} ≤ {:.0} s (recommend's grid, \
         MaxTasks {}), else its closest\n",
        scenario.trace.name,
        scenario.trace.total(),
        scenario.trace.seconds() / 60,
        slo.quantile * 100.0,
        slo.latency_seconds,
        r.seeds,
        slo.quantile * 100.0,
        r.margin * slo.latency_seconds as f64,
        scenario.scaling.max_tasks,
    );
    out.push_str(&format!(
        "| policy                 | target | MinTasks | met on | task-min (mean of {}) | \
             worst p99 | actions/day | reversals/day |\n|---|---:|---:|---:|---:|---:|---:|---:|\n",
        r.seeds
    ));
    let mut met: Vec<(Policy, f64)> = Vec::new();
    for (policy, recommendation) in found {
        let Some(c) = recommendation.best.as_ref().or(recommendation.closest.as_ref()) else {
            continue;
        };
        if recommendation.best.is_some() {
            met.push((*policy, c.task_minutes));
        }
        let _ = writeln!(
            out,
            "| {:<22} | {}{} | {} | {} of {} | {:.1} | {} | {:.1} | {:.1} |",
            policy.label(),
            c.target.get(),
            if *policy == Policy::Load { " %" } else { "" },
            c.min_tasks,
            c.seeds_met,
            r.seeds,
            c.task_minutes,
            c.worst_wait.map_or("-".to_owned(), |w| format!("{w} s")),
            c.actions_per_day,
            c.reversals_per_day
        );
    }
    let _ = writeln!(out, "\n{}", best_verdict(found));
    out
}

/// The template's policy against the cheapest alternative (none of ours),
/// each at its own best setting: the ratio of task-minutes and the reversals.
fn best_verdict(found: &[(Policy, crate::recommend::Recommendation)]) -> String {
    let met = |policy: &Policy| {
        found.iter().find(|(p, _)| p == policy).and_then(|(_, r)| r.best.as_ref())
    };
    let alternative = found
        .iter()
        .filter(|(p, _)| !p.is_ours())
        .filter_map(|(p, r)| Some((*p, r.best.as_ref()?)))
        .min_by(|a, b| a.1.task_minutes.total_cmp(&b.1.task_minutes));
    match (met(&Policy::TEMPLATE), alternative) {
        (None, None) => "no policy meets the SLO at any setting of the grid".to_owned(),
        (None, Some(_)) => {
            format!(
                "{} meets the SLO at no setting of the grid; others do",
                Policy::TEMPLATE.label()
            )
        }
        (Some(ours), None) => format!(
            "{} meets the SLO with {:.1} task-min; no alternative meets it at any setting",
            Policy::TEMPLATE.label(),
            ours.task_minutes
        ),
        (Some(ours), Some((policy, other))) => format!(
            "{}: {:.1} task-min, {:.2} × the cheapest alternative ({}, {:.1} task-min), with \
             {:.1} reversals a day to its {:.1}",
            Policy::TEMPLATE.label(),
            ours.task_minutes,
            ours.task_minutes / other.task_minutes,
            policy.label(),
            other.task_minutes,
            ours.reversals_per_day,
            other.reversals_per_day
        ),
    }
}
