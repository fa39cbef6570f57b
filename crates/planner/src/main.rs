//! `simulate`: wires the command line to the simulation; everything else is
//! in the library.

use std::io::{self, Write};
use std::process::ExitCode;

use capacity_planner::args::{Cli, Command};
use capacity_planner::{Policy, plot, recommend, report, run};
use clap::Parser;

fn main() -> ExitCode {
    match execute(Cli::parse()) {
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

/// The reader went away (`simulate … | head`): nothing more to say.
fn is_broken_pipe(error: &(dyn std::error::Error + 'static)) -> bool {
    error.downcast_ref::<io::Error>().is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
}

fn execute(cli: Cli) -> Result<(), Box<dyn std::error::Error>> {
    let mut w = io::stdout().lock();
    match cli.command {
        Command::Compare { scenario, out, json } => {
            let scenarios = scenario.scenarios()?;
            std::fs::create_dir_all(&out).map_err(|e| format!("--out {}: {e}", out.display()))?;
            for scenario in &scenarios {
                let outcomes: Vec<_> =
                    Policy::ALL.iter().map(|&policy| run(scenario, policy)).collect();
                let path = out.join(format!("{}.svg", scenario.trace.name));
                plot::write(&path, &scenario.trace.name, &outcomes)?;
                if json {
                    let quantile = scenario.slo.quantile;
                    let rows = outcomes
                        .iter()
                        .map(|o| report::json_row(o, &scenario.scaling, quantile))
                        .collect();
                    writeln!(w, "{}", report::json_trace(scenario, rows))?;
                    continue;
                }
                write!(w, "{}", report::comparison(scenario, &outcomes))?;
                writeln!(w, "picture: {}\n", path.display())?;
            }
        }
        Command::Recommend { scenario, json } => {
            for scenario in scenario.scenarios()? {
                let found = recommend::search(&scenario);
                let slo = scenario.slo;
                if json {
                    let shown = found.best.as_ref().or(found.closest.as_ref());
                    let rows = shown
                        .map(|c| {
                            let mut scaling = scenario.scaling;
                            scaling.target = c.target;
                            scaling.min_tasks = c.min_tasks;
                            vec![report::json_row(&c.outcome, &scaling, slo.quantile)]
                        })
                        .unwrap_or_default();
                    let mut line = report::json_trace(&scenario, rows);
                    line["settings_tried"] = found.tried.into();
                    line["met"] = found.best.is_some().into();
                    writeln!(w, "{line}")?;
                    continue;
                }
                writeln!(
                    w,
                    "### {}: {} settings tried (TargetBacklogPerTask × MinTasks ≤ {}), SLO {:.0} % ≤ {} s",
                    scenario.trace.name,
                    found.tried,
                    scenario.scaling.max_tasks,
                    slo.quantile * 100.0,
                    slo.latency_seconds
                )?;
                let (verdict, shown) = match (&found.best, &found.closest) {
                    (Some(best), _) => ("cheapest meeting the SLO", best),
                    (None, Some(closest)) => ("no setting meets the SLO; closest", closest),
                    (None, None) => {
                        writeln!(w, "nothing was simulated\n")?;
                        continue;
                    }
                };
                writeln!(
                    w,
                    "{verdict}: TargetBacklogPerTask={} MinTasks={}\n",
                    shown.target.get(),
                    shown.min_tasks
                )?;
                writeln!(w, "{}{}", report::header(), report::row(&shown.outcome, slo.quantile))?;
            }
        }
    }
    w.flush()?;
    Ok(())
}
