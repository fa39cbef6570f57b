//! sqs-worker: the batch library with its HTTP delivery processor, fed by
//! long polls; `sqs-worker healthcheck` for the task definition's health check.

use std::process::ExitCode;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    sqs_worker::cli::command(&args).await
}
