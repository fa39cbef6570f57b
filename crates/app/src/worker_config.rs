//! The worker's own settings; the engine's (`QUARANTINE_*`, `CONSUMER_CONCURRENCY`,
//! `RETRY_*`, `METRIC_NAMESPACE`, `API_CALL_TIMEOUT_MS`) and the delivery's
//! (`DOWNSTREAM_*`) mean what they mean for batch-consumer.

use std::time::Duration;

use backpressure_core::config::variables::{
    DRAIN_SECONDS, ECS_AGENT_URI, MESSAGE_TIMEOUT_SECONDS, PROTECTION_IDLE_SECONDS, QUEUE_URL,
    RECEIVE_WAIT_SECONDS, VISIBILITY_TIMEOUT_SECONDS, WORKER_LOG_FORMAT, WORKER_MAX_IN_FLIGHT,
    WORKER_POLLERS,
};
use backpressure_core::config::{ConfigError, Vars};
use backpressure_core::queue::QueueRef;

/// What the worker reads besides the engine's and the delivery's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkerConfig {
    /// `QUEUE_URL`: the work queue.
    pub queue: QueueRef,
    /// `WORKER_POLLERS` (1–20, default 2): `ReceiveMessage` long polls at once.
    pub pollers: usize,
    /// `WORKER_MAX_IN_FLIGHT` (10–10,000, default 100): messages received and
    /// not yet settled; no receive while it is reached, so memory stays bounded.
    pub max_in_flight: usize,
    /// `RECEIVE_WAIT_SECONDS` (1–20, default 20): the long poll's wait.
    pub receive_wait: Duration,
    /// `VISIBILITY_TIMEOUT_SECONDS` (1–43,200, default 60): the lease a
    /// receive takes, renewed by the heartbeat while the message is in work.
    pub visibility_timeout: Duration,
    /// `MESSAGE_TIMEOUT_SECONDS` (1–43,200, default 900): how long one received
    /// batch may work before its unfinished messages are retried.
    pub message_timeout: Duration,
    /// `DRAIN_SECONDS` (1–110, default 90): after SIGTERM, how long work in
    /// flight may finish; below Fargate's 120 s `stopTimeout` maximum.
    pub drain: Duration,
    /// `ECS_AGENT_URI` (set by ECS): task scale-in protection is used when present.
    pub agent_uri: Option<String>,
    /// `PROTECTION_IDLE_SECONDS` (1–3,600, default 60): idle time before the
    /// task's scale-in protection is released.
    pub protection_idle: Duration,
}

impl WorkerConfig {
    /// Reads the variables; every bad one is reported, each error naming the
    /// variable and the value.
    pub fn from_vars<F: Fn(&str) -> Option<String>>(
        vars: &Vars<F>,
    ) -> Result<Self, Vec<ConfigError>> {
        let mut errors = Vec::new();
        let queue = vars.queue(QUEUE_URL.name, "the worker receives from it");
        let pollers = vars.whole_or(&WORKER_POLLERS, &mut errors) as usize;
        let max_in_flight = vars.whole_or(&WORKER_MAX_IN_FLIGHT, &mut errors) as usize;
        let mut seconds = |variable| Duration::from_secs(vars.whole_or(variable, &mut errors));
        let receive_wait = seconds(&RECEIVE_WAIT_SECONDS);
        let visibility_timeout = seconds(&VISIBILITY_TIMEOUT_SECONDS);
        let message_timeout = seconds(&MESSAGE_TIMEOUT_SECONDS);
        let drain = seconds(&DRAIN_SECONDS);
        let protection_idle = seconds(&PROTECTION_IDLE_SECONDS);
        if let Some(format) = vars.get(WORKER_LOG_FORMAT.name)
            && log_format_is_json(Some(&format)).is_none()
        {
            errors.push(ConfigError::Invalid {
                name: WORKER_LOG_FORMAT.name,
                value: format,
                reason: "give text or json".to_owned(),
            });
        }
        match queue {
            Ok(queue) if errors.is_empty() => Ok(Self {
                queue,
                pollers,
                max_in_flight,
                receive_wait,
                visibility_timeout,
                message_timeout,
                drain,
                agent_uri: vars.get(ECS_AGENT_URI.name),
                protection_idle,
            }),
            Ok(_) => Err(errors),
            Err(error) => {
                errors.insert(0, error);
                Err(errors)
            }
        }
    }
}

/// Whether `WORKER_LOG_FORMAT` asks for JSON lines; `None` for a value that
/// is neither `json` nor `text` (logged as text, and refused by [`WorkerConfig::from_vars`]).
fn log_format_is_json(value: Option<&str>) -> Option<bool> {
    match value.map(str::trim) {
        None | Some("") => Some(false),
        Some(format) if format.eq_ignore_ascii_case("json") => Some(true),
        Some(format) if format.eq_ignore_ascii_case("text") => Some(false),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn config(pairs: &[(&str, &str)]) -> Result<WorkerConfig, Vec<ConfigError>> {
        let env: HashMap<String, String> =
            pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        WorkerConfig::from_vars(&Vars::new(move |name| env.get(name).cloned()))
    }

    const QUEUE: &str = "https://sqs.us-east-1.amazonaws.com/123456789012/work";

    #[test]
    fn defaults_and_ranges() {
        let defaults = config(&[("QUEUE_URL", QUEUE)]).unwrap();
        assert_eq!((defaults.pollers, defaults.max_in_flight), (2, 100));
        assert_eq!(defaults.receive_wait, Duration::from_secs(20));
        assert_eq!(defaults.visibility_timeout, Duration::from_secs(60));
        assert_eq!(defaults.drain, Duration::from_secs(90));
        assert_eq!((defaults.agent_uri, defaults.protection_idle), (None, Duration::from_secs(60)));
        for (name, value) in [
            ("QUEUE_URL", "work"),
            ("WORKER_POLLERS", "0"),
            ("WORKER_MAX_IN_FLIGHT", "5"),
            ("RECEIVE_WAIT_SECONDS", "21"),
            ("VISIBILITY_TIMEOUT_SECONDS", "0"),
            ("DRAIN_SECONDS", "120"),
            ("PROTECTION_IDLE_SECONDS", "0"),
        ] {
            let errors = config(&[("QUEUE_URL", QUEUE), (name, value)]).unwrap_err();
            let error = errors[0].to_string();
            assert!(error.contains(&format!("{name}=\"{value}\"")), "{error}");
        }
        let missing = config(&[]).unwrap_err()[0].to_string();
        assert!(missing.contains("QUEUE_URL is required"), "{missing}");
    }

    #[test]
    fn every_bad_variable_is_reported_at_once() {
        let errors = config(&[
            ("WORKER_POLLERS", "0"),
            ("DRAIN_SECONDS", "120"),
            ("RECEIVE_WAIT_SECONDS", "x"),
        ])
        .unwrap_err();
        let names: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(errors.len(), 4, "{names:?}");
        for name in ["QUEUE_URL", "WORKER_POLLERS", "DRAIN_SECONDS", "RECEIVE_WAIT_SECONDS"] {
            assert!(names.iter().any(|e| e.starts_with(name)), "{name}: {names:?}");
        }
    }
}
