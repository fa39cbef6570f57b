//! batch-consumer: the batch library with its HTTP delivery processor.

use std::process::ExitCode;

use backpressure_batch::delivery::HttpDelivery;
use backpressure_batch::serve;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    serve("batch-consumer", env!("CARGO_PKG_VERSION"), HttpDelivery::from_vars).await
}
