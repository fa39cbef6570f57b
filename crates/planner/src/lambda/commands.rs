//! `compare --consumer lambda` and `recommend --consumer lambda`: a table (or
//! a JSON line) and a picture per trace.

use std::io::Write;
use std::path::Path;

use super::{report, run, search};
use crate::plot::{self, Frame};
use crate::recommend::Robustness;
use crate::sim::Scenario;

type Result = std::result::Result<(), Box<dyn std::error::Error>>;

fn frame(scenario: &Scenario) -> Frame {
    Frame { start: scenario.trace.start, slo_seconds: scenario.slo.latency_seconds }
}

fn picture(w: &mut impl Write, path: &Path) -> std::io::Result<()> {
    writeln!(w, "picture: {} (and {})\n", path.display(), path.with_extension("png").display())
}

/// The Lambda consumer at the given setting, per trace.
pub fn compare(scenarios: &[Scenario], out: &Path, json: bool, w: &mut impl Write) -> Result {
    for scenario in scenarios {
        let outcome = run::run(scenario);
        let path = out.join(format!("{}-lambda.svg", scenario.trace.name));
        let title =
            format!("{}: {}", scenario.trace.name, search::describe(report::setting_of(scenario)));
        plot::write(&path, &title, std::slice::from_ref(&outcome.outcome), frame(scenario))?;
        if json {
            let row =
                report::json_row(report::setting_of(scenario), &outcome, scenario.slo.quantile);
            writeln!(w, "{}", crate::report::json_trace(scenario, vec![row]))?;
            continue;
        }
        writeln!(w, "{}", report::comparison(scenario, &outcome))?;
        picture(w, &path)?;
    }
    Ok(())
}

/// The cheapest setting of the mapping that meets the SLO, per trace.
pub fn recommend(
    scenarios: &[Scenario],
    robustness: Robustness,
    verbose: bool,
    out: &Path,
    json: bool,
    w: &mut impl Write,
) -> Result {
    for scenario in scenarios {
        let found = search::search(scenario, robustness);
        let shown = found.best.as_ref().or(found.closest.as_ref());
        let mode = match scenario.lambda.esm.mode {
            super::esm::Mode::Standard { .. } => "",
            super::esm::Mode::Provisioned { .. } => "-provisioned",
        };
        let path = out.join(format!("{}-lambda{mode}-recommended.svg", scenario.trace.name));
        if let Some(shown) = shown {
            let title = format!("{}: {}", scenario.trace.name, search::describe(shown.setting));
            plot::write(&path, &title, std::slice::from_ref(&shown.run.outcome), frame(scenario))?;
        }
        if json {
            let quantile = scenario.slo.quantile;
            let rows = shown.map(|c| vec![report::json_candidate(c, quantile)]).unwrap_or_default();
            let mut line = crate::report::json_trace(scenario, rows);
            line["settings_tried"] = found.candidates.len().into();
            line["seeds"] = robustness.seeds.into();
            line["met"] = found.best.is_some().into();
            let problems = crate::deployable::lambda(scenario);
            let deploy = found.best.as_ref().filter(|_| problems.is_empty());
            line["deploy"] = deploy.map(|b| report::deploy_line(scenario, b.setting)).into();
            line["not_deployable"] = problems.into();
            if found.best.is_none() && found.closest.is_some() {
                line["binding_limit"] = search::binding_limit(scenario, &found).into();
            }
            let mut notes = shown.map(|s| report::notes(scenario, s.setting)).unwrap_or_default();
            if deploy.is_some() {
                notes.insert(0, crate::deployable::leaves(crate::deployable::LAMBDA_FIRST_DEPLOY));
            }
            line["notes"] = notes.into();
            writeln!(w, "{line}")?;
            continue;
        }
        writeln!(w, "{}", report::recommendation(scenario, &found, verbose))?;
        if shown.is_some() {
            picture(w, &path)?;
        }
    }
    Ok(())
}
