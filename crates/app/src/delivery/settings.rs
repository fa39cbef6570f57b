//! The downstream service's settings: `DOWNSTREAM_URL`, `DOWNSTREAM_TIMEOUT_MS`,
//! `DOWNSTREAM_MAX_RPS`.

use std::time::Duration;

use backpressure_core::config::variables::{
    DOWNSTREAM_MAX_RPS, DOWNSTREAM_TIMEOUT_MS, DOWNSTREAM_URL,
};
use backpressure_core::config::{ConfigError, Vars};

/// The default processor's downstream HTTP service.
#[derive(Debug, Clone, PartialEq)]
pub struct Downstream {
    /// `DOWNSTREAM_URL`: where each work request is POSTed.
    pub url: String,
    /// `DOWNSTREAM_TIMEOUT_MS`: one request's budget (never past the deadline guard).
    pub timeout: Duration,
    /// Requests per second one function instance may send, when capped.
    pub max_rps: Option<f64>,
}

impl Downstream {
    /// Reads the `DOWNSTREAM_*` variables; the error names the variable and the value.
    pub fn from_vars<F: Fn(&str) -> Option<String>>(vars: &Vars<F>) -> Result<Self, ConfigError> {
        let mut errors = Vec::new();
        let url = match vars.get(DOWNSTREAM_URL.name) {
            None => Err(ConfigError::Missing {
                name: DOWNSTREAM_URL.name,
                reason: "the default processor delivers every message to it",
            }),
            Some(url)
                if !(url.starts_with("http://") || url.starts_with("https://"))
                    || url.contains(char::is_whitespace) =>
            {
                Err(ConfigError::invalid(
                    DOWNSTREAM_URL.name,
                    &url,
                    "expected an http:// or https:// URL",
                ))
            }
            Some(url) => Ok(url),
        }
        .map_err(|e| errors.push(e))
        .ok();
        let timeout_ms = vars.whole_or(&DOWNSTREAM_TIMEOUT_MS, &mut errors);
        let max_rps = ConfigError::kept(vars.decimal(&DOWNSTREAM_MAX_RPS), &mut errors).flatten();
        match url {
            Some(url) => ConfigError::all_or(errors, || Self {
                url,
                timeout: Duration::from_millis(timeout_ms),
                max_rps,
            }),
            None => Err(ConfigError::gathered(errors)),
        }
    }
}

#[cfg(test)]
#[cfg(any(feature = "lambda", feature = "worker"))]
mod tests {
    use std::collections::HashMap;

    use crate::config::ConsumerConfig;
    use backpressure_batch::Backoff;

    use super::*;

    const QUARANTINE: &str = "https://sqs.us-east-1.amazonaws.com/123456789012/quarantine";

    fn config(extra: &[(&str, &str)]) -> Result<(ConsumerConfig, Downstream), ConfigError> {
        let mut env: HashMap<String, String> = [
            ("DOWNSTREAM_URL", "http://127.0.0.1:8080/work"),
            ("QUARANTINE_QUEUE_URL", QUARANTINE),
        ]
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
        for (k, v) in extra {
            env.insert((*k).to_owned(), (*v).to_owned());
        }
        let vars = Vars::new(move |name| env.get(name).cloned());
        Ok((ConsumerConfig::from_vars(&vars)?, Downstream::from_vars(&vars)?))
    }

    #[test]
    fn every_bad_variable_of_the_engine_and_the_delivery_is_reported_at_once() {
        let bad = [
            ("CONSUMER_CONCURRENCY", "0"),
            ("DEADLINE_MARGIN_MS", "1"),
            ("RETRY_BASE_SECONDS", "x"),
            ("QUARANTINE_QUEUE_URL", "not a url"),
        ];
        let engine = config(&bad).unwrap_err().into_each();
        let text: Vec<String> = engine.iter().map(ToString::to_string).collect();
        assert_eq!(engine.len(), 4, "{text:?}");
        for (name, _) in bad {
            assert!(text.iter().any(|t| t.starts_with(name)), "{name}: {text:?}");
        }
        let env: HashMap<&str, &str> = [
            ("DOWNSTREAM_URL", "ftp://x"),
            ("DOWNSTREAM_TIMEOUT_MS", "0"),
            ("DOWNSTREAM_MAX_RPS", "-1"),
        ]
        .into();
        let vars = Vars::new(move |name| env.get(name).map(|v| (*v).to_owned()));
        let delivery = Downstream::from_vars(&vars).unwrap_err();
        let joined = delivery.to_string();
        assert_eq!(delivery.into_each().len(), 3, "{joined}");
        for name in ["DOWNSTREAM_URL=", "DOWNSTREAM_TIMEOUT_MS=", "DOWNSTREAM_MAX_RPS="] {
            assert!(joined.contains(name), "{name}: {joined}");
        }
    }

    #[test]
    fn defaults() {
        let (config, downstream) = config(&[]).unwrap();
        assert_eq!(downstream.timeout, Duration::from_secs(5));
        assert_eq!(downstream.max_rps, None);
        assert_eq!(config.quarantine_queue.name(), "quarantine");
        assert_eq!(config.quarantine_max_message_bytes, None, "read from the queue");
        assert_eq!(config.quarantine_overflow_bucket, None);
        assert_eq!(config.concurrency, 32);
        assert_eq!(config.deadline_margin, Duration::from_secs(2));
        assert_eq!(
            config.backoff,
            Backoff { base: Duration::from_secs(10), max: Duration::from_secs(900) }
        );
        assert_eq!(config.namespace, "SqsBackpressure");
        assert_eq!(config.api_call_timeout, Duration::from_secs(5));
    }

    #[test]
    fn every_setting_parsed() {
        let (config, downstream) = config(&[
            ("DOWNSTREAM_TIMEOUT_MS", "250"),
            ("DOWNSTREAM_MAX_RPS", "12.5"),
            ("QUARANTINE_MAX_MESSAGE_BYTES", "1048576"),
            ("QUARANTINE_OVERFLOW_BUCKET", "work-quarantine-overflow"),
            ("CONSUMER_CONCURRENCY", "4"),
            ("DEADLINE_MARGIN_MS", "1500"),
            ("RETRY_BASE_SECONDS", "0"),
            ("RETRY_MAX_SECONDS", "43200"),
            ("API_CALL_TIMEOUT_MS", "100"),
        ])
        .unwrap();
        assert_eq!(config.api_call_timeout, Duration::from_millis(100));
        assert_eq!(downstream.timeout, Duration::from_millis(250));
        assert_eq!(downstream.max_rps, Some(12.5));
        assert_eq!(config.quarantine_max_message_bytes, Some(1_048_576));
        assert_eq!(config.quarantine_overflow_bucket.as_deref(), Some("work-quarantine-overflow"));
        assert_eq!(config.concurrency, 4);
        assert_eq!(config.deadline_margin, Duration::from_millis(1500));
        assert!(config.backoff.base.is_zero(), "no backoff");
        assert_eq!(config.backoff.max, Duration::from_secs(43_200));
    }

    #[test]
    fn errors_name_the_variable_and_the_value() {
        let cases: &[(&[(&str, &str)], &str)] = &[
            (&[("DOWNSTREAM_URL", "")], "DOWNSTREAM_URL is required"),
            (&[("DOWNSTREAM_URL", "ftp://x")], "DOWNSTREAM_URL=\"ftp://x\""),
            (&[("QUARANTINE_QUEUE_URL", "")], "QUARANTINE_QUEUE_URL is required"),
            (&[("QUARANTINE_QUEUE_URL", "quarantine")], "QUARANTINE_QUEUE_URL=\"quarantine\""),
            (&[("DOWNSTREAM_TIMEOUT_MS", "0")], "DOWNSTREAM_TIMEOUT_MS=\"0\""),
            (&[("DOWNSTREAM_TIMEOUT_MS", "soon")], "DOWNSTREAM_TIMEOUT_MS=\"soon\""),
            (&[("DOWNSTREAM_MAX_RPS", "-2")], "DOWNSTREAM_MAX_RPS=\"-2\""),
            (&[("DOWNSTREAM_MAX_RPS", "1e-300")], "DOWNSTREAM_MAX_RPS=\"1e-300\""),
            (&[("DOWNSTREAM_MAX_RPS", "0.0009")], "from 0.001 to 1000000"),
            (&[("DOWNSTREAM_MAX_RPS", "1000001")], "DOWNSTREAM_MAX_RPS=\"1000001\""),
            (&[("DOWNSTREAM_MAX_RPS", "NaN")], "DOWNSTREAM_MAX_RPS=\"NaN\""),
            (&[("DOWNSTREAM_MAX_RPS", "fast")], "DOWNSTREAM_MAX_RPS=\"fast\""),
            (&[("API_CALL_TIMEOUT_MS", "99")], "API_CALL_TIMEOUT_MS=\"99\""),
            (&[("API_CALL_TIMEOUT_MS", "60001")], "API_CALL_TIMEOUT_MS=\"60001\""),
            (&[("API_CALL_TIMEOUT_MS", "1.5")], "API_CALL_TIMEOUT_MS=\"1.5\""),
            (&[("CONSUMER_CONCURRENCY", "0")], "CONSUMER_CONCURRENCY=\"0\""),
            (&[("DEADLINE_MARGIN_MS", "10")], "DEADLINE_MARGIN_MS=\"10\""),
            (&[("RETRY_MAX_SECONDS", "50000")], "RETRY_MAX_SECONDS=\"50000\""),
            (
                &[("RETRY_BASE_SECONDS", "60"), ("RETRY_MAX_SECONDS", "30")],
                "RETRY_BASE_SECONDS=\"60\"",
            ),
            (
                &[("QUARANTINE_MAX_MESSAGE_BYTES", "2000000")],
                "QUARANTINE_MAX_MESSAGE_BYTES=\"2000000\"",
            ),
            (&[("METRIC_NAMESPACE", "AWS/Lambda")], "METRIC_NAMESPACE=\"AWS/Lambda\""),
            (
                &[("QUARANTINE_OVERFLOW_BUCKET", "arn:aws:s3:::b")],
                "QUARANTINE_OVERFLOW_BUCKET=\"arn:aws:s3:::b\"",
            ),
            (&[("QUARANTINE_OVERFLOW_BUCKET", "ab")], "3 to 63 characters"),
            (&[("QUARANTINE_OVERFLOW_BUCKET", "-bucket")], "starts and ends"),
        ];
        for (pairs, expected) in cases {
            let error = config(pairs).unwrap_err().to_string();
            assert!(error.contains(expected), "{pairs:?}: {error:?} lacks {expected:?}");
        }
    }
}

#[cfg(test)]
#[cfg(any(feature = "lambda", feature = "worker"))]
mod variables_tests {
    use std::collections::BTreeSet;
    use std::sync::Mutex;

    use backpressure_core::config::variables::{Reader, read_by};

    use crate::config::ConsumerConfig;

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
    fn the_variable_list_is_exactly_what_the_code_reads() {
        let queue = "https://sqs.us-east-1.amazonaws.com/1/q";
        let consumer = asked_for(
            &[("QUARANTINE_QUEUE_URL", queue), ("DOWNSTREAM_URL", "http://127.0.0.1/")],
            |vars| {
                assert!(
                    ConsumerConfig::from_vars(vars).is_ok()
                        && Downstream::from_vars(vars).is_ok()
                        && super::super::BodyFormat::from_vars(vars).is_ok()
                        && super::super::RawLabels::from_vars(vars).is_ok()
                )
            },
        );
        let table: Vec<&str> = read_by(Reader::Consumer).map(|v| v.name).collect();
        assert_eq!(consumer, sorted(&table));
    }
}
