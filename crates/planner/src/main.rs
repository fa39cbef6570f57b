//! `simulate`: wires the command line to the simulation; everything else is
//! in the library.

use std::io::{self, Write};
use std::process::ExitCode;

use capacity_planner::args::{Cli, Command, ConsumerKind};
use capacity_planner::lambda;
use capacity_planner::{Policy, plot, recommend, report, report_json, run};

fn main() -> ExitCode {
    let outcome = capacity_planner::args::parse().map_err(Into::into).and_then(execute);
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) if is_broken_pipe(error.as_ref()) => ExitCode::SUCCESS,
        Err(error) => {
            let mut said = error.to_string();
            eprintln!("simulate: {said}");
            let mut source = error.source();
            while let Some(cause) = source {
                // A cause the message already quotes (`--csv FILE: line 7: …`) is said once.
                let text = cause.to_string();
                if !said.contains(&text) {
                    eprintln!("  caused by: {text}");
                }
                said = text;
                source = cause.source();
            }
            ExitCode::FAILURE
        }
    }
}

/// Each policy at its own best setting, per trace: the fair comparison.
fn compare_at_best_settings(
    scenarios: &[capacity_planner::Scenario],
    out: &std::path::Path,
    json: bool,
    w: &mut impl Write,
) -> Result<(), Box<dyn std::error::Error>> {
    let robustness = recommend::Robustness::default();
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
            })
            .collect();
        let path = out.join(format!("{}-best-settings.svg", scenario.trace.name));
        // The table's figures are means over the seeds; the picture is one run.
        let title = format!(
            "{}: each policy at its own best setting, the run on seed {}",
            scenario.trace.name, scenario.seed
        );
        plot::write(&path, &title, &panels, plot::Frame::of(scenario))?;
        if json {
            let rows = chosen.iter().map(|c| report_json::json_candidate(scenario, c)).collect();
            let mut line = report_json::json_trace(scenario, rows);
            line["seeds"] = robustness.seeds.into();
            writeln!(w, "{line}")?;
            continue;
        }
        writeln!(w, "{}", report::best_comparison(scenario, &found))?;
        plot::announce(w, &path)?;
    }
    w.flush()?;
    Ok(())
}

/// The reader went away (`simulate … | head`): nothing more to say.
fn is_broken_pipe(error: &(dyn std::error::Error + 'static)) -> bool {
    error.downcast_ref::<io::Error>().is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
}

/// A check outside its band and its explanation.
#[derive(Debug, thiserror::Error)]
#[error("{0} of the fidelity checks left their band unexplained (the table above names them)")]
struct FidelityFailed(usize);

fn execute(cli: Cli) -> Result<(), Box<dyn std::error::Error>> {
    let mut w = io::stdout().lock();
    match cli.command {
        Command::CrossValidate { scenario, seeds } => {
            let robustness = recommend::Robustness { seeds, ..recommend::Robustness::default() };
            let scenarios = scenario.scenarios()?;
            let mut results = Vec::new();
            for scenario in &scenarios {
                let started = std::time::Instant::now();
                results.push(capacity_planner::held_out::evaluate(scenario, robustness));
                eprintln!("{}: {:.0} s", scenario.trace.name, started.elapsed().as_secs_f64());
            }
            let rows = capacity_planner::held_out::rows(&results, seeds);
            write!(w, "{}", capacity_planner::held_out_report::table(&results, &rows, seeds))?;
        }
        Command::Fidelity { json } => {
            let checks = capacity_planner::fidelity::checks();
            if json {
                writeln!(w, "{}", capacity_planner::fidelity_report::json(&checks))?;
            } else {
                write!(w, "{}", capacity_planner::fidelity_report::table(&checks))?;
            }
            w.flush()?;
            let failed = checks.iter().filter(|c| !c.holds()).count();
            if failed > 0 {
                return Err(FidelityFailed(failed).into());
            }
        }
        Command::Compare { scenario, out, best_settings, json } => {
            let scenarios = scenario.scenarios()?;
            std::fs::create_dir_all(&out).map_err(|e| format!("--out {}: {e}", out.display()))?;
            if scenario.consumer == ConsumerKind::Lambda {
                lambda::commands::compare(&scenarios, &out, json, &mut w)?;
                w.flush()?;
                return Ok(());
            }
            if best_settings {
                return compare_at_best_settings(&scenarios, &out, json, &mut w);
            }
            for scenario in &scenarios {
                // Each policy's run is independent: one per core.
                let outcomes =
                    capacity_planner::parallel::map(&Policy::ALL, |&policy| run(scenario, policy));
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
                plot::write(&path, &title, &panels, plot::Frame::of(scenario))?;
                if json {
                    let quantile = scenario.slo.quantile;
                    let rows = outcomes
                        .iter()
                        .map(|o| {
                            let target = match o.consumer {
                                capacity_planner::Consumer::Ecs(policy) => {
                                    scenario.target_of(policy)
                                }
                                capacity_planner::Consumer::Lambda => scenario.scaling.target,
                            };
                            let scaling = capacity_planner::autoscaling::ScalingConfig {
                                target,
                                ..scenario.scaling
                            };
                            report_json::json_row(o, &scaling, quantile)
                        })
                        .collect();
                    writeln!(w, "{}", report_json::json_trace(scenario, rows))?;
                    continue;
                }
                write!(w, "{}", report::comparison(scenario, &outcomes))?;
                plot::announce(&mut w, &path)?;
            }
        }
        Command::Recommend { scenario, seeds, margin, verbose, out, json } => {
            std::fs::create_dir_all(&out).map_err(|e| format!("--out {}: {e}", out.display()))?;
            let robustness = recommend::Robustness { seeds, margin };
            if scenario.consumer == ConsumerKind::Lambda {
                let scenarios = scenario.scenarios()?;
                lambda::commands::recommend(&scenarios, robustness, verbose, &out, json, &mut w)?;
                w.flush()?;
                return Ok(());
            }
            for scenario in scenario.scenarios()? {
                let found = recommend::search(&scenario, robustness);
                let alternatives = recommend::deployable_alternatives(&scenario, robustness);
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
                    plot::write(&path, &title, &[panel], plot::Frame::of(&scenario))?;
                }
                if json {
                    let rows = shown
                        .map(|c| vec![report_json::json_candidate(&scenario, c)])
                        .unwrap_or_default();
                    let mut line = report_json::json_trace(&scenario, rows);
                    line["settings_tried"] = found.tried.into();
                    line["seeds"] = seeds.into();
                    line["met"] = found.best.is_some().into();
                    let deploy = found
                        .best
                        .as_ref()
                        .map(|b| capacity_planner::deployable::deploy_line(&scenario, b));
                    capacity_planner::deployable::json_fields(
                        &mut line,
                        deploy,
                        capacity_planner::deployable::ecs(&scenario),
                        capacity_planner::deployable::ECS_FIRST_DEPLOY,
                        Vec::new(),
                    );
                    line["cheaper_alternative"] = recommend::cheaper_alternative(
                        found.best.as_ref(),
                        &alternatives,
                    )
                    .map_or(serde_json::Value::Null, |(policy, c)| {
                        serde_json::json!({
                            "policy": policy.label(),
                            "target": c.target.get(),
                            "min_tasks": c.min_tasks,
                            "task_minutes": (c.task_minutes * 10.0).round() / 10.0,
                            "reversals_per_day": (c.reversals_per_day * 10.0).round() / 10.0,
                            "deploy": capacity_planner::deployable::ecs(&scenario).is_empty().then(
                                || capacity_planner::deployable::alternative_deploy_line(&scenario, policy, c)
                            ),
                        })
                    });
                    if let (None, Some(closest)) = (&found.best, &found.closest) {
                        line["binding_limit"] =
                            recommend::binding_limit(&scenario, closest, robustness).into();
                    }
                    writeln!(w, "{line}")?;
                    continue;
                }
                let text = capacity_planner::report_recommend::recommendation(
                    &scenario,
                    &found,
                    &alternatives,
                    verbose,
                );
                writeln!(w, "{text}")?;
                if shown.is_some() {
                    plot::announce(&mut w, &path)?;
                }
            }
        }
    }
    w.flush()?;
    Ok(())
}
