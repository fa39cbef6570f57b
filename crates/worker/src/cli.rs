//! The command line: the worker (the forwarder on `backpressure_app::run_worker`),
//! `healthcheck [PID]`, `--help`, `--version`.

use std::process::ExitCode;

use backpressure_app::delivery::{BodyFormat, HttpDelivery, RawDelivery};
use backpressure_app::{Env, healthcheck, run_worker};

use crate::help;

const NAME: &str = "sqs-worker";

/// What the command line asks for: the worker (no arguments), `healthcheck
/// [PID]`, `--help` or `--version`; anything else is a usage error (exit 2).
pub async fn command(args: &[String]) -> ExitCode {
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        [] => run().await,
        ["healthcheck"] => healthcheck(None),
        ["healthcheck", pid] => healthcheck(Some(pid)),
        ["--help" | "-h" | "help"] => {
            print!("{}", help::text());
            ExitCode::SUCCESS
        }
        ["--version" | "-V"] => {
            println!("{NAME} {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!(
                "error: unexpected arguments {args:?}: sqs-worker takes none (it is configured by \
                 its environment), or `healthcheck [PID]`, `--help`, `--version`"
            );
            ExitCode::from(backpressure_startup::exit::USAGE)
        }
    }
}

/// Runs the worker until a signal has drained it; exit code 0 after a drain.
pub async fn run() -> ExitCode {
    let version = env!("CARGO_PKG_VERSION");
    // A BODY_FORMAT that is neither is named, with every other bad variable, by HttpDelivery.
    match BodyFormat::from_vars(&Env::from_process_env()) {
        Ok(BodyFormat::Raw) => run_worker(NAME, version, RawDelivery::from_vars).await,
        _ => run_worker(NAME, version, HttpDelivery::from_vars).await,
    }
}
