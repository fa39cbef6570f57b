//! The batch engine's settings from the environment (a processor reads its own).

use std::time::Duration;

use backpressure_batch::Backoff;

use crate::idempotency::IdempotencyConfig;
use backpressure_core::config::variables::{
    CONSUMER_CONCURRENCY, CONSUMER_MAX_IN_FLIGHT_PER_GROUP, DEADLINE_MARGIN_MS, ENVELOPE,
    IDEMPOTENCY_TTL_SECONDS, OFFLOADED_PAYLOAD_FIRST_BYTE_TIMEOUT_MS, OFFLOADED_PAYLOAD_MAX_BYTES,
    OFFLOADED_PAYLOAD_READ_TIMEOUT_MS, OFFLOADED_PAYLOADS, QUARANTINE_MAX_MESSAGE_BYTES,
    QUARANTINE_OVERFLOW_BUCKET, QUARANTINE_QUEUE_URL, RETRY_BASE_SECONDS, RETRY_MAX_SECONDS,
};
use backpressure_core::config::{ConfigError, Vars, api_call_timeout, namespace};
use backpressure_core::envelope::Envelope;
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
    /// The idempotency store (`IDEMPOTENCY_TABLE` or `IDEMPOTENCY_REDIS_URL`)
    /// and its settings; `None` when neither is set.
    pub idempotency: Option<IdempotencyConfig>,
    /// `ENVELOPE`: the wrapper each body comes in; `None` (`none`): the body is the message.
    pub envelope: Option<Envelope>,
    /// `OFFLOADED_PAYLOADS` and `OFFLOADED_PAYLOAD_MAX_BYTES`; `None` (`off`):
    /// a pointer to S3 is a message like any other.
    pub offloaded: Option<Offloaded>,
}

/// How payloads offloaded to S3 are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Offloaded {
    /// `OFFLOADED_PAYLOAD_MAX_BYTES`: a larger object is quarantined unread.
    pub max_bytes: u64,
    /// `read-and-delete`: the object is deleted once its message was processed.
    pub delete_when_processed: bool,
    /// `OFFLOADED_PAYLOAD_FIRST_BYTE_TIMEOUT_MS`: how long an object's first bytes may take.
    pub first_byte_timeout: Duration,
    /// `OFFLOADED_PAYLOAD_READ_TIMEOUT_MS`: how long reading an object whole may take.
    pub read_timeout: Duration,
}

impl Offloaded {
    /// For a start line: the mode and both timeouts.
    pub fn describe(&self) -> String {
        format!(
            "{} (first byte within {} ms, whole within {} ms)",
            if self.delete_when_processed { "read-and-delete" } else { "read" },
            self.first_byte_timeout.as_millis(),
            self.read_timeout.as_millis()
        )
    }
}

/// `OFFLOADED_PAYLOADS` and its bound; every bad one is named.
fn offloaded<F: Fn(&str) -> Option<String>>(
    vars: &Vars<F>,
    errors: &mut Vec<ConfigError>,
) -> Option<Offloaded> {
    let max_bytes = vars.whole_or(&OFFLOADED_PAYLOAD_MAX_BYTES, errors);
    let first_byte_timeout =
        Duration::from_millis(vars.whole_or(&OFFLOADED_PAYLOAD_FIRST_BYTE_TIMEOUT_MS, errors));
    let read_timeout =
        Duration::from_millis(vars.whole_or(&OFFLOADED_PAYLOAD_READ_TIMEOUT_MS, errors));
    let given = vars.get(OFFLOADED_PAYLOADS.name);
    let delete_when_processed = match given.as_deref().map(str::trim) {
        None | Some("" | "off") => return None,
        Some("read") => false,
        Some("read-and-delete") => true,
        Some(other) => {
            errors.push(ConfigError::invalid(
                OFFLOADED_PAYLOADS.name,
                other,
                "give off, read or read-and-delete",
            ));
            return None;
        }
    };
    if !cfg!(feature = "offloaded-payloads") {
        errors.push(ConfigError::invalid(
            OFFLOADED_PAYLOADS.name,
            given.as_deref().unwrap_or_default(),
            "this build reads nothing from S3: build backpressure-app with the feature `offloaded-payloads`",
        ));
        return None;
    }
    Some(Offloaded { max_bytes, delete_when_processed, first_byte_timeout, read_timeout })
}

/// `ChangeMessageVisibility`'s limit: 12 hours.
const MAX_VISIBILITY_SECONDS: u64 = 43_200;

const _: () = assert!(
    IDEMPOTENCY_TTL_SECONDS.whole_range().1 == 31_536_000
        && RETRY_MAX_SECONDS.whole_range().1 == MAX_VISIBILITY_SECONDS
);

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
        let quarantine_queue = ConfigError::kept(
            vars.queue(
                QUARANTINE_QUEUE_URL.name,
                "permanent failures are written there before they are acknowledged",
            ),
            &mut errors,
        );
        let base = vars.whole_or(&RETRY_BASE_SECONDS, &mut errors);
        let max = vars.whole_or(&RETRY_MAX_SECONDS, &mut errors);
        let max_bytes =
            ConfigError::kept(vars.whole(&QUARANTINE_MAX_MESSAGE_BYTES), &mut errors).flatten();
        let concurrency = vars.whole_or(&CONSUMER_CONCURRENCY, &mut errors);
        let per_group = vars.whole_or(&CONSUMER_MAX_IN_FLIGHT_PER_GROUP, &mut errors);
        let margin_ms = vars.whole_or(&DEADLINE_MARGIN_MS, &mut errors);
        if base > max {
            errors.push(ConfigError::invalid(
                RETRY_BASE_SECONDS.name,
                &base.to_string(),
                format!("it is above {}={max}", RETRY_MAX_SECONDS.name),
            ));
        }
        let namespace = namespace(vars).map_err(|e| errors.push(e)).ok();
        let api_call_timeout = api_call_timeout(vars).map_err(|e| errors.push(e)).ok();
        let idempotency = IdempotencyConfig::from_vars(vars, &mut errors);
        let envelope = vars.get(ENVELOPE.name).and_then(|text| {
            Envelope::parse(&text)
                .map_err(|reason| errors.push(ConfigError::invalid(ENVELOPE.name, &text, reason)))
                .ok()
                .flatten()
        });
        let offloaded = offloaded(vars, &mut errors);
        let overflow_bucket = vars.get(QUARANTINE_OVERFLOW_BUCKET.name);
        if let Some(problem) = overflow_bucket.as_deref().and_then(bucket_name_problem) {
            let value = overflow_bucket.as_deref().unwrap_or_default();
            errors.push(ConfigError::invalid(QUARANTINE_OVERFLOW_BUCKET.name, value, problem));
        } else if let Some(bucket) =
            overflow_bucket.as_deref().filter(|_| !cfg!(feature = "s3-overflow"))
        {
            errors.push(ConfigError::invalid(
                QUARANTINE_OVERFLOW_BUCKET.name,
                bucket,
                "this build keeps no body in S3: build backpressure-app with the feature `s3-overflow`",
            ));
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
            envelope,
            offloaded,
        })
    }
}
