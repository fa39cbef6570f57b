//! `simulate`: wires the command line to the subcommands; everything else is
//! in the library.

use std::io;
use std::process::ExitCode;

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
        Command::Recommend { scenario, seeds, margin, verbose, out, json } => {
            commands::recommend(&scenario, seeds, margin, verbose, &out, json, &mut w)
        }
        Command::CrossValidate { scenario, seeds } => {
            commands::cross_validate(&scenario, seeds, &mut w)
        }
        Command::Fidelity { json } => commands::fidelity(json, &mut w),
    }
}

/// The error on stderr, then each cause it does not already quote.
fn report(error: &(dyn std::error::Error + 'static)) {
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
}

/// The reader went away (`simulate … | head`): nothing more to say.
fn is_broken_pipe(error: &(dyn std::error::Error + 'static)) -> bool {
    error.downcast_ref::<io::Error>().is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
}
