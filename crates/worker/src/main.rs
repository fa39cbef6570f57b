//! sqs-worker: the batch library with its HTTP delivery processor, fed by long polls.

use std::process::ExitCode;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    sqs_worker::start::run().await
}
