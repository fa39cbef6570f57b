//! What a worker built on [`crate::run_worker`] answers to `--help`: how it
//! is run, and every variable it reads, with its default and range, from the
//! table the parsers read.

use backpressure_core::config::variables::{
    BODY_FORMAT, DOWNSTREAM_MAX_RPS, DOWNSTREAM_TIMEOUT_MS, DOWNSTREAM_URL, IDEMPOTENCY_KEY_FROM,
    Reader, TENANT_FROM, Variable, read_by,
};

/// The forwarder's own settings: sqs-worker reads them, a worker with its own processor does not.
const FORWARDER_ONLY: [Variable; 6] = [
    DOWNSTREAM_URL,
    DOWNSTREAM_TIMEOUT_MS,
    DOWNSTREAM_MAX_RPS,
    BODY_FORMAT,
    IDEMPOTENCY_KEY_FROM,
    TENANT_FROM,
];

/// Every variable `run_worker` reads, in the table's order.
pub(crate) fn variables() -> impl Iterator<Item = &'static Variable> {
    read_by(Reader::Worker).filter(|v| FORWARDER_ONLY.iter().all(|own| own.name != v.name))
}

/// `<name> --help`.
pub(crate) fn text(name: &str, version: &str) -> String {
    let width = variables().map(|v| v.name.len()).max().unwrap_or(0);
    let mut out = format!(
        "{name} {version}: an SQS worker (backpressure-app's run_worker). It long-polls \
         QUEUE_URL, hands each\nmessage to its processor, quarantines permanent failures in \
         QUARANTINE_QUEUE_URL, renews leases\nwhile messages are in work and drains on SIGTERM \
         or SIGINT, exit 0.\n\n\
         Usage: {name}                     run, configured by the variables below\n       \
         {name} healthcheck [PID]   exit 0 when a poll succeeded within \
         HEALTH_MAX_SILENCE_SECONDS: the stamp\n       {pad}                     of process PID \
         (1, the container's first, by default), or HEALTH_FILE\n       \
         {name} --help | --version\n\n\
         Variables [default; accepted values]:\n",
        pad = " ".repeat(name.len()),
    );
    for variable in variables() {
        let (variable_name, meaning) = (variable.name, variable.meaning);
        let (default, accepts) = (variable.default_text(), variable.accepts_text());
        out.push_str(&format!("  {variable_name:<width$}  {meaning} [{default}; {accepts}]\n"));
    }
    out.push_str(
        "\nAWS settings come from the standard chain (AWS_REGION, AWS_PROFILE, AWS_ENDPOINT_URL_SQS, \
         AWS_ENDPOINT_URL_DYNAMODB, the task role).\nLogs: text with timestamps on stdout, or JSON lines with \
         WORKER_LOG_FORMAT=json; RUST_LOG sets the levels.\n",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_help_lists_what_the_worker_reads_and_not_the_forwarders_settings() {
        let help = text("thumbnails", "1.0");
        for variable in variables() {
            assert!(help.contains(variable.name), "{} is missing", variable.name);
        }
        for forwarder in FORWARDER_ONLY {
            assert!(!help.contains(forwarder.name), "{} is the forwarder's", forwarder.name);
        }
        for needed in ["QUEUE_URL", "QUARANTINE_QUEUE_URL", "HEALTH_FILE", "healthcheck [PID]"] {
            assert!(help.contains(needed), "{needed}");
        }
        assert!(help.starts_with("thumbnails 1.0: "), "{help}");
    }
}
