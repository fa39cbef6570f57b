//! The batch engine's settings from the environment (a processor reads its own).

use std::time::Duration;

use crate::backoff::{Backoff, MAX_VISIBILITY};
#[cfg(feature = "dynamodb")]
use crate::idempotency::DynamoDbStore;
#[cfg(feature = "dynamodb")]
use crate::idempotency::Idempotency;
use crate::idempotency::{DEFAULT_TTL, MissingKey};
use backpressure_core::config::{ConfigError, Vars, api_call_timeout, namespace};
use backpressure_core::queue::QueueRef;

/// Everything but the processor's own settings: a custom processor reads its own.
#[derive(Debug, Clone, PartialEq)]
pub struct ConsumerConfig {
    /// `QUARANTINE_QUEUE_URL`: where poison messages are written.
    pub quarantine_queue: QueueRef,
    /// `QUARANTINE_MAX_MESSAGE_BYTES`: the largest quarantine record sent;
    /// `None` (unset) reads the quarantine queue's `MaximumMessageSize`.
    pub quarantine_max_message_bytes: Option<usize>,
    /// `QUARANTINE_OVERFLOW_BUCKET`: where the bodies of records too large
    /// for the quarantine queue go; `None` retries those messages instead.
    pub quarantine_overflow_bucket: Option<String>,
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
    /// `CONSUMER_MAX_IN_FLIGHT_PER_GROUP` (1–10,000; unset or 0: off): at most
    /// this many messages of one `MessageGroupId` in work at once on standard queues.
    pub max_in_flight_per_group: Option<usize>,
    /// `IDEMPOTENCY_TABLE` and its settings; `None` when the variable is unset.
    pub idempotency: Option<IdempotencyConfig>,
}

/// The idempotency store's settings from the environment.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct IdempotencyConfig {
    /// `IDEMPOTENCY_TABLE`: the DynamoDB table claims are written to.
    pub table: String,
    /// `IDEMPOTENCY_TTL_SECONDS` (60–31,536,000, default 3,600): how long a
    /// completed key is remembered.
    pub ttl: Duration,
    /// `IDEMPOTENCY_MISSING_KEY` (`process`, the default, or `quarantine`).
    pub missing_key: MissingKey,
}

#[cfg(feature = "dynamodb")]
impl IdempotencyConfig {
    /// The claim settings on a [`DynamoDbStore`] called with `client`.
    pub fn store(
        &self,
        client: impl Into<backpressure_startup::LazyClient<aws_sdk_dynamodb::Client>>,
    ) -> Idempotency<DynamoDbStore> {
        Idempotency::new(DynamoDbStore::new(client, &self.table))
            .ttl(self.ttl)
            .missing_key(self.missing_key)
    }
}

fn idempotency<F: Fn(&str) -> Option<String>>(
    vars: &Vars<F>,
    errors: &mut Vec<ConfigError>,
) -> Option<IdempotencyConfig> {
    let ttl =
        vars.ranged_or("IDEMPOTENCY_TTL_SECONDS", (60, 31_536_000), DEFAULT_TTL.as_secs(), errors);
    let missing_key = match vars.get("IDEMPOTENCY_MISSING_KEY").as_deref() {
        None | Some("process") => MissingKey::ProcessUnclaimed,
        Some("quarantine") => MissingKey::Quarantine,
        Some(other) => {
            errors.push(ConfigError::invalid(
                "IDEMPOTENCY_MISSING_KEY",
                other,
                "expected process or quarantine",
            ));
            MissingKey::ProcessUnclaimed
        }
    };
    let table = vars.get("IDEMPOTENCY_TABLE")?;
    Some(IdempotencyConfig { table, ttl: Duration::from_secs(ttl), missing_key })
}

const DEFAULT_CONCURRENCY: usize = 32;
const DEFAULT_MARGIN_MS: u64 = 2_000;
const DEFAULT_RETRY_BASE_SECONDS: u64 = 10;
const DEFAULT_RETRY_MAX_SECONDS: u64 = 900;

/// S3's rule for a bucket name: 3–63 lowercase letters, digits, dots and
/// hyphens, a letter or digit at each end.
fn bucket_name_problem(name: &str) -> Option<&'static str> {
    let edge = |c: Option<char>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    if !(3..=63).contains(&name.len()) {
        Some("a bucket name is 3 to 63 characters")
    } else if !name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.' || c == '-')
    {
        Some(
            "a bucket name has only lowercase letters, digits, dots and hyphens (give the name, not an ARN or URL)",
        )
    } else if !edge(name.chars().next()) || !edge(name.chars().last()) {
        Some("a bucket name starts and ends with a letter or digit")
    } else {
        None
    }
}

impl ConsumerConfig {
    /// Reads the variables; every bad one is reported ([`ConfigError::Several`]),
    /// each error naming the variable and the value.
    pub fn from_vars<F: Fn(&str) -> Option<String>>(vars: &Vars<F>) -> Result<Self, ConfigError> {
        let mut errors = Vec::new();
        let quarantine_queue = vars
            .queue(
                "QUARANTINE_QUEUE_URL",
                "permanent failures are written there before they are acknowledged",
            )
            .map_err(|e| errors.push(e))
            .ok();
        let mut number =
            |name, min, max, default: u64| vars.ranged_or(name, (min, max), default, &mut errors);
        let base =
            number("RETRY_BASE_SECONDS", 0, MAX_VISIBILITY.as_secs(), DEFAULT_RETRY_BASE_SECONDS);
        let max =
            number("RETRY_MAX_SECONDS", 0, MAX_VISIBILITY.as_secs(), DEFAULT_RETRY_MAX_SECONDS);
        let max_bytes = vars
            .ranged("QUARANTINE_MAX_MESSAGE_BYTES", 1024, 1_048_576)
            .map_err(|e| errors.push(e))
            .ok()
            .flatten();
        let mut number =
            |name, min, max, default: u64| vars.ranged_or(name, (min, max), default, &mut errors);
        let concurrency = number("CONSUMER_CONCURRENCY", 1, 10_000, DEFAULT_CONCURRENCY as u64);
        let per_group = number("CONSUMER_MAX_IN_FLIGHT_PER_GROUP", 0, 10_000, 0);
        let margin_ms = number("DEADLINE_MARGIN_MS", 100, 900_000, DEFAULT_MARGIN_MS);
        if base > max {
            errors.push(ConfigError::invalid(
                "RETRY_BASE_SECONDS",
                &base.to_string(),
                format!("it is above RETRY_MAX_SECONDS={max}"),
            ));
        }
        let namespace = namespace(vars).map_err(|e| errors.push(e)).ok();
        let api_call_timeout = api_call_timeout(vars).map_err(|e| errors.push(e)).ok();
        let idempotency = idempotency(vars, &mut errors);
        let overflow_bucket = vars.get("QUARANTINE_OVERFLOW_BUCKET");
        if let Some(problem) = overflow_bucket.as_deref().and_then(bucket_name_problem) {
            let value = overflow_bucket.as_deref().unwrap_or_default();
            errors.push(ConfigError::invalid("QUARANTINE_OVERFLOW_BUCKET", value, problem));
        }
        let (Some(quarantine_queue), Some(namespace), Some(api_call_timeout)) =
            (quarantine_queue, namespace, api_call_timeout)
        else {
            return Err(ConfigError::gathered(errors));
        };
        ConfigError::all_or(errors, || Self {
            quarantine_queue,
            quarantine_max_message_bytes: max_bytes.map(|bytes| bytes as usize),
            quarantine_overflow_bucket: overflow_bucket,
            concurrency: concurrency as usize,
            max_in_flight_per_group: (per_group > 0).then_some(per_group as usize),
            deadline_margin: Duration::from_millis(margin_ms),
            backoff: Backoff { base: Duration::from_secs(base), max: Duration::from_secs(max) },
            namespace,
            api_call_timeout,
            idempotency,
        })
    }
}
