//! `compare --consumer lambda` and `recommend --consumer lambda`: a table (or
//! a JSON line) and a picture per trace.

use std::io::Write;
use std::path::Path;

use super::{report, run, search};
use crate::plot::{self, Frame, Panel};
use crate::recommend::Robustness;
use crate::sim::Scenario;

type Result = std::result::Result<(), Box<dyn std::error::Error>>;

/// The Lambda consumer at the given setting, per trace.
pub fn compare(scenarios: &[Scenario], out: &Path, json: bool, w: &mut impl Write) -> Result {
    for scenario in scenarios {
        let outcome = run::run(scenario);
        let path = out.join(format!("{}-lambda.svg", scenario.trace.name));
        let setting = report::setting_of(scenario);
        let title = format!(
            "{}: {} — seed {}: {:.0} GB-s",
            scenario.trace.name,
            search::describe(setting),
            scenario.seed,
            outcome.gb_seconds()
        );
        plot::write(&path, &title, &[Panel::of(&outcome.outcome, None)], Frame::of(scenario))?;
        if json {
            let row = report::json_row(setting, &outcome, scenario.slo.quantile);
            let mut line = crate::report::json::json_trace(scenario, vec![row]);
            line["notes"] = report::notes(scenario, setting, false).into();
            writeln!(w, "{line}")?;
            continue;
        }
        writeln!(w, "{}", report::comparison(scenario, &outcome))?;
        plot::announce(w, &path)?;
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
            // The run drawn is one seed's; the recommended line gives the mean over the seeds.
            let title = format!(
                "{}: {} — seed {}: {:.0} GB-s",
                scenario.trace.name,
                search::describe(shown.setting),
                scenario.seed,
                shown.run.gb_seconds()
            );
            let panel = Panel::of(&shown.run.outcome, None);
            plot::write(&path, &title, &[panel], Frame::of(scenario))?;
        }
        if json {
            let quantile = scenario.slo.quantile;
            let rows = shown.map(|c| vec![report::json_candidate(c, quantile)]).unwrap_or_default();
            let mut line = crate::report::json::json_trace(scenario, rows);
            line["settings_tried"] = found.candidates.len().into();
            line["seeds"] = robustness.seeds.into();
            line["met"] = found.best.is_some().into();
            if found.best.is_none() && found.closest.is_some() {
                line["binding_limit"] = search::binding_limit(scenario, &found).into();
            }
            let deploy = found.best.as_ref().map(|b| report::deploy_line(scenario, b.setting));
            let deploying = found.best.is_some();
            let notes =
                shown.map(|s| report::notes(scenario, s.setting, deploying)).unwrap_or_default();
            crate::deployable::json_fields(
                &mut line,
                deploy,
                crate::deployable::lambda(scenario),
                crate::deployable::LAMBDA_FIRST_DEPLOY,
                notes,
            );
            let own = line["deploy"].as_str().map(|created| {
                let leaves = crate::deployable::own_function_leaves(created);
                (crate::deployable::own_function_line(created), leaves)
            });
            if let Some((_, leaves)) = &own
                && let Some(notes) = line["notes"].as_array_mut()
            {
                notes.push(leaves.clone().into());
            }
            line["deploy_own_function"] = own.map(|(own, _)| own).into();
            writeln!(w, "{line}")?;
            continue;
        }
        writeln!(w, "{}", report::recommendation(scenario, &found, verbose))?;
        if shown.is_some() {
            plot::announce(w, &path)?;
        }
    }
    Ok(())
}
