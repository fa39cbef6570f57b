//! sqs-worker: the batch library with its HTTP delivery processor, fed by
//! long polls; `sqs-worker healthcheck` for the task definition's health check.

use std::process::ExitCode;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    match std::env::args().nth(1).as_deref() {
        Some("healthcheck") => sqs_worker::health::check(),
        Some(other) => {
            eprintln!("unknown argument {other:?}: run with none, or `healthcheck`");
            ExitCode::from(2)
        }
        None => sqs_worker::start::run().await,
    }
}
