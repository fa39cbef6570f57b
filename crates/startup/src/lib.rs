//! The start-up every sqs-backpressure binary shares, so none of them can
//! drift: the AWS SDK configured once ([`sdk`]: per-call timeouts, one HTTPS
//! client for every service client; the `sdk` feature), the system's trust
//! store read once, when a TLS connection first needs it ([`tls`]), the log subscriber
//! ([`logging`], the `subscriber` feature), one rate limiter ([`rate`]), and the
//! configuration read once with its errors logged ([`init`]) or the process's
//! exit ([`exit()`]).
#![warn(missing_docs, unreachable_pub)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod exit;
#[cfg(feature = "subscriber")]
#[cfg_attr(docsrs, doc(cfg(feature = "subscriber")))]
pub mod logging;
pub mod rate;
#[cfg(feature = "sdk")]
#[cfg_attr(docsrs, doc(cfg(feature = "sdk")))]
pub mod sdk;
#[cfg(feature = "tls")]
#[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
pub mod tls;

use std::error::Error;

use backpressure_core::config::Vars;
use backpressure_core::config::variables::{self, Reader};
use backpressure_core::error::error_chain;

pub use exit::{exit, in_lambda};
#[cfg(feature = "sdk")]
#[cfg_attr(docsrs, doc(cfg(feature = "sdk")))]
pub use sdk::{LazyClient, SdkSettings, sdk_config};

/// Warns of each variable in the process's environment of the families
/// `reader` reads that it does not read, with the one it most likely meant:
/// a typo must not fall back to a default silently.
pub fn warn_of_unknown_variables(reader: Reader, program: &str, listed_in: &str) {
    let names: Vec<String> =
        std::env::vars_os().filter_map(|(name, _)| name.into_string().ok()).collect();
    for (name, meant) in variables::unknown(reader, names.iter().map(String::as_str)) {
        match meant {
            Some(meant) => tracing::warn!(
                variable = %name,
                "not a variable {program} reads: did you mean {meant}? ({listed_in} lists them)"
            ),
            None => {
                tracing::warn!(variable = %name, "not a variable {program} reads ({listed_in} lists them)")
            }
        }
    }
}

/// The environment lookups a configuration is read from.
pub type Env = Vars<fn(&str) -> Option<String>>;

/// Installs the log subscriber ([`logging::init`]) and reads the
/// configuration with `load`; `None` after logging why it is invalid (Lambda
/// reports the exit as `Runtime.ExitError` with that line).
#[cfg(feature = "subscriber")]
#[cfg_attr(docsrs, doc(cfg(feature = "subscriber")))]
pub fn init<C, E: Error + 'static>(load: impl FnOnce(&Env) -> Result<C, E>) -> Option<C> {
    logging::init();
    read(load)
}

/// Reads the configuration with `load`; `None` after logging why it is
/// invalid. For a binary that installed its own subscriber.
pub fn read<C, E: Error + 'static>(load: impl FnOnce(&Env) -> Result<C, E>) -> Option<C> {
    load(&Vars::from_process_env())
        .inspect_err(|error| tracing::error!(error = %error_chain(error), "invalid configuration"))
        .ok()
}

/// `"{name}/{crate version} ({Lambda function version})"`, for quarantine records.
pub fn handler_version(name: &str, version: &str) -> String {
    let function = std::env::var("AWS_LAMBDA_FUNCTION_VERSION").unwrap_or_else(|_| "local".into());
    format!("{name}/{version} ({function})")
}
