//! `simulate recommend`: the cheapest TargetLoadPercent and MinTasks that
//! meet the SLO on each trace, the line that deploys it and a picture of its
//! run. The Lambda consumer's is [`crate::lambda::commands::recommend`].

use std::io::Write;
use std::path::Path;

use serde_json::Value;

use super::{Result, out_dir};
use crate::args::{ConsumerKind, ExistingArgs, ScenarioArgs};
use crate::recommend::{self, Candidate, Recommendation, Robustness};
use crate::{Policy, Scenario, deployable, lambda, plot, report};

/// What `recommend` is asked, besides the scenario.
#[derive(Debug)]
pub struct RecommendSettings {
    /// Seeds each setting runs on.
    pub seeds: u32,
    /// The SLO quantile's wait must stay within this fraction of the SLO.
    pub margin: f64,
    /// Print every setting tried.
    pub verbose: bool,
    /// JSON instead of text.
    pub json: bool,
    /// Who scales the service.
    pub existing: ExistingArgs,
}

/// Each trace's recommendation, its run's picture in `out`.
pub fn recommend(
    scenario: &ScenarioArgs,
    settings: &RecommendSettings,
    out: &Path,
    w: &mut impl Write,
) -> Result {
    out_dir(out)?;
    let RecommendSettings { seeds, margin, verbose, json, .. } = *settings;
    let robustness = Robustness { seeds, margin };
    let scenarios = scenario.scenarios()?;
    let cpu = settings.existing.cpu(scenario.slots);
    match (scenario.consumer, cpu) {
        (ConsumerKind::Lambda, _) => {
            lambda::commands::recommend(&scenarios, robustness, verbose, out, json, w)?;
        }
        (ConsumerKind::Ecs, Some(cpu)) => {
            for scenario in &scenarios {
                super::existing::for_trace(scenario, cpu, robustness, out, json, w)?;
            }
        }
        (ConsumerKind::Ecs, None) => {
            for scenario in &scenarios {
                for_trace(scenario, robustness, verbose, out, json, w)?;
            }
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
    let found = Found::search(scenario, robustness);
    let shown = found.ours.best.as_ref().or(found.ours.closest.as_ref());
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
        writeln!(w, "{}", found.json(scenario))?;
        return Ok(());
    }
    writeln!(w, "{}", found.text(scenario, verbose))?;
    if shown.is_some() {
        plot::announce(w, &path)?;
    }
    Ok(())
}

/// One trace's search, for the load and the template's other signals: what
/// the text and the JSON both say, from the same runs.
#[derive(Debug)]
pub struct Found {
    ours: Recommendation,
    alternatives: Vec<(Policy, Recommendation)>,
}

impl Found {
    /// Searches `scenario` for the load and its alternatives.
    pub fn search(scenario: &Scenario, robustness: Robustness) -> Self {
        Self {
            ours: recommend::search(scenario, robustness),
            alternatives: recommend::deployable_alternatives(scenario, robustness),
        }
    }

    /// What `recommend` prints for it.
    pub fn text(&self, scenario: &Scenario, verbose: bool) -> String {
        report::recommend::recommendation(scenario, &self.ours, &self.alternatives, verbose)
    }

    /// What `recommend --json` prints for it.
    pub fn json(&self, scenario: &Scenario) -> Value {
        json_line(scenario, &self.ours, &self.alternatives, self.ours.robustness)
    }
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
        recommend::all_targets_tie(found, "TargetLoadPercent").into_iter().collect(),
    );
    let own = found.best.as_ref().filter(|_| deployable::ecs(scenario).is_empty());
    line["deploy_own_service"] =
        own.map(|best| deployable::own_service_deploy_line(scenario, best)).into();
    if own.is_some()
        && let Some(notes) = line["notes"].as_array_mut()
    {
        notes.push(deployable::own_service_leaves(scenario).into());
        notes.push(deployable::EXISTING_HINT.into());
    }
    line["cheaper_alternative"] = cheaper_alternative(scenario, found, alternatives);
    line["past_reversal_limit"] = found.cheapest_flapping.as_ref().map(setting).into();
    line["alternatives"] = alternatives
        .iter()
        .map(|(policy, found)| {
            serde_json::json!({
                "policy": policy.label(),
                "met": found.best.is_some(),
                "best": found.best.as_ref().map(setting),
                "past_reversal_limit": found.cheapest_flapping.as_ref().map(setting),
            })
        })
        .collect::<Vec<_>>()
        .into();
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
    let mut json = setting(c);
    json["policy"] = policy.label().into();
    json["deploy"] = deploy.into();
    json
}

/// A searched setting's figures over the seeds, as the text prints them.
fn setting(c: &Candidate) -> Value {
    serde_json::json!({
        "target": c.target.get(),
        "min_tasks": c.min_tasks,
        "task_minutes": crate::report::json::tenth(c.task_minutes),
        "reversals_per_day": crate::report::json::tenth(c.reversals_per_day),
    })
}
