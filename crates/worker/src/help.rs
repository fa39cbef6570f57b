//! What `sqs-worker --help` prints: every variable the worker reads, with its
//! default and range, from the table the parsers read.

use backpressure_core::config::variables::{Reader, Variable, read_by};

/// Every variable the worker reads, in the order of the help.
fn variables() -> impl Iterator<Item = &'static Variable> {
    read_by(Reader::Worker)
}

/// `sqs-worker --help`.
pub fn text() -> String {
    let width = variables().map(|v| v.name.len()).max().unwrap_or(0);
    let mut out = format!(
        "sqs-worker {}: the batch engine as an ECS service. It long-polls QUEUE_URL, POSTs each\n\
         work request (BODY_FORMAT=raw: each body as it is) to DOWNSTREAM_URL, quarantines\n\
         permanent failures, renews leases while\n\
         messages are in work and drains on SIGTERM or SIGINT, exit 0. A second signal cuts the\n\
         drain short: the messages in work are released at once, the receive under way is waited\n\
         for, exit 0. A third ends that wait: exit 1.\n\n\
         Usage: sqs-worker                     run, configured by the variables below\n       \
         sqs-worker healthcheck [PID]   exit 0 when a poll succeeded within HEALTH_MAX_SILENCE_SECONDS: the stamp\n                                      of process PID (1, the container's first, by default), or HEALTH_FILE\n       \
         sqs-worker --version\n\nOn a task definition of your own, set the container's stopTimeout above \
         DRAIN_SECONDS\n(ECS's default is 30 s, Fargate's most 120 s), or ECS kills the task mid-drain.\n\nVariables [default; accepted values]:\n",
        env!("CARGO_PKG_VERSION")
    );
    for variable in variables() {
        let (name, meaning) = (variable.name, variable.meaning);
        let (default, accepts) = (variable.default_text(), variable.accepts_text());
        out.push_str(&format!("  {name:<width$}  {meaning} [{default}; {accepts}]\n"));
    }
    out.push_str(
        "\nAWS settings come from the standard chain (AWS_REGION, AWS_PROFILE, AWS_ENDPOINT_URL_SQS, \
         AWS_ENDPOINT_URL_DYNAMODB, \
         the task role).\nLogs: text with timestamps on stdout, or JSON lines with \
         WORKER_LOG_FORMAT=json; RUST_LOG sets the levels (info by default). Reference: \
         docs/worker.md.\n",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_help_lists_every_variable_the_worker_reads_in_families_that_are_checked() {
        let help = text();
        let families: Vec<&str> = variables().map(Variable::family).collect();
        assert_eq!(families.len(), 38);
        for variable in variables() {
            assert!(help.contains(variable.name), "{} is missing from the help", variable.name);
        }
    }

    #[test]
    fn the_defaults_the_help_states_are_the_ones_the_worker_takes() {
        use backpressure_app::config::ConsumerConfig;
        use backpressure_app::delivery::Downstream;
        use backpressure_core::config::Vars;

        use backpressure_app::HealthConfig;
        use backpressure_app::worker_config::WorkerConfig;

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
            let stated = variables().find(|v| v.name == name).map(Variable::default_text);
            assert_eq!(stated, Some(value.to_string()), "{name}");
        }
        assert_eq!(engine.namespace, "SqsBackpressure");
    }
}
