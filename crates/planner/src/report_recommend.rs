//! What `recommend` prints for the ECS worker: the load's setting, its run,
//! the line to deploy it, and the template's other signals beside it.

use std::fmt::Write;

use crate::deployable::{alternative_deploy_line, deploy_line};
use crate::policy::Policy;
use crate::recommend::cheaper_alternative;
use crate::report::{header, row};
use crate::sim::Scenario;

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

/// A searched setting's run on the scenario's seed, as a table named for
/// what it is: the line above it gives the means over the seeds.
fn one_run(scenario: &Scenario, c: &crate::recommend::Candidate, quantile: f64) -> String {
    let label = format!("load {} %, MinTasks {}", c.target.get(), c.min_tasks);
    let mut out = format!("its run on seed {} (the picture's):\n", scenario.seed);
    out.push_str(&header("setting"));
    out.push_str(&row(&label, &c.outcome, quantile));
    out
}
