//! What `simulate cross-validate` prints: the held-out table, in Markdown so
//! docs/deploy.md can carry it as printed.

use std::fmt::Write;

use crate::check::held_out::{GOAL, Row, Score, TraceResult, settings};
use crate::sim::policy::Policy;

fn setting(index: usize) -> String {
    settings().get(index).map_or("-".to_owned(), |s| {
        format!("{} %, hold {} min, MinTasks {}", s.target, s.hold / 60.0, s.min_tasks)
    })
}

fn judged(result: &TraceResult, index: Option<usize>, seeds: u32) -> String {
    let Some(index) = index else { return "-".to_owned() };
    let score = &result.load[index];
    let ratio = result.ratio(index).map_or("-".to_owned(), |r| format!("{r:.2}"));
    let slo = if score.seeds_met == seeds {
        String::new()
    } else {
        format!(", SLO met on {} of {seeds} seeds", score.seeds_met)
    };
    let over = if over_the_bound(result, score) { ", over the bound" } else { "" };
    format!("{ratio} ({:.1}{over}{slo})", score.reversals_per_day)
}

/// Whether `score` has more reversals than the bound allows on `result`'s trace.
fn over_the_bound(result: &TraceResult, score: &Score) -> bool {
    score.reversals_per_day > result.bound_for(score) + 1e-9
}

fn describe((policy, score): &(Policy, Score)) -> String {
    format!(
        "{} (target {}, MinTasks {}): {:.1} ({:.1})",
        policy.label(),
        score.target,
        score.min_tasks,
        score.task_minutes,
        score.reversals_per_day
    )
}

/// The table, the defaults chosen on every trace, and what held out.
pub fn table(results: &[TraceResult], rows: &[Row], seeds: u32) -> String {
    let mut out = String::new();
    let n = results.len();
    let _ = writeln!(
        out,
        "| trace | cheapest alternative at its best | ours at its own best | chosen on all {n} | \
         chosen on the other {} (held out) | reversal bound a day (MinTasks 0 / ≥ 1) |\n|---|---|---|---:|---|---:|",
        n.saturating_sub(1)
    );
    for (result, row) in results.iter().zip(rows) {
        let _ = writeln!(out, "{}", line(result, row, seeds));
    }
    if let Some(limits) = limits(results, rows) {
        let _ = writeln!(out, "\n{limits}");
    }
    let _ = writeln!(out, "\n{}", summary(results, rows, seeds));
    out
}

/// A trace's row of the table.
fn line(result: &TraceResult, row: &Row, seeds: u32) -> String {
    let mut alternative =
        result.alternative.as_ref().map_or("none meets the SLO".to_owned(), describe);
    if let Some(flapping) = &result.flapping {
        let _ = write!(alternative, "; over the bound: {}", describe(flapping));
    }
    let own = row.own.map_or("no setting meets the SLO and the bound".to_owned(), |i| {
        format!("{}: {}", setting(i), judged(result, Some(i), seeds))
    });
    format!(
        "| {} | {alternative} | {own} | {} | {}: {} | {:.0} / {:.1} |",
        result.name,
        judged(result, row.all, seeds),
        setting(row.held_out.unwrap_or(usize::MAX)),
        judged(result, row.held_out, seeds),
        result.bound.0,
        result.bound.1
    )
}

/// The traces where [`GOAL`] is out of reach because the alternative's
/// floor of tasks is the answer, said once under the table.
fn limits(results: &[TraceResult], rows: &[Row]) -> Option<String> {
    let limits: Vec<String> = results
        .iter()
        .zip(rows)
        .filter(|(result, row)| {
            result.floor_is_the_answer()
                && row.own.and_then(|i| result.ratio(i)).is_none_or(|r| r > GOAL)
        })
        .map(|(result, _)| {
            let minutes = result.run_minutes;
            format!("{} (one task for its {minutes:.0} minutes)", result.name)
        })
        .collect();
    (!limits.is_empty()).then(|| {
        format!(
            "The limit, where {GOAL} × is out of reach: the cheapest alternative within the bound \
             is its MinTasks running all along, which nothing that keeps a task through the quiet \
             spells undercuts: {}.",
            limits.join("; ")
        )
    })
}

/// The defaults chosen on every trace beside the template's, and how the
/// held-out traces fared at the defaults chosen without them.
fn summary(results: &[TraceResult], rows: &[Row], seeds: u32) -> String {
    let n = results.len();
    let (mut goal, mut bounded, mut met) = (0, 0, 0);
    for (result, i) in results.iter().zip(rows).filter_map(|(r, row)| Some((r, row.held_out?))) {
        let score = &result.load[i];
        goal += usize::from(result.ratio(i).is_some_and(|r| r <= GOAL));
        bounded += usize::from(score.reversals_per_day <= result.bound_for(score) + 1e-9);
        met += usize::from(score.seeds_met == seeds);
    }
    let all = rows.first().and_then(|r| r.all);
    format!(
        "Task-minutes (means of {seeds} seed(s)); reversals a day in brackets. Chosen on all {n}: \
         {} (the template deploys {} %, hold {} min, MinTasks {}).\nHeld out, each trace judged at the defaults chosen without it: {goal} of {n} at or \
         below {GOAL} × the cheapest alternative, {bounded} of {n} within the reversal bound, \
         the SLO met on every seed on {met} of {n}.",
        setting(all.unwrap_or(usize::MAX)),
        backlog_publisher::load::LoadSettings::DEFAULT.target_percent,
        backlog_publisher::load::LoadSettings::DEFAULT.hold_seconds / 60.0,
        crate::defaults::MIN_TASKS
    )
}
