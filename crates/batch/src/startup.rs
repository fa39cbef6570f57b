//! The start-up every function of this workspace shares — the two binaries
//! and the embedding examples — so none of them can drift: the log
//! subscriber first, configuration read once (an invalid value is logged and
//! the process exits, which Lambda reports as `Runtime.ExitError` with that
//! line), the AWS SDK configured once with per-call timeouts, then the runtime.

use std::error::Error;
use std::process::ExitCode;
use std::time::Duration;

use aws_config::SdkConfig;
use aws_config::stalled_stream_protection::StalledStreamProtectionConfig;
use aws_config::timeout::TimeoutConfig;
use backpressure_core::config::Vars;
use backpressure_core::error::error_chain;

/// The environment lookups the configuration is read from.
pub type Env = Vars<fn(&str) -> Option<String>>;

/// Installs the log subscriber (JSON when `AWS_LAMBDA_LOG_FORMAT=JSON`, as
/// Lambda sets it; one readable line per event otherwise) and reads the
/// configuration with `load`. `None` after logging why it is invalid.
pub fn init<C, E: Error + 'static>(load: impl FnOnce(&Env) -> Result<C, E>) -> Option<C> {
    backpressure_core::logging::init();
    load(&Vars::from_process_env())
        .inspect_err(|error| tracing::error!(error = %error_chain(error), "invalid configuration"))
        .ok()
}

/// The AWS SDK's configuration from the environment, each call with its own
/// budget, retries included: a hung call fails on its own instead of taking
/// the whole invocation's time.
pub async fn sdk_config(api_call_timeout: Duration) -> SdkConfig {
    let timeouts = TimeoutConfig::builder()
        .operation_timeout(api_call_timeout)
        .operation_attempt_timeout(api_call_timeout / 2)
        .build();
    // The attempt timeout already bounds a response that stalls; the stream
    // protection on top of it costs a throughput check on every body poll.
    aws_config::from_env()
        .timeout_config(timeouts)
        .stalled_stream_protection(StalledStreamProtectionConfig::disabled())
        .load()
        .await
}

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
         deploy it, or run it locally with `cargo lambda watch` and `cargo lambda invoke` (see \
         docs/local.md)",
        missing.join(", ")
    );
    false
}

/// The process's exit code once the Lambda runtime has stopped.
pub fn exit(result: Result<(), lambda_runtime::Error>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(error = %error, "the Lambda runtime stopped");
            ExitCode::FAILURE
        }
    }
}

/// `"{name}/{crate version} ({Lambda function version})"`, for quarantine records.
pub fn handler_version(name: &str, version: &str) -> String {
    let function = std::env::var("AWS_LAMBDA_FUNCTION_VERSION").unwrap_or_else(|_| "local".into());
    format!("{name}/{version} ({function})")
}
