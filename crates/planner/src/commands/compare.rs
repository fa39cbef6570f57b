//! `simulate compare`: every scaling policy on each trace, at the settings
//! given or each at its own best, as a table (or a JSON line) and two
//! pictures per trace: all policies at a glance, and each in detail. The
//! Lambda consumer's is [`crate::lambda::commands::compare`].

use std::io::Write;
use std::path::Path;

use super::{Result, out_dir};
use crate::args::{ConsumerKind, ScenarioArgs};
use crate::recommend::{self, Robustness};
use crate::sim::autoscaling::ScalingConfig;
use crate::stats::Outcome;
use crate::{Consumer, Policy, Scenario, lambda, parallel, plot, report, run};

/// Each trace's comparison, its picture in `out`.
pub fn compare(
    scenario: &ScenarioArgs,
    out: &Path,
    best_settings: bool,
    json: bool,
    w: &mut impl Write,
) -> Result {
    let scenarios = scenario.scenarios()?;
    out_dir(out)?;
    if scenario.consumer == ConsumerKind::Lambda {
        lambda::commands::compare(&scenarios, out, json, w)?;
    } else if best_settings {
        at_best_settings(&scenarios, out, json, w)?;
    } else {
        for scenario in &scenarios {
            at_settings_given(scenario, out, json, w)?;
        }
    }
    w.flush()?;
    Ok(())
}

/// Every policy at the target and MinTasks given.
fn at_settings_given(scenario: &Scenario, out: &Path, json: bool, w: &mut impl Write) -> Result {
    // Each policy's run is independent: one per core.
    let outcomes = parallel::map(&Policy::ALL, |&policy| run(scenario, policy));
    let path = out.join(format!("{}.svg", scenario.trace.name));
    let panels: Vec<_> = Policy::ALL
        .iter()
        .zip(&outcomes)
        .map(|(&policy, o)| plot::Panel::of(o, Some(scenario.target_of(policy).get())))
        .collect();
    let title = format!(
        "{}: target {} % for the load, {} for the others, MinTasks {}, seed {}{}",
        scenario.trace.name,
        scenario.publisher.load.target_percent,
        scenario.scaling.target.get(),
        scenario.scaling.min_tasks,
        scenario.seed,
        report::metric_period(scenario)
    );
    let detail = plot::detail_path(&path);
    plot::write_overview(&path, &title, &panels, plot::Frame::of(scenario))?;
    plot::write(&detail, &title, &panels, plot::Frame::of(scenario))?;
    if json {
        let rows = outcomes.iter().map(|o| json_row(scenario, o)).collect();
        writeln!(w, "{}", report::json::json_trace(scenario, rows))?;
        return Ok(());
    }
    write!(w, "{}", report::comparison(scenario, &outcomes))?;
    plot::announce_overview(w, &path, &detail)?;
    Ok(())
}

/// A run's JSON row, with the target its policy ran at.
fn json_row(scenario: &Scenario, outcome: &Outcome) -> serde_json::Value {
    let target = match outcome.consumer {
        Consumer::Ecs(policy) => scenario.target_of(policy),
        Consumer::Lambda => scenario.scaling.target,
    };
    let scaling = ScalingConfig { target, ..scenario.scaling };
    report::json::json_row(outcome, &scaling, scenario.slo.quantile)
}

/// Each policy at its own best setting, per trace: the fair comparison.
fn at_best_settings(scenarios: &[Scenario], out: &Path, json: bool, w: &mut impl Write) -> Result {
    let robustness = Robustness::default();
    for scenario in scenarios {
        let found: Vec<_> = Policy::ALL
            .iter()
            .map(|&policy| (policy, recommend::search_policy(scenario, policy, robustness)))
            .collect();
        let chosen: Vec<_> =
            found.iter().filter_map(|(_, f)| f.best.as_ref().or(f.closest.as_ref())).collect();
        let panels: Vec<_> = found
            .iter()
            .filter_map(|(policy, f)| Some((policy, f.best.as_ref().or(f.closest.as_ref())?)))
            .map(|(policy, c)| plot::Panel {
                label: policy.at(c.target.get(), c.min_tasks),
                outcome: &c.outcome,
                target: Some(c.target.get()),
                unit: None,
            })
            .collect();
        let path = out.join(format!("{}-best-settings.svg", scenario.trace.name));
        // The table's figures are means over the seeds; the picture is one run.
        let title = format!(
            "{}: each policy at its own best setting, the run on seed {}",
            scenario.trace.name, scenario.seed
        );
        let detail = plot::detail_path(&path);
        plot::write_overview(&path, &title, &panels, plot::Frame::of(scenario))?;
        plot::write(&detail, &title, &panels, plot::Frame::of(scenario))?;
        if json {
            let rows = chosen.iter().map(|c| report::json::json_candidate(scenario, c)).collect();
            let mut line = report::json::json_trace(scenario, rows);
            line["seeds"] = robustness.seeds.into();
            writeln!(w, "{line}")?;
            continue;
        }
        writeln!(w, "{}", report::best_comparison(scenario, &found))?;
        plot::announce_overview(w, &path, &detail)?;
    }
    Ok(())
}
