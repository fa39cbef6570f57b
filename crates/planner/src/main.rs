//! `simulate`: wires the command line to the simulation; everything else is
//! in the library.

use std::process::ExitCode;

use capacity_planner::args::{Cli, Command};
use capacity_planner::{Policy, plot, recommend, report, run};
use clap::Parser;

fn main() -> ExitCode {
    match execute(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("simulate: {error}");
            let mut source = error.source();
            while let Some(cause) = source {
                eprintln!("  caused by: {cause}");
                source = cause.source();
            }
            ExitCode::FAILURE
        }
    }
}

fn execute(cli: Cli) -> Result<(), Box<dyn std::error::Error>> {
    match cli.command {
        Command::Compare { scenario, out } => {
            let scenarios = scenario.scenarios()?;
            std::fs::create_dir_all(&out).map_err(|e| format!("--out {}: {e}", out.display()))?;
            for scenario in &scenarios {
                let outcomes: Vec<_> =
                    Policy::ALL.iter().map(|&policy| run(scenario, policy)).collect();
                print!("{}", report::comparison(scenario, &outcomes));
                let path = out.join(format!("{}.svg", scenario.trace.name));
                plot::write(&path, &scenario.trace.name, &outcomes)?;
                println!("picture: {}\n", path.display());
            }
        }
        Command::Recommend { scenario } => {
            for scenario in scenario.scenarios()? {
                let found = recommend::search(&scenario);
                let slo = scenario.slo;
                println!(
                    "### {}: {} settings tried (TargetBacklogPerTask × MinTasks ≤ {}), SLO {:.0} % ≤ {} s",
                    scenario.trace.name,
                    found.tried,
                    scenario.scaling.max_tasks,
                    slo.quantile * 100.0,
                    slo.latency_seconds
                );
                match (&found.best, &found.closest) {
                    (Some(best), _) => {
                        println!(
                            "cheapest meeting the SLO: TargetBacklogPerTask={} MinTasks={}\n",
                            best.target.get(),
                            best.min_tasks
                        );
                        print!("{}{}", report::header(), report::row(&best.outcome, slo.quantile));
                    }
                    (None, Some(closest)) => {
                        println!(
                            "no setting meets the SLO; closest: TargetBacklogPerTask={} MinTasks={}\n",
                            closest.target.get(),
                            closest.min_tasks
                        );
                        print!(
                            "{}{}",
                            report::header(),
                            report::row(&closest.outcome, slo.quantile)
                        );
                    }
                    (None, None) => println!("nothing was simulated"),
                }
                println!();
            }
        }
    }
    Ok(())
}
