//! Configuration from the environment, read once when a function starts. An
//! invalid value fails the function's init with the variable and the value.

use std::time::Duration;

mod error;
mod variable;
pub mod variables;
mod vars;

pub use error::ConfigError;
pub use vars::Vars;

pub use variables::DEFAULT_NAMESPACE;
use variables::{API_CALL_TIMEOUT_MS, METRIC_NAMESPACE};

/// `API_CALL_TIMEOUT_MS`: how long one AWS call (its retries included) may
/// take. Well inside the invocation's time, so that a hung call costs only the
/// work that depends on it, never the whole invocation.
pub fn api_call_timeout<F: Fn(&str) -> Option<String>>(
    vars: &Vars<F>,
) -> Result<Duration, ConfigError> {
    Ok(Duration::from_millis(vars.whole_or_default(&API_CALL_TIMEOUT_MS)?))
}

/// `METRIC_NAMESPACE`: CloudWatch's rules for a namespace, [`DEFAULT_NAMESPACE`] when unset.
pub fn namespace<F: Fn(&str) -> Option<String>>(vars: &Vars<F>) -> Result<String, ConfigError> {
    let Some(namespace) = vars.get(METRIC_NAMESPACE.name) else {
        return Ok(DEFAULT_NAMESPACE.to_owned());
    };
    let allowed = |c: char| c.is_ascii_alphanumeric() || ".-_/#: ".contains(c);
    if namespace.starts_with("AWS/") {
        Err(ConfigError::invalid(
            METRIC_NAMESPACE.name,
            &namespace,
            "the AWS/ prefix is reserved for AWS services",
        ))
    } else if namespace.len() > 255 || !namespace.chars().all(allowed) {
        Err(ConfigError::invalid(
            METRIC_NAMESPACE.name,
            &namespace,
            "expected at most 255 of A-Z a-z 0-9 . - _ / # : and space",
        ))
    } else {
        Ok(namespace)
    }
}

/// Whether a deadline margin leaves a message time to work within its
/// message timeout, or the sentence that says why not. The worker's builder
/// and the worker's start-up both ask it, so the rule and its words are one.
pub fn margin_leaves_time(margin: Duration, message_timeout: Duration) -> Result<(), String> {
    if margin < message_timeout {
        return Ok(());
    }
    let seconds = |d: Duration| format!("{} s", d.as_secs_f64());
    Err(format!(
        "the deadline margin ({}) must be below the message timeout ({}): the margin is kept \
         free of each batch's time, and nothing would be left to work in",
        seconds(margin),
        seconds(message_timeout)
    ))
}
