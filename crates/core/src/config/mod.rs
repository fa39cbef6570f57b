//! Configuration from the environment, read once when a function starts. An
//! invalid value fails the function's init with the variable and the value.

use std::time::Duration;

mod consumer;
mod error;
mod publisher;
mod vars;

pub use consumer::{ConsumerConfig, Downstream};
pub use error::ConfigError;
pub use publisher::{DEFAULT_NAMESPACE, PublisherConfig, Sampling, StorageResolution};
pub use vars::Vars;

/// Every variable backlog-publisher reads. `template.yaml` is checked against it.
pub const PUBLISHER_VARIABLES: &[&str] = &[
    "QUEUE_URL",
    "ECS_CLUSTER_NAME",
    "ECS_SERVICE_NAME",
    "TARGETS",
    "TARGET_BACKLOG_PER_TASK",
    "ACCEPTABLE_LATENCY_SECONDS",
    "AVG_PROCESSING_SECONDS",
    "METRIC_NAMESPACE",
    "STORAGE_RESOLUTION",
    "BACKLOG_INCLUDES",
    "TASK_COUNT",
    "SAMPLES_PER_INVOCATION",
    "SAMPLE_INTERVAL_SECONDS",
    "API_CALL_TIMEOUT_MS",
];

/// Every variable batch-consumer reads (with its default processor).
pub const CONSUMER_VARIABLES: &[&str] = &[
    "DOWNSTREAM_URL",
    "DOWNSTREAM_TIMEOUT_MS",
    "DOWNSTREAM_MAX_RPS",
    "QUARANTINE_QUEUE_URL",
    "QUARANTINE_MAX_MESSAGE_BYTES",
    "CONSUMER_CONCURRENCY",
    "DEADLINE_MARGIN_MS",
    "RETRY_BASE_SECONDS",
    "RETRY_MAX_SECONDS",
    "METRIC_NAMESPACE",
    "API_CALL_TIMEOUT_MS",
];

const DEFAULT_API_CALL_TIMEOUT_MS: u64 = 5_000;

/// `API_CALL_TIMEOUT_MS`: how long one AWS call (its retries included) may
/// take. Well inside the invocation's time, so that a hung call costs only the
/// work that depends on it, never the whole invocation.
fn api_call_timeout<F: Fn(&str) -> Option<String>>(
    vars: &Vars<F>,
) -> Result<Duration, ConfigError> {
    Ok(Duration::from_millis(
        vars.ranged("API_CALL_TIMEOUT_MS", 100, 60_000)?.unwrap_or(DEFAULT_API_CALL_TIMEOUT_MS),
    ))
}

#[cfg(test)]
mod variables_tests {
    use std::collections::BTreeSet;
    use std::sync::Mutex;

    use super::*;

    /// The names a configuration asks for when only `required` are set
    /// (every optional setting is then read, with its default).
    fn asked_for(
        required: &[(&str, &str)],
        parse: impl Fn(&Vars<&dyn Fn(&str) -> Option<String>>),
    ) -> Vec<String> {
        let asked = Mutex::new(BTreeSet::new());
        let lookup = |name: &str| {
            asked.lock().unwrap().insert(name.to_owned());
            required.iter().find(|(n, _)| *n == name).map(|(_, v)| (*v).to_owned())
        };
        let lookup: &dyn Fn(&str) -> Option<String> = &lookup;
        parse(&Vars::new(lookup));
        asked.into_inner().unwrap().into_iter().collect()
    }

    fn sorted(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| (*s).to_owned()).collect::<BTreeSet<_>>().into_iter().collect()
    }

    #[test]
    fn the_variable_lists_are_exactly_what_the_code_reads() {
        let queue = "https://sqs.us-east-1.amazonaws.com/1/q";
        let publisher = asked_for(
            &[("QUEUE_URL", queue), ("ECS_CLUSTER_NAME", "c"), ("ECS_SERVICE_NAME", "s")],
            |vars| assert!(PublisherConfig::from_vars(vars).is_ok()),
        );
        assert_eq!(publisher, sorted(PUBLISHER_VARIABLES));
        let consumer = asked_for(
            &[("QUARANTINE_QUEUE_URL", queue), ("DOWNSTREAM_URL", "http://127.0.0.1/")],
            |vars| {
                assert!(
                    ConsumerConfig::from_vars(vars).is_ok() && Downstream::from_vars(vars).is_ok()
                )
            },
        );
        assert_eq!(consumer, sorted(CONSUMER_VARIABLES));
    }
}
