//! What `sqs-worker --help` prints: every variable the worker reads, with its
//! default and range; and the variables of its families it does not know,
//! which the start-up warns of (a typo must not fall back to a default).

use backpressure_batch::delivery::CONSUMER_VARIABLES;

use crate::config::WORKER_VARIABLES;

/// (variable, default, range, meaning), in the order of the help.
pub const VARIABLES: &[(&str, &str, &str, &str)] = &[
    ("QUEUE_URL", "required", "a queue URL", "the work queue"),
    ("DOWNSTREAM_URL", "required", "an http(s) URL", "where each work request is POSTed"),
    ("QUARANTINE_QUEUE_URL", "required", "a queue URL", "where permanent failures are recorded"),
    ("WORKER_POLLERS", "2", "1-20", "long polls at once"),
    ("WORKER_MAX_IN_FLIGHT", "100", "10-10000", "messages received and not yet settled"),
    ("RECEIVE_WAIT_SECONDS", "20", "1-20", "the long poll's wait"),
    (
        "VISIBILITY_TIMEOUT_SECONDS",
        "60",
        "1-43200",
        "the lease a receive takes, renewed while in work",
    ),
    (
        "MESSAGE_TIMEOUT_SECONDS",
        "900",
        "1-43200",
        "how long one batch may work before its unfinished messages are retried",
    ),
    ("DRAIN_SECONDS", "90", "1-110", "after SIGTERM, how long work in flight may finish"),
    ("ECS_AGENT_URI", "unset (set by ECS)", "a URL", "task scale-in protection is on when set"),
    ("PROTECTION_IDLE_SECONDS", "60", "1-3600", "idle time before the protection is released"),
    (
        "HEALTH_FILE",
        "/tmp/sqs-worker-<pid>.last-poll",
        "a path",
        "stamped after each successful poll",
    ),
    (
        "HEALTH_MAX_SILENCE_SECONDS",
        "120",
        "1-3600",
        "healthcheck fails after this long without a poll",
    ),
    ("DOWNSTREAM_TIMEOUT_MS", "5000", "1-900000", "one request's budget"),
    ("DOWNSTREAM_MAX_RPS", "unset", "0.001-1000000", "requests per second for the whole task"),
    (
        "QUARANTINE_MAX_MESSAGE_BYTES",
        "unset (read from the queue)",
        "1024-1048576",
        "overrides the quarantine queue's MaximumMessageSize",
    ),
    (
        "QUARANTINE_OVERFLOW_BUCKET",
        "unset",
        "an S3 bucket name",
        "bodies of records too large for the quarantine queue go here",
    ),
    ("IDEMPOTENCY_TABLE", "unset", "a DynamoDB table", "claims each idempotency key before work"),
    ("IDEMPOTENCY_TTL_SECONDS", "3600", "60-31536000", "how long a completed key is remembered"),
    ("IDEMPOTENCY_MISSING_KEY", "process", "process, quarantine", "a message without a key"),
    ("CONSUMER_CONCURRENCY", "32", "1-10000", "records in work at once across the task's batches"),
    (
        "CONSUMER_MAX_IN_FLIGHT_PER_GROUP",
        "0 (off)",
        "0-10000",
        "standard queues: most records of one MessageGroupId in work at once",
    ),
    (
        "DEADLINE_MARGIN_MS",
        "2000",
        "100-900000",
        "the deadline guard before MESSAGE_TIMEOUT_SECONDS",
    ),
    ("RETRY_BASE_SECONDS", "10", "0-43200", "visibility backoff base; 0 disables it"),
    ("RETRY_MAX_SECONDS", "900", "up to 43200", "the backoff's cap"),
    ("METRIC_NAMESPACE", "SqsBackpressure", "a name", "namespace of the EMF metrics"),
    (
        "API_CALL_TIMEOUT_MS",
        "5000",
        "100-60000",
        "each SQS and DynamoDB call's budget, retries included",
    ),
];

/// Families whose unknown members are warned of: the prefixes of every
/// variable the worker reads.
const FAMILIES: [&str; 16] = [
    "WORKER_",
    "DOWNSTREAM_",
    "QUARANTINE_",
    "RECEIVE_",
    "VISIBILITY_",
    "HEALTH_",
    "DRAIN_",
    "CONSUMER_",
    "RETRY_",
    "DEADLINE_",
    "API_",
    "METRIC",
    "MESSAGE_",
    "QUEUE_",
    "PROTECTION_",
    "IDEMPOTENCY_",
];

/// `sqs-worker --help`.
pub fn text() -> String {
    let width = VARIABLES.iter().map(|v| v.0.len()).max().unwrap_or(0);
    let mut out = format!(
        "sqs-worker {}: the batch engine as an ECS service. It long-polls QUEUE_URL, POSTs each\n\
         work request to DOWNSTREAM_URL, quarantines permanent failures, renews leases while\n\
         messages are in work and drains on SIGTERM (a second signal cuts the drain short).\n\n\
         Usage: sqs-worker                     run, configured by the variables below\n       \
         sqs-worker healthcheck [PID]   exit 0 when a poll succeeded within HEALTH_MAX_SILENCE_SECONDS\n       \
         sqs-worker --version\n\nVariables (default; range):\n",
        env!("CARGO_PKG_VERSION")
    );
    for (name, default, range, meaning) in VARIABLES {
        out.push_str(&format!("  {name:<width$}  {meaning} ({default}; {range})\n"));
    }
    out.push_str(
        "\nAWS settings come from the standard chain (AWS_REGION, AWS_PROFILE, AWS_ENDPOINT_URL_SQS, \
         AWS_ENDPOINT_URL_DYNAMODB, \
         the task role).\nLogs: AWS_LAMBDA_LOG_FORMAT=JSON for JSON lines, RUST_LOG for levels. \
         Reference: docs/worker.md.\n",
    );
    out
}

/// The variables of the worker's families in `names` that it does not read,
/// each with the known one it most resembles.
pub fn unknown<'a>(names: impl Iterator<Item = &'a str>) -> Vec<(String, Option<&'static str>)> {
    let known = |name: &str| {
        WORKER_VARIABLES.contains(&name)
            || CONSUMER_VARIABLES.contains(&name)
            || VARIABLES.iter().any(|v| v.0 == name)
    };
    names
        .filter(|name| FAMILIES.iter().any(|f| name.starts_with(f)) && !known(name))
        .map(|name| (name.to_owned(), nearest(name)))
        .collect()
}

/// The known variable within three edits of `name`, if any.
fn nearest(name: &str) -> Option<&'static str> {
    VARIABLES
        .iter()
        .map(|v| (strsim::levenshtein(name, v.0), v.0))
        .filter(|(d, _)| *d <= 3)
        .min()
        .map(|(_, known)| known)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variable_the_worker_reads_is_in_a_family_that_is_checked() {
        // ECS_AGENT_URI is ECS's to set, with the rest of its ECS_ variables.
        for (name, ..) in VARIABLES.iter().filter(|v| v.0 != "ECS_AGENT_URI") {
            assert!(FAMILIES.iter().any(|f| name.starts_with(f)), "{name}");
        }
    }

    #[test]
    fn the_help_lists_every_variable_the_worker_reads() {
        let help = text();
        for name in WORKER_VARIABLES.iter().chain(CONSUMER_VARIABLES) {
            assert!(VARIABLES.iter().any(|v| v.0 == *name), "{name} is missing from the table");
            assert!(help.contains(name), "{name} is missing from the help");
        }
    }

    #[test]
    fn the_defaults_the_help_states_are_the_ones_the_worker_takes() {
        use backpressure_batch::config::ConsumerConfig;
        use backpressure_batch::delivery::Downstream;
        use backpressure_core::config::Vars;

        use crate::config::WorkerConfig;
        use crate::health::HealthConfig;

        let vars = Vars::new(|name: &str| match name {
            "QUEUE_URL" | "QUARANTINE_QUEUE_URL" => {
                Some("https://sqs.us-east-1.amazonaws.com/123456789012/q".to_owned())
            }
            "DOWNSTREAM_URL" => Some("http://127.0.0.1:1/work".to_owned()),
            _ => None,
        });
        let worker = WorkerConfig::from_vars(&vars).unwrap();
        let engine = ConsumerConfig::from_vars(&vars).unwrap();
        let health = HealthConfig::from_vars(&vars, 1).unwrap();
        let delivery = Downstream::from_vars(&vars).unwrap();
        assert_eq!(engine.idempotency, None, "off unless IDEMPOTENCY_TABLE is set");
        assert_eq!(engine.quarantine_max_message_bytes, None, "read from the queue");
        assert_eq!(engine.quarantine_overflow_bucket, None);
        let taken: [(&str, u128); 14] = [
            ("WORKER_POLLERS", worker.pollers as u128),
            ("WORKER_MAX_IN_FLIGHT", worker.max_in_flight as u128),
            ("RECEIVE_WAIT_SECONDS", worker.receive_wait.as_secs().into()),
            ("VISIBILITY_TIMEOUT_SECONDS", worker.visibility_timeout.as_secs().into()),
            ("MESSAGE_TIMEOUT_SECONDS", worker.message_timeout.as_secs().into()),
            ("DRAIN_SECONDS", worker.drain.as_secs().into()),
            ("PROTECTION_IDLE_SECONDS", worker.protection_idle.as_secs().into()),
            ("HEALTH_MAX_SILENCE_SECONDS", health.max_silence.as_secs().into()),
            ("DOWNSTREAM_TIMEOUT_MS", delivery.timeout.as_millis()),
            ("CONSUMER_CONCURRENCY", engine.concurrency as u128),
            ("DEADLINE_MARGIN_MS", engine.deadline_margin.as_millis()),
            ("RETRY_BASE_SECONDS", engine.backoff.base.as_secs().into()),
            ("RETRY_MAX_SECONDS", engine.backoff.max.as_secs().into()),
            ("API_CALL_TIMEOUT_MS", engine.api_call_timeout.as_millis()),
        ];
        for (name, value) in taken {
            let stated = VARIABLES.iter().find(|v| v.0 == name).map(|v| v.1);
            assert_eq!(stated, Some(value.to_string().as_str()), "{name}");
        }
        assert_eq!(engine.namespace, "SqsBackpressure");
    }

    #[test]
    fn a_misspelt_variable_is_named_with_the_one_meant() {
        let names = [
            "WORKER_POLLER",
            "DOWNSTREAM_URL",
            "QUARANTINE_QUEUE",
            "PATH",
            "WORKER_ZZZZZZZZZZ",
            "CONSUMER_CONCURENCY",
        ];
        let found = unknown(names.into_iter());
        assert_eq!(
            found,
            [
                ("WORKER_POLLER".to_owned(), Some("WORKER_POLLERS")),
                ("QUARANTINE_QUEUE".to_owned(), None),
                ("WORKER_ZZZZZZZZZZ".to_owned(), None),
                ("CONSUMER_CONCURENCY".to_owned(), Some("CONSUMER_CONCURRENCY")),
            ]
        );
    }
}
