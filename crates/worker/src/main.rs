//! sqs-worker: the batch library with its HTTP delivery processor, fed by
//! long polls; `sqs-worker healthcheck` for the task definition's health check.

use std::process::ExitCode;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        [] => sqs_worker::start::run().await,
        ["healthcheck"] => sqs_worker::health::check(None),
        ["healthcheck", pid] => sqs_worker::health::check(Some(pid)),
        ["--help" | "-h" | "help"] => {
            print!("{}", sqs_worker::help::text());
            ExitCode::SUCCESS
        }
        ["--version" | "-V"] => {
            println!("sqs-worker {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!(
                "error: unexpected arguments {args:?}: sqs-worker takes none (it is configured by \
                 its environment), or `healthcheck [PID]`, `--help`, `--version`"
            );
            ExitCode::from(2)
        }
    }
}
