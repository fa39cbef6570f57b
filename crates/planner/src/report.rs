//! The comparison table, as plain text (Markdown-compatible).

use std::fmt::Write;

use backlog_publisher::backlog::TaskCountMode;

use crate::policy::{Consumer, Policy};
use crate::sim::Scenario;
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
         service, start-up {:.0} s, seed {}{}\n",
        scenario.publisher.load.target_percent,
        scenario.scaling.target.get(),
        scenario.scaling.min_tasks,
        scenario.scaling.max_tasks,
        scenario.workers.slots,
        scenario.workers.service.mean(),
        scenario.workers.startup_seconds,
        scenario.seed,
        if at_defaults(scenario) { " (targets and tasks: the template's defaults)" } else { "" },
    );
    out.push_str(&header("policy"));
    for outcome in outcomes {
        out.push_str(&row(outcome.consumer.label(), outcome, slo.quantile));
    }
    let _ = writeln!(out, "\n{}", verdict(outcomes, slo.quantile));
    out
}

/// Whether every policy runs at the template's default targets and task range.
fn at_defaults(scenario: &Scenario) -> bool {
    let load = backlog_publisher::load::LoadSettings::DEFAULT.target_percent;
    scenario.publisher.load.target_percent == load
        && scenario.scaling.target.get() == crate::defaults::TARGET
        && scenario.scaling.min_tasks == crate::defaults::MIN_TASKS
        && scenario.scaling.max_tasks == crate::defaults::MAX_TASKS
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

/// What `recommend` says for one trace: the setting, how it did over the
/// seeds, the line to paste into a deploy, or what limit bound.
pub fn recommendation(
    scenario: &Scenario,
    found: &crate::recommend::Recommendation,
    alternatives: &[(Policy, crate::recommend::Recommendation)],
    verbose: bool,
) -> String {
    use crate::recommend::{Candidate, binding_limit};
    let (slo, r) = (scenario.slo, found.robustness);
    let targets = Policy::TEMPLATE.targets();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "### {}: {} settings ({} TargetLoadPercent values from {} to {} × MinTasks 0–{}, \
         MaxTasks {}; --verbose lists them), each on {} seed(s); SLO {:.0} % ≤ {} s, met only \
         with p{:.0} ≤ {:.0} s on every seed\n",
        scenario.trace.name,
        found.tried,
        targets.len(),
        targets[0],
        targets[targets.len() - 1],
        scenario.scaling.max_tasks.min(2),
        scenario.scaling.max_tasks,
        r.seeds,
        slo.quantile * 100.0,
        slo.latency_seconds,
        slo.quantile * 100.0,
        r.margin * slo.latency_seconds as f64,
    );
    let describe = |c: &Candidate| {
        format!(
            "TargetLoadPercent={} MinTasks={}: {:.1} task-min, {:.1} actions and {:.1} reversals \
             a day (means of {} seeds), worst p{:.0} {}, met on {} of {} seeds",
            c.target.get(),
            c.min_tasks,
            c.task_minutes,
            c.actions_per_day,
            c.reversals_per_day,
            r.seeds,
            slo.quantile * 100.0,
            c.worst_wait.map_or("-".to_owned(), |w| format!("{w} s")),
            c.seeds_met,
            r.seeds,
        )
    };
    if verbose {
        for candidate in &found.candidates {
            let _ = writeln!(out, "  tried {}", describe(candidate));
        }
        out.push('\n');
    }
    match (&found.best, &found.closest) {
        (Some(best), _) => {
            let _ = writeln!(out, "recommended: {}", describe(best));
            let largest = targets[targets.len() - 1];
            if best.target.get() >= largest {
                // The search cannot say what lies past its grid.
                let _ = writeln!(
                    out,
                    "note: {largest} % is the largest TargetLoadPercent searched; a larger one may \
                     cost less still, with longer waits (check it with compare --target-load)"
                );
            }
            out.push('\n');
            out.push_str(&one_run(scenario, best, slo.quantile));
            let line = deploy_line(scenario, best);
            let problems = crate::deployable::ecs(scenario);
            let first = crate::deployable::ECS_FIRST_DEPLOY;
            let _ = write!(out, "\n{}", crate::deployable::block(line, &problems, first));
        }
        (None, Some(closest)) => {
            let _ = writeln!(out, "no setting meets the SLO; closest: {}", describe(closest));
            let _ = writeln!(out, "{}\n", binding_limit(scenario, closest, r));
            out.push_str(&one_run(scenario, closest, slo.quantile));
        }
        (None, None) => out.push_str("nothing was simulated\n"),
    }
    out.push_str(&alternatives_verdict(scenario, found.best.as_ref(), alternatives));
    out
}

/// Whether a signal the template deploys besides the load costs less on
/// this trace at its own best setting, and how to deploy it if so.
fn alternatives_verdict(
    scenario: &Scenario,
    ours: Option<&crate::recommend::Candidate>,
    alternatives: &[(Policy, crate::recommend::Recommendation)],
) -> String {
    let mut out = String::new();
    let found: Vec<_> =
        alternatives.iter().filter_map(|(p, r)| Some((*p, r.best.as_ref()?))).collect();
    let cheaper = cheaper_alternative(ours, alternatives);
    let ratio = |c: &crate::recommend::Candidate| {
        ours.map_or(String::new(), |o| {
            format!(" ({:.2} × the load's)", c.task_minutes / o.task_minutes)
        })
    };
    match cheaper {
        Some((policy, c)) => {
            let policy = &policy;
            let problems = crate::deployable::ecs(scenario);
            let deploy = if problems.is_empty() {
                format!(
                    "To deploy it instead:\n  {}",
                    alternative_deploy_line(scenario, *policy, c)
                )
            } else {
                format!(
                    "No deploy line: the template cannot deploy it as simulated: {}",
                    problems.join(", ")
                )
            };
            let _ = writeln!(
                out,
                "\ncheaper on this trace: {} at its best, target {} and MinTasks {}: {:.1} \
                 task-min{}, {:.1} reversals a day (means of {} seeds, within {} an hour). {deploy}",
                policy.label(),
                c.target.get(),
                c.min_tasks,
                c.task_minutes,
                ratio(c),
                c.reversals_per_day,
                c.seeds_met,
                crate::recommend::MAX_REVERSALS_PER_HOUR,
            );
        }
        None if !found.is_empty() => {
            let each: Vec<String> = found
                .iter()
                .map(|(p, c)| format!("{} {:.1} task-min{}", p.label(), c.task_minutes, ratio(c)))
                .collect();
            let _ = writeln!(
                out,
                "\nthe template's other signals cost more here, each at its best: {}",
                each.join("; ")
            );
        }
        None => {}
    }
    out
}

/// The cheapest of `alternatives` at its best, when it costs less than
/// `ours` (or ours meets the SLO at no setting).
pub fn cheaper_alternative<'a>(
    ours: Option<&crate::recommend::Candidate>,
    alternatives: &'a [(Policy, crate::recommend::Recommendation)],
) -> Option<(Policy, &'a crate::recommend::Candidate)> {
    alternatives
        .iter()
        .filter_map(|(p, r)| Some((*p, r.best.as_ref()?)))
        .filter(|(_, c)| ours.is_none_or(|o| c.task_minutes < o.task_minutes))
        .min_by(|a, b| a.1.task_minutes.total_cmp(&b.1.task_minutes))
}

/// The `sam deploy` line for `ScalingSignal=backlog-per-task` or
/// `metric-math` at `c`, with the run's other settings.
pub fn alternative_deploy_line(
    scenario: &Scenario,
    policy: Policy,
    c: &crate::recommend::Candidate,
) -> String {
    let signal = match policy {
        Policy::MetricMath => "metric-math",
        _ => "backlog-per-task",
    };
    let load_line = deploy_line(scenario, c);
    let rest = load_line
        .split(' ')
        .filter(|word| {
            !["ScalingSignal=", "TargetLoadPercent=", "LoadDrainSeconds=", "LoadHoldSeconds="]
                .iter()
                .any(|p| word.starts_with(p))
        })
        .collect::<Vec<_>>()
        .join(" ")
        .replacen(
            "ConsumerType=ecs",
            &format!(
                "ConsumerType=ecs ScalingSignal={signal} TargetBacklogPerTask={}",
                c.target.get()
            ),
            1,
        );
    rest
}

/// A searched setting's run on the scenario's seed, as a table named for
/// what it is: the line above it gives the means over the seeds.
fn one_run(scenario: &Scenario, c: &crate::recommend::Candidate, quantile: f64) -> String {
    let label = format!("load {} %, MinTasks {}", c.target.get(), c.min_tasks);
    let mut out = format!("its run on seed {} (the picture's):\n", scenario.seed);
    out.push_str(&header("setting"));
    out.push_str(&row(&label, &c.outcome, quantile));
    out
}

/// The `sam deploy` line for `best`: every template parameter the run was
/// simulated with, so a deploy (whose `--parameter-overrides` replace, not
/// merge with, a samconfig.toml's) is what was simulated.
pub fn deploy_line(scenario: &Scenario, best: &crate::recommend::Candidate) -> String {
    let schedule = crate::deployable::schedule_rate(scenario);
    format!(
        "sam deploy --parameter-overrides ConsumerType=ecs ScalingSignal=load \
         TargetLoadPercent={} AvgProcessingSeconds={} LoadDrainSeconds={} LoadHoldSeconds={} \
         MinTasks={} MaxTasks={} ConsumerConcurrency={} WorkerVisibilityTimeout={} \
         MaxReceiveCount={} DrainSeconds={} TaskCount={} BacklogIncludes={} {schedule} \
         SamplesPerInvocation=1",
        best.target.get(),
        scenario.publisher.load.processing_seconds,
        scenario.publisher.load.drain_seconds,
        scenario.publisher.load.hold_seconds,
        best.min_tasks,
        scenario.scaling.max_tasks,
        scenario.workers.slots,
        scenario.queue.visibility_timeout,
        scenario.queue.max_receive_count,
        scenario.workers.drain_seconds.unwrap_or(0),
        match scenario.publisher.backlog.task_count {
            TaskCountMode::Running => "running",
            TaskCountMode::RunningPlusPending => "running+pending",
            TaskCountMode::Desired => "desired",
        },
        {
            let includes = scenario.publisher.backlog.includes;
            let mut listed = vec!["visible"];
            listed.extend(includes.in_flight.then_some("inflight"));
            listed.extend(includes.delayed.then_some("delayed"));
            listed.join(",")
        },
    )
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
