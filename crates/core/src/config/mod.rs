//! Configuration from the environment, read once when a function starts. An
//! invalid value fails the function's init with the variable and the value.

use std::time::Duration;

mod error;
mod vars;

pub use error::ConfigError;
pub use vars::Vars;

/// The CloudWatch namespace both functions publish to unless `METRIC_NAMESPACE` says otherwise.
pub const DEFAULT_NAMESPACE: &str = "SqsBackpressure";

const DEFAULT_API_CALL_TIMEOUT_MS: u64 = 5_000;

/// `API_CALL_TIMEOUT_MS`: how long one AWS call (its retries included) may
/// take. Well inside the invocation's time, so that a hung call costs only the
/// work that depends on it, never the whole invocation.
pub(crate) fn api_call_timeout<F: Fn(&str) -> Option<String>>(
    vars: &Vars<F>,
) -> Result<Duration, ConfigError> {
    Ok(Duration::from_millis(
        vars.ranged("API_CALL_TIMEOUT_MS", 100, 60_000)?.unwrap_or(DEFAULT_API_CALL_TIMEOUT_MS),
    ))
}

pub(crate) fn namespace<F: Fn(&str) -> Option<String>>(
    vars: &Vars<F>,
) -> Result<String, ConfigError> {
    let Some(namespace) = vars.get("METRIC_NAMESPACE") else {
        return Ok(DEFAULT_NAMESPACE.to_owned());
    };
    let allowed = |c: char| c.is_ascii_alphanumeric() || ".-_/#: ".contains(c);
    if namespace.starts_with("AWS/") {
        Err(ConfigError::invalid(
            "METRIC_NAMESPACE",
            &namespace,
            "the AWS/ prefix is reserved for AWS services",
        ))
    } else if namespace.len() > 255 || !namespace.chars().all(allowed) {
        Err(ConfigError::invalid(
            "METRIC_NAMESPACE",
            &namespace,
            "expected at most 255 of A-Z a-z 0-9 . - _ / # : and space",
        ))
    } else {
        Ok(namespace)
    }
}

#[cfg(test)]
mod variables_tests {
    use std::collections::BTreeSet;
    use std::sync::Mutex;

    use super::*;
    use crate::consumer::config::{CONSUMER_VARIABLES, ConsumerConfig, Downstream};
    use crate::publisher::config::{PUBLISHER_VARIABLES, PublisherConfig};

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
