//! `simulate`: wires the command line to the subcommands; everything else is
//! in the library.

use std::io;
use std::process::ExitCode;

use backpressure_core::error::error_chain;
use capacity_planner::args::{self, Cli, Command};
use capacity_planner::commands;

fn main() -> ExitCode {
    match args::parse().map_err(Into::into).and_then(execute) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) if is_broken_pipe(error.as_ref()) => ExitCode::SUCCESS,
        Err(error) => {
            report(error.as_ref());
            ExitCode::FAILURE
        }
    }
}

fn execute(cli: Cli) -> commands::Result {
    let mut w = io::stdout().lock();
    match cli.command {
        Command::Compare { scenario, out, best_settings, json } => {
            commands::compare(&scenario, &out, best_settings, json, &mut w)
        }
        Command::Recommend { scenario, seeds, margin, verbose, out, json, existing } => {
            let settings = commands::RecommendSettings { seeds, margin, verbose, json, existing };
            commands::recommend(&scenario, &settings, &out, &mut w)
        }
        Command::CrossValidate { scenario, seeds } => {
            commands::cross_validate(&scenario, seeds, &mut w)
        }
        Command::Fidelity { json } => commands::fidelity(json, &mut w),
    }
}

/// The error and its causes on one line of stderr, each said once.
fn report(error: &(dyn std::error::Error + 'static)) {
    eprintln!("simulate: {}", error_chain(error));
}

/// The reader went away (`simulate … | head`): nothing more to say.
fn is_broken_pipe(error: &(dyn std::error::Error + 'static)) -> bool {
    error.downcast_ref::<io::Error>().is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
}
