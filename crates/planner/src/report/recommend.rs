//! What `recommend` prints for the ECS worker: the load's setting, its run,
//! the line to deploy it, and the template's other signals beside it.

use std::fmt::Write;

use crate::deployable::{alternative_deploy_line, deploy_line};
use crate::recommend::{Candidate, Recommendation, cheaper_alternative, same_cost};
use crate::report::{header, row};
use crate::sim::Scenario;
use crate::sim::policy::Policy;

/// What `recommend` says for one trace: the setting, how it did over the
/// seeds, the line to paste into a deploy, or what limit bound.
pub fn recommendation(
    scenario: &Scenario,
    found: &Recommendation,
    alternatives: &[(Policy, Recommendation)],
    verbose: bool,
) -> String {
    use crate::recommend::binding_limit;
    let (slo, r) = (scenario.slo, found.robustness);
    let targets = Policy::TEMPLATE.targets();
    let mut out = search_header(scenario, found);
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
            if let Some(flapping) = &found.cheapest_flapping {
                out.push_str(&past_reversal_limit("the load", "TargetLoadPercent", flapping));
            }
            if let Some(tie) = crate::recommend::all_targets_tie(found, "TargetLoadPercent") {
                let _ = writeln!(out, "note: {tie}");
            }
            out.push('\n');
            out.push_str(&one_run(scenario, best, slo.quantile));
            out.push_str(&deploy_lines(scenario, best));
        }
        (None, Some(closest)) => {
            let _ = writeln!(out, "no setting meets the SLO; closest: {}", describe(closest));
            let _ = writeln!(out, "{}\n", binding_limit(scenario, closest, r));
            out.push_str(&one_run(scenario, closest, slo.quantile));
            if closest.outcome.meets_slo(slo.quantile) {
                let _ = writeln!(
                    out,
                    "(this one run meets the SLO; a setting counts only when it does within \
                     {:.0} % of it on every seed)",
                    r.margin * 100.0
                );
            }
        }
        (None, None) => out.push_str("nothing was simulated\n"),
    }
    out.push_str(&alternatives_verdict(scenario, found.best.as_ref(), alternatives));
    out
}

/// The search's heading: the trace, the grid searched, the seeds and the SLO.
fn search_header(scenario: &Scenario, found: &Recommendation) -> String {
    let (slo, r) = (scenario.slo, found.robustness);
    let targets = Policy::TEMPLATE.targets();
    format!(
        "### {}: {} settings ({} TargetLoadPercent values from {} to {} × MinTasks 0–{}, \
         MaxTasks {}; --verbose lists them), each on {} seed(s); SLO {:.0} % ≤ {} s, met only \
         with p{:.0} ≤ {:.0} s on every seed\n\n",
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
    )
}

/// The line for each shape of deployment, each with only what that shape
/// applies, or why the template cannot deploy the run.
fn deploy_lines(scenario: &Scenario, best: &Candidate) -> String {
    use crate::deployable::{
        ECS_FIRST_DEPLOY, EXISTING_HINT, ecs, leaves, own_service_deploy_line, own_service_leaves,
    };
    let problems = ecs(scenario);
    if !problems.is_empty() {
        return format!(
            "\nno deploy line: the template cannot deploy this run as simulated: {}\n",
            problems.join(", ")
        );
    }
    format!(
        "\nfor a worker service the stack creates (WorkerImage):\n  {}\n  note: {}\nfor a \
         service of your own that the stack scales (ScalingTarget=create):\n  {}\n  note: {}\n\
         {EXISTING_HINT}\n",
        deploy_line(scenario, best),
        leaves(ECS_FIRST_DEPLOY),
        own_service_deploy_line(scenario, best),
        own_service_leaves(scenario),
    )
}

/// Whether a signal the template deploys besides the load costs less on
/// this trace at its own best setting, and how to deploy it if so.
fn alternatives_verdict(
    scenario: &Scenario,
    ours: Option<&Candidate>,
    alternatives: &[(Policy, Recommendation)],
) -> String {
    let mut out = String::new();
    let found: Vec<_> =
        alternatives.iter().filter_map(|(p, r)| Some((*p, r.best.as_ref()?))).collect();
    let cheaper = cheaper_alternative(ours, alternatives);
    let ratio = |c: &Candidate| {
        ours.map_or(String::new(), |o| format!(" ({})", relation(c.task_minutes, o.task_minutes)))
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
            for (other, c) in found.iter().filter(|(other, _)| other != policy) {
                let _ = writeln!(
                    out,
                    "{} at its best: target {} and MinTasks {}, {:.1} task-min{}",
                    other.label(),
                    c.target.get(),
                    c.min_tasks,
                    c.task_minutes,
                    ratio(c),
                );
            }
        }
        None if !found.is_empty() => out.push_str(&none_cheaper(ours, &found)),
        None => {}
    }
    out.push_str(&alternatives_unmet(ours.is_none(), alternatives));
    for (policy, found) in alternatives {
        if let Some(flapping) = &found.cheapest_flapping {
            out.push_str(&past_reversal_limit(policy.label(), "target", flapping));
        }
    }
    out
}

/// The template's other signals that meet the SLO at no setting: said, so
/// that no verdict is silent.
fn alternatives_unmet(ours_unmet: bool, alternatives: &[(Policy, Recommendation)]) -> String {
    let unmet: Vec<&str> =
        alternatives.iter().filter(|(_, r)| r.best.is_none()).map(|(p, _)| p.label()).collect();
    if unmet.is_empty() {
        return String::new();
    }
    let either = if ours_unmet { " either" } else { "" };
    let (them, verb) = if unmet.len() == 1 { ("signal", "meets") } else { ("signals", "meet") };
    format!(
        "\nthe template's other {them} ({}) {verb} the SLO at no setting here{either}, within \
         {} reversals an hour\n",
        unmet.join(", "),
        crate::recommend::MAX_REVERSALS_PER_HOUR,
    )
}

/// A setting cheaper than a policy's best that the reversal limit ruled
/// out: why a single run elsewhere (`compare`) can show that policy cheaper.
pub(crate) fn past_reversal_limit(policy: &str, knob: &str, c: &Candidate) -> String {
    format!(
        "note: {policy} costs less at {knob} {} and MinTasks {}, {:.1} task-min, and meets the \
         SLO, but reverses its scaling {:.1} times a day (means of the seeds), past the limit of \
         {} an hour, so it is not counted\n",
        c.target.get(),
        c.min_tasks,
        c.task_minutes,
        c.reversals_per_day,
        crate::recommend::MAX_REVERSALS_PER_HOUR,
    )
}

/// The template's other signals when none costs less than the load: each
/// said to cost the same or more, exactly as its figure compares with the
/// load's at the precision printed (a tie is not "more").
fn none_cheaper(ours: Option<&Candidate>, found: &[(Policy, &Candidate)]) -> String {
    let same = |c: &Candidate| ours.is_some_and(|o| same_cost(c.task_minutes, o.task_minutes));
    let each: Vec<String> = found
        .iter()
        .map(|(p, c)| {
            let relation = ours.map_or(String::new(), |o| {
                format!(" ({})", relation(c.task_minutes, o.task_minutes))
            });
            format!("{} {:.1} task-min{relation}", p.label(), c.task_minutes)
        })
        .collect();
    let ties = found.iter().filter(|(_, c)| same(c)).count();
    let verdict = match ties {
        0 => "more",
        n if n == found.len() => "the same",
        _ => "the same or more",
    };
    let (signals, cost, each_at) = if found.len() == 1 {
        ("signal", "costs", "at its best")
    } else {
        ("signals", "cost", "each at its best")
    };
    format!(
        "\nthe template's other {signals} {cost} {verdict} here, {each_at}: {}\n",
        each.join("; ")
    )
}

/// How an alternative's mean task-minutes compare with the load's, in words
/// that match the figures printed: a tie at 0.1 task-min is "the same", and
/// a difference whose ratio rounds to 1.00 is given in task-minutes.
fn relation(theirs: f64, load: f64) -> String {
    if same_cost(theirs, load) {
        return "the same as the load's".to_owned();
    }
    let ratio = format!("{:.2}", theirs / load);
    if ratio != "1.00" {
        return format!("{ratio} × the load's");
    }
    // The difference of the figures as printed, so the words add up on the page.
    let shown = |x: f64| format!("{x:.1}").parse::<f64>().unwrap_or(x);
    let by = (shown(theirs) - shown(load)).abs();
    let side = if theirs > load { "more" } else { "less" };
    format!("{by:.1} task-min {side} than the load's")
}

/// A searched setting's run on the scenario's seed, as a table named for
/// what it is: the line above it gives the means over the seeds.
fn one_run(scenario: &Scenario, c: &Candidate, quantile: f64) -> String {
    let label = format!("load {} %, MinTasks {}", c.target.get(), c.min_tasks);
    let mut out = format!("its run on seed {} (the picture's):\n", scenario.seed);
    out.push_str(&header("setting"));
    out.push_str(&row(&label, &c.outcome, quantile));
    out
}

#[cfg(test)]
mod tests {
    use backlog_publisher::BacklogTarget;

    use super::*;
    use crate::recommend::Robustness;
    use crate::sim::policy::Consumer;
    use crate::stats::Outcome;
    use crate::trace::BuiltIn;

    fn candidate(policy: Policy, task_minutes: f64) -> Candidate {
        let outcome = Outcome::nothing(Consumer::Ecs(policy), Vec::new());
        Candidate {
            target: BacklogTarget::new(100.0).unwrap(),
            min_tasks: 2,
            outcome,
            task_minutes,
            late: 0.0,
            worst_wait: Some(120),
            seeds_met: 5,
            seeds_at_max: 0,
            actions_per_day: 0.0,
            reversals_per_day: 0.0,
        }
    }

    fn found(best: Candidate) -> Recommendation {
        Recommendation {
            tried: 1,
            robustness: Robustness::default(),
            best: Some(best),
            cheapest_flapping: None,
            closest: None,
            candidates: Vec::new(),
        }
    }

    /// The verdict on the template's other signals when the load costs `load`
    /// task-min and backlog per task and metric math the others.
    fn verdict(load: f64, backlog: f64, metric_math: f64) -> String {
        let scenario = Scenario::new(BuiltIn::Steady.trace(1), BacklogTarget::new(100.0).unwrap());
        let ours = candidate(Policy::Load, load);
        let alternatives = [
            (Policy::Ours, found(candidate(Policy::Ours, backlog))),
            (Policy::MetricMath, found(candidate(Policy::MetricMath, metric_math))),
        ];
        alternatives_verdict(&scenario, Some(&ours), &alternatives)
    }

    #[test]
    fn a_signal_that_costs_what_the_load_costs_is_said_to_cost_the_same_not_more() {
        let said = [
            ("both equal", verdict(2940.0, 2940.0, 2940.0)),
            ("one equal, one more", verdict(2940.0, 2940.0, 3100.0)),
            ("equal as printed", verdict(2940.0, 2940.04, 3100.0)),
            ("both more", verdict(2940.0, 3000.0, 3100.0)),
            ("more, by a ratio that rounds to 1.00", verdict(2940.0, 2941.0, 3100.0)),
            ("cheaper, by a ratio that rounds to 1.00", verdict(2940.0, 2939.0, 3100.0)),
        ];
        let text: Vec<String> =
            said.iter().map(|(case, text)| format!("{case}:{}", text.trim_end())).collect();
        for (case, text) in &said {
            let tie = case.contains("equal");
            assert_eq!(text.contains("the same as the load's"), tie, "{case}: {text}");
            assert!(!(tie && text.contains("cost more")), "{case}: a tie is not more: {text}");
        }
        insta::assert_snapshot!("alternatives_that_cost_the_same", text.join("\n\n"));
    }
}
