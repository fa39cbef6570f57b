//! `simulate recommend`: the cheapest TargetLoadPercent and MinTasks that
//! meet the SLO on each trace, the line that deploys it and a picture of its
//! run. The Lambda consumer's is [`crate::lambda::commands::recommend`].

use std::io::Write;
use std::path::Path;

use serde_json::Value;

use super::{Result, out_dir};
use crate::args::{ConsumerKind, ScenarioArgs};
use crate::recommend::{self, Recommendation, Robustness};
use crate::{Policy, Scenario, deployable, lambda, plot, report};

/// Each trace's recommendation, its run's picture in `out`.
pub fn recommend(
    scenario: &ScenarioArgs,
    seeds: u32,
    margin: f64,
    verbose: bool,
    out: &Path,
    json: bool,
    w: &mut impl Write,
) -> Result {
    out_dir(out)?;
    let robustness = Robustness { seeds, margin };
    let scenarios = scenario.scenarios()?;
    if scenario.consumer == ConsumerKind::Lambda {
        lambda::commands::recommend(&scenarios, robustness, verbose, out, json, w)?;
    } else {
        for scenario in &scenarios {
            for_trace(scenario, robustness, verbose, out, json, w)?;
        }
    }
    w.flush()?;
    Ok(())
}

/// The search on one trace, and what it found.
fn for_trace(
    scenario: &Scenario,
    robustness: Robustness,
    verbose: bool,
    out: &Path,
    json: bool,
    w: &mut impl Write,
) -> Result {
    let found = recommend::search(scenario, robustness);
    let alternatives = recommend::deployable_alternatives(scenario, robustness);
    let shown = found.best.as_ref().or(found.closest.as_ref());
    let path = out.join(format!("{}-recommended.svg", scenario.trace.name));
    if let Some(shown) = shown {
        // The recommended line's figures are means over the seeds; this is one run.
        let title = format!(
            "{}: TargetLoadPercent={} MinTasks={}, the run on seed {}",
            scenario.trace.name,
            shown.target.get(),
            shown.min_tasks,
            scenario.seed
        );
        let panel = plot::Panel::of(&shown.outcome, Some(shown.target.get()));
        plot::write(&path, &title, &[panel], plot::Frame::of(scenario))?;
    }
    if json {
        writeln!(w, "{}", json_line(scenario, &found, &alternatives, robustness))?;
        return Ok(());
    }
    let text = report::recommend::recommendation(scenario, &found, &alternatives, verbose);
    writeln!(w, "{text}")?;
    if shown.is_some() {
        plot::announce(w, &path)?;
    }
    Ok(())
}

/// One trace's recommendation as a JSON object.
fn json_line(
    scenario: &Scenario,
    found: &Recommendation,
    alternatives: &[(Policy, Recommendation)],
    robustness: Robustness,
) -> Value {
    let shown = found.best.as_ref().or(found.closest.as_ref());
    let rows = shown.map(|c| vec![report::json::json_candidate(scenario, c)]).unwrap_or_default();
    let mut line = report::json::json_trace(scenario, rows);
    line["settings_tried"] = found.tried.into();
    line["seeds"] = robustness.seeds.into();
    line["met"] = found.best.is_some().into();
    let deploy = found.best.as_ref().map(|b| deployable::deploy_line(scenario, b));
    deployable::json_fields(
        &mut line,
        deploy,
        deployable::ecs(scenario),
        deployable::ECS_FIRST_DEPLOY,
        Vec::new(),
    );
    line["cheaper_alternative"] = cheaper_alternative(scenario, found, alternatives);
    if let (None, Some(closest)) = (&found.best, &found.closest) {
        line["binding_limit"] = recommend::binding_limit(scenario, closest, robustness).into();
    }
    line
}

/// The alternative policy cheaper than the recommendation on this trace, if one is.
fn cheaper_alternative(
    scenario: &Scenario,
    found: &Recommendation,
    alternatives: &[(Policy, Recommendation)],
) -> Value {
    let Some((policy, c)) = recommend::cheaper_alternative(found.best.as_ref(), alternatives)
    else {
        return Value::Null;
    };
    // A deploy line only where the template can deploy the run as simulated.
    let deploy = deployable::ecs(scenario)
        .is_empty()
        .then(|| deployable::alternative_deploy_line(scenario, policy, c));
    serde_json::json!({
        "policy": policy.label(),
        "target": c.target.get(),
        "min_tasks": c.min_tasks,
        "task_minutes": (c.task_minutes * 10.0).round() / 10.0,
        "reversals_per_day": (c.reversals_per_day * 10.0).round() / 10.0,
        "deploy": deploy,
    })
}
