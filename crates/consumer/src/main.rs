//! batch-consumer: the batch library with its HTTP delivery processor.

use std::process::ExitCode;

use backpressure_batch::delivery::HttpDelivery;
use backpressure_batch::lambda::tokio_runtime;
use backpressure_batch::serve;

fn main() -> ExitCode {
    #[allow(clippy::expect_used)]
    let runtime = tokio_runtime().expect("cannot start the Tokio runtime");
    runtime.block_on(serve("batch-consumer", env!("CARGO_PKG_VERSION"), HttpDelivery::from_vars))
}
