//! sqs-backpressure: wires the AWS configuration and logging, runs one command.
//! Exit codes: `EXIT_CODES` in terminal/exit_status.rs, which `--help` prints.

use std::process::ExitCode;

use clap::Parser;
use sqs_backpressure::args::Cli;
use sqs_backpressure::{
    Finish, check_before_calls, connect, interrupt, logging, run, run_doctor, run_local,
};

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    logging::init(cli.verbose);
    if let Err(error) = interrupt::listen() {
        eprintln!("error: cannot listen for SIGINT and SIGTERM: {error}");
        return ExitCode::FAILURE;
    }
    let outcome = if let Some(doctor) = cli.command.doctor() {
        run_doctor(doctor, &cli.early).await
    } else {
        match cli.command.queue() {
            None => run_local(cli.command),
            Some(queue) => match check_before_calls(&cli.command) {
                Err(error) => Err(error),
                Ok(()) => {
                    let aws = queue.aws.or_early(&cli.early);
                    match connect(&aws, &queue.queue_url.clone()).await {
                        Ok(clients) => run(cli, &clients).await,
                        Err(error) => Err(error),
                    }
                }
            },
        }
    };
    match outcome {
        Ok(Finish::Failures { count, dry_run: false }) => {
            eprintln!(
                "{count} message(s) could not be handled and are still on the queue (the audit \
                 file says why)"
            );
            ExitCode::FAILURE
        }
        Ok(Finish::Failures { count, dry_run: true }) => {
            eprintln!("{count} message(s) could not be sent (the warnings above say why)");
            ExitCode::FAILURE
        }
        Ok(finish) => ExitCode::from(finish.exit_code()),
        Err(error) if error.is_closed_stdout() => ExitCode::SUCCESS,
        Err(error) if error.is_interrupted() => {
            eprintln!("{error}");
            ExitCode::from(interrupt::EXIT_INTERRUPTED)
        }
        Err(error) if error.is_usage() => {
            eprintln!("error: {error}\n\nFor more information, try '--help'.");
            ExitCode::from(backpressure_startup::exit::USAGE)
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}
