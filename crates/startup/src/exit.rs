//! How a binary ends: the exit codes every binary of the project shares, and
//! one sentence instead of a panic when a Lambda function runs outside Lambda.

use std::error::Error;
use std::process::ExitCode;

/// Nothing failed.
pub const SUCCESS: u8 = 0;
/// The work failed (an AWS call, the runtime); the log says why.
pub const FAILURE: u8 = 1;
/// The invocation or the configuration cannot work; the message names what to set.
pub const USAGE: u8 = 2;

/// The variables Lambda's runtime client reads at start; it panics, with a
/// backtrace, when one is missing.
const LAMBDA_VARIABLES: [&str; 4] = [
    "AWS_LAMBDA_RUNTIME_API",
    "AWS_LAMBDA_FUNCTION_NAME",
    "AWS_LAMBDA_FUNCTION_MEMORY_SIZE",
    "AWS_LAMBDA_FUNCTION_VERSION",
];

/// Whether the process runs where a Lambda runtime API is; outside one (a
/// function started by hand), says so in one sentence on stderr instead of
/// the runtime client's panic. `name` is the function's.
pub fn in_lambda(name: &str) -> bool {
    let missing: Vec<&str> =
        LAMBDA_VARIABLES.into_iter().filter(|v| std::env::var_os(v).is_none()).collect();
    if missing.is_empty() {
        return true;
    }
    eprintln!(
        "{name} is a Lambda function and runs only where a Lambda runtime API is ({} not set): \
         deploy it, or run it locally with `cargo lambda watch` and `cargo lambda invoke` \
         (sqs-backpressure's scripts/cargo-lambda.sh runs the version it pins; its docs/local.md \
         has the recipe)",
        missing.join(", ")
    );
    false
}

/// The process's exit code once a runtime (Lambda's, say) has stopped.
pub fn exit(result: Result<(), Box<dyn Error + Send + Sync>>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::from(SUCCESS),
        Err(error) => {
            tracing::error!(error = %error, "the runtime stopped");
            ExitCode::from(FAILURE)
        }
    }
}
