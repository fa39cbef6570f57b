//! The batch engine's settings from the environment (a processor reads its own).

use std::time::Duration;

use super::backoff::{Backoff, MAX_VISIBILITY};
use crate::config::{ConfigError, Vars, api_call_timeout, namespace};
use crate::queue::QueueRef;

/// Everything but the processor's own settings: a custom processor reads its own.
#[derive(Debug, Clone, PartialEq)]
pub struct ConsumerConfig {
    /// `QUARANTINE_QUEUE_URL`: where poison messages are written.
    pub quarantine_queue: QueueRef,
    /// The largest quarantine record sent; larger ones are retried instead.
    pub quarantine_max_message_bytes: usize,
    /// `CONSUMER_CONCURRENCY`: messages (or FIFO groups) in flight at once.
    pub concurrency: usize,
    /// `DEADLINE_MARGIN_MS`: time kept free before the invocation's deadline.
    pub deadline_margin: Duration,
    /// `RETRY_BASE_SECONDS` and `RETRY_MAX_SECONDS`.
    pub backoff: Backoff,
    /// `METRIC_NAMESPACE`: the Embedded Metric Format namespace.
    pub namespace: String,
    /// Each AWS call's own budget (`API_CALL_TIMEOUT_MS`).
    pub api_call_timeout: Duration,
}

const DEFAULT_CONCURRENCY: usize = 32;
const DEFAULT_MARGIN_MS: u64 = 2_000;
const DEFAULT_RETRY_BASE_SECONDS: u64 = 10;
const DEFAULT_RETRY_MAX_SECONDS: u64 = 900;
/// SQS's default `MaximumMessageSize`; a queue may allow up to 1 MiB.
const DEFAULT_QUARANTINE_MAX_BYTES: usize = 262_144;

impl ConsumerConfig {
    /// Reads the variables; the error names the variable and the value.
    pub fn from_vars<F: Fn(&str) -> Option<String>>(vars: &Vars<F>) -> Result<Self, ConfigError> {
        let quarantine_url = vars.get("QUARANTINE_QUEUE_URL").ok_or(ConfigError::Missing {
            name: "QUARANTINE_QUEUE_URL",
            reason: "permanent failures are written there before they are acknowledged",
        })?;
        let quarantine_queue = QueueRef::parse(&quarantine_url).map_err(|e| {
            ConfigError::invalid("QUARANTINE_QUEUE_URL", &quarantine_url, e.to_string())
        })?;
        let base = vars
            .ranged("RETRY_BASE_SECONDS", 0, MAX_VISIBILITY.as_secs())?
            .unwrap_or(DEFAULT_RETRY_BASE_SECONDS);
        let max = vars
            .ranged("RETRY_MAX_SECONDS", 0, MAX_VISIBILITY.as_secs())?
            .unwrap_or(DEFAULT_RETRY_MAX_SECONDS);
        if base > max {
            return Err(ConfigError::invalid(
                "RETRY_BASE_SECONDS",
                &base.to_string(),
                format!("it is above RETRY_MAX_SECONDS={max}"),
            ));
        }
        Ok(Self {
            quarantine_queue,
            quarantine_max_message_bytes: vars
                .ranged("QUARANTINE_MAX_MESSAGE_BYTES", 1024, 1_048_576)?
                .map_or(DEFAULT_QUARANTINE_MAX_BYTES, |b| b as usize),
            concurrency: vars
                .ranged("CONSUMER_CONCURRENCY", 1, 10_000)?
                .map_or(DEFAULT_CONCURRENCY, |c| c as usize),
            deadline_margin: Duration::from_millis(
                vars.ranged("DEADLINE_MARGIN_MS", 100, 900_000)?.unwrap_or(DEFAULT_MARGIN_MS),
            ),
            backoff: Backoff { base: Duration::from_secs(base), max: Duration::from_secs(max) },
            namespace: namespace(vars)?,
            api_call_timeout: api_call_timeout(vars)?,
        })
    }
}
