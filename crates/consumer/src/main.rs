//! batch-consumer: the batch library with its HTTP delivery processor, on
//! this project's work requests or on bodies as they are (`BODY_FORMAT`).

use std::process::ExitCode;

use backpressure_app::delivery::{BodyFormat, HttpDelivery, RawDelivery};
use backpressure_app::{Env, serve, tokio_runtime};

fn main() -> ExitCode {
    #[allow(clippy::expect_used)]
    let runtime = tokio_runtime().expect("cannot start the Tokio runtime");
    let (name, version) = ("batch-consumer", env!("CARGO_PKG_VERSION"));
    // A BODY_FORMAT that is neither is named, with every other bad variable, by HttpDelivery.
    let raw = matches!(BodyFormat::from_vars(&Env::from_process_env()), Ok(BodyFormat::Raw));
    runtime.block_on(async {
        if raw {
            serve(name, version, RawDelivery::from_vars).await
        } else {
            serve(name, version, HttpDelivery::from_vars).await
        }
    })
}
