//! Every environment variable the project's programs read, in one table: the
//! parsers take their ranges and defaults from it, `sqs-worker --help` prints
//! it, the unknown-variable warning and the template's tests check against it,
//! and the docs' tables are tested against it.

pub use super::variable::{Accepts, Reader, Unset, Variable};
use Accepts::{Decimal, Described, Whole};
use Reader::{Consumer, Publisher, Worker};
use Unset::{Off, Required, Value};

/// The CloudWatch namespace both functions publish to unless `METRIC_NAMESPACE` says otherwise.
pub const DEFAULT_NAMESPACE: &str = "SqsBackpressure";

const ENGINE: &[Reader] = &[Consumer, Worker];
const ALL: &[Reader] = &[Consumer, Worker, Publisher];
const WORKER: &[Reader] = &[Worker];
const PUBLISHER: &[Reader] = &[Publisher];

macro_rules! variables {
    ($($name:ident: $readers:expr, $unset:expr, $accepts:expr, $meaning:expr;)+) => {
        $(
            #[doc = concat!("`", stringify!($name), "`: ", $meaning, ".")]
            pub const $name: Variable = Variable {
                name: stringify!($name),
                readers: $readers,
                unset: $unset,
                accepts: $accepts,
                meaning: $meaning,
            };
        )+
        /// Every variable, in the order `sqs-worker --help` lists them.
        pub const VARIABLES: &[Variable] = &[$($name),+];
    };
}

variables! {
    QUEUE_URL: &[Worker, Publisher], Required, Described("a queue URL"),
        "the work queue";
    DOWNSTREAM_URL: ENGINE, Required, Described("an http(s) URL"),
        "where each work request is POSTed";
    QUARANTINE_QUEUE_URL: ENGINE, Required, Described("a queue URL"),
        "where permanent failures are recorded";
    WORKER_POLLERS: WORKER, Unset::Whole(2), Whole { min: 1, max: 20 },
        "long polls at once";
    WORKER_MAX_IN_FLIGHT: WORKER, Unset::Whole(100), Whole { min: 10, max: 10_000 },
        "messages received and not yet settled";
    RECEIVE_WAIT_SECONDS: WORKER, Unset::Whole(20), Whole { min: 1, max: 20 },
        "the long poll's wait";
    VISIBILITY_TIMEOUT_SECONDS: WORKER, Unset::Whole(60), Whole { min: 1, max: 43_200 },
        "the lease a receive takes, renewed while in work";
    MESSAGE_TIMEOUT_SECONDS: WORKER, Unset::Whole(900), Whole { min: 1, max: 43_200 },
        "how long one batch may work before its unfinished messages are retried";
    DRAIN_SECONDS: WORKER, Unset::Whole(90), Whole { min: 1, max: 110 },
        "after SIGTERM, how long work in flight may finish";
    ECS_AGENT_URI: WORKER, Off("set by ECS"), Described("a URL"),
        "task scale-in protection is on when set";
    PROTECTION_IDLE_SECONDS: WORKER, Unset::Whole(60), Whole { min: 1, max: 3_600 },
        "idle time before the protection is released";
    WORKER_LOG_FORMAT: WORKER, Value("text"), Described("text or json"),
        "text: lines with timestamps; json: one JSON object a line (RUST_LOG sets the levels)";
    HEALTH_FILE: WORKER, Value("/tmp/sqs-worker-<pid>.last-poll"), Described("a path"),
        "stamped after each successful poll";
    HEALTH_MAX_SILENCE_SECONDS: WORKER, Unset::Whole(120), Whole { min: 1, max: 3_600 },
        "healthcheck fails after this long without a poll";
    BODY_FORMAT: ENGINE, Value("envelope"), Described("envelope or raw"),
        "envelope: this project's work request, checked; raw: any body, POSTed unchanged";
    ENVELOPE: ENGINE, Value("none"), Described("none, sns, sns-raw, eventbridge, s3"),
        "another service's wrapper around each message (SNS, EventBridge, S3): the message inside is decoded, and forwarded";
    OFFLOADED_PAYLOADS: ENGINE, Value("off"), Described("off, read, read-and-delete"),
        "payloads an SQS or SNS Extended Client put in S3: read before use; read-and-delete also deletes each once processed";
    OFFLOADED_PAYLOAD_MAX_BYTES: ENGINE, Unset::Whole(33_554_432), Whole { min: 1, max: 2_147_483_648 },
        "the largest offloaded payload read; a larger one is quarantined";
    OFFLOADED_PAYLOAD_FIRST_BYTE_TIMEOUT_MS: ENGINE, Unset::Whole(5_000), Whole { min: 100, max: 900_000 },
        "how long an offloaded payload's first bytes may take, from the read's start; past it, only its message is retried";
    OFFLOADED_PAYLOAD_READ_TIMEOUT_MS: ENGINE, Unset::Whole(30_000), Whole { min: 100, max: 900_000 },
        "how long reading one offloaded payload whole may take, from the read's start; past it, only its message is retried";
    IDEMPOTENCY_KEY_FROM: ENGINE, Value("message-id"), Described("message-id, envelope-id, /json/pointer, attribute:NAME"),
        "raw bodies: where each message's idempotency key is";
    TENANT_FROM: ENGINE, Off("no tenant"), Described("/json/pointer, attribute:NAME"),
        "raw bodies: where each message's tenant is";
    DOWNSTREAM_TIMEOUT_MS: ENGINE, Unset::Whole(5_000), Whole { min: 1, max: 900_000 },
        "one request's budget";
    DOWNSTREAM_MAX_RPS: ENGINE, Off(""), Decimal { min: 0.001, max: 1_000_000.0 },
        "requests per second for the whole process (a function instance or a task)";
    QUARANTINE_MAX_MESSAGE_BYTES: ENGINE, Off("read from the queue"),
        Whole { min: 1_024, max: 1_048_576 },
        "overrides the quarantine queue's MaximumMessageSize";
    QUARANTINE_OVERFLOW_BUCKET: ENGINE, Off(""), Described("an S3 bucket name"),
        "bodies of records too large for the quarantine queue go here";
    IDEMPOTENCY_TABLE: ENGINE, Off(""), Described("a DynamoDB table"),
        "claims each idempotency key before work";
    IDEMPOTENCY_REDIS_URL: ENGINE, Off(""), Described("a redis:// or rediss:// URL"),
        "claims each idempotency key in Redis or Valkey instead (not with IDEMPOTENCY_TABLE)";
    IDEMPOTENCY_KEY_PREFIX: ENGINE, Off(""), Described("up to 256 bytes"),
        "put before every idempotency key, so several consumers can share one store";
    IDEMPOTENCY_TTL_SECONDS: ENGINE, Unset::Whole(3_600), Whole { min: 60, max: 31_536_000 },
        "how long a completed key is remembered";
    IDEMPOTENCY_MISSING_KEY: ENGINE, Value("process"), Described("process, quarantine"),
        "a message without a key";
    CONSUMER_CONCURRENCY: ALL, Unset::Whole(32), Whole { min: 1, max: 10_000 },
        "records in work at once across the process's batches (the publisher's load: slots per task)";
    CONSUMER_MAX_IN_FLIGHT_PER_GROUP: ENGINE, Unset::Whole(0), Whole { min: 0, max: 10_000 },
        "standard queues: most records of one MessageGroupId in work at once; 0 turns it off";
    DEADLINE_MARGIN_MS: ENGINE, Unset::Whole(2_000), Whole { min: 100, max: 900_000 },
        "the deadline guard before the invocation's end or MESSAGE_TIMEOUT_SECONDS";
    RETRY_BASE_SECONDS: ENGINE, Unset::Whole(10), Whole { min: 0, max: 43_200 },
        "visibility backoff base, at most RETRY_MAX_SECONDS; 0 disables it";
    RETRY_MAX_SECONDS: ENGINE, Unset::Whole(900), Whole { min: 0, max: 43_200 },
        "the backoff's cap";
    METRIC_NAMESPACE: ALL, Value(DEFAULT_NAMESPACE), Described("a name not starting AWS/"),
        "namespace of the metrics";
    API_CALL_TIMEOUT_MS: ALL, Unset::Whole(5_000), Whole { min: 100, max: 60_000 },
        "each AWS call's budget, retries included";
    ECS_CLUSTER_NAME: PUBLISHER, Off(""), Described("a name or ARN"),
        "the cluster of the one target's service";
    ECS_SERVICE_NAME: PUBLISHER, Off(""), Described("a name or ARN"),
        "the ECS service that drains QUEUE_URL";
    TARGETS: PUBLISHER, Off(""), Described("a JSON array of targets"),
        "several targets instead of QUEUE_URL, ECS_CLUSTER_NAME and ECS_SERVICE_NAME";
    TARGET_BACKLOG_PER_TASK: PUBLISHER, Off(""), Decimal { min: 0.001, max: 1_000_000_000.0 },
        "the scaling policy's target: acceptable backlog per task";
    ACCEPTABLE_LATENCY_SECONDS: PUBLISHER, Off(""), Described("a positive number"),
        "with AVG_PROCESSING_SECONDS, the target is latency ÷ processing time";
    AVG_PROCESSING_SECONDS: PUBLISHER, Off(""), Decimal { min: 0.001, max: 43_200.0 },
        "mean seconds a message takes";
    STORAGE_RESOLUTION: PUBLISHER, Value("60"), Described("60 or 1"),
        "CloudWatch's standard or high-resolution metrics";
    BACKLOG_INCLUDES: PUBLISHER, Value("visible"), Described("visible[,inflight][,delayed]"),
        "which messages count as backlog";
    TASK_COUNT: PUBLISHER, Value("running"), Described("running, running+pending, desired"),
        "the denominator";
    SAMPLES_PER_INVOCATION: PUBLISHER, Unset::Whole(1), Whole { min: 1, max: 60 },
        "samples per scheduled invocation";
    SAMPLE_INTERVAL_SECONDS: PUBLISHER, Off("required when sampling more than once"),
        Whole { min: 1, max: 60 },
        "seconds between samples";
    TARGET_LOAD_PERCENT: PUBLISHER, Off(""), Decimal { min: 1.0, max: 1_000.0 },
        "turns on ScalingLoad: the target tracking policy's target";
    LOAD_DRAIN_SECONDS: PUBLISHER, Unset::Whole(240), Decimal { min: 1.0, max: 43_200.0 },
        "ScalingLoad counts the slots that drain the visible backlog within this time";
    LOAD_HOLD_SECONDS: PUBLISHER, Unset::Whole(1_800), Decimal { min: 0.0, max: 43_200.0 },
        "ScalingLoad holds one task until no work has been seen for this long";
}

/// The variables `reader` reads, in the table's order.
pub fn read_by(reader: Reader) -> impl Iterator<Item = &'static Variable> {
    VARIABLES.iter().filter(move |variable| variable.is_read_by(reader))
}

/// The variable called `name`, if the table has it.
pub fn named(name: &str) -> Option<&'static Variable> {
    VARIABLES.iter().find(|variable| variable.name == name)
}

/// The names among `names` that `reader` does not read but looks like it
/// would, each with the variable it most likely meant: a typo must not fall
/// back to a default silently. Those are the names of a family it reads (a
/// family is a name up to its first `_`: `WORKER_`, `QUARANTINE_`), and any
/// name one edit away from one it reads (`ENVELOP`); those a platform sets
/// (ECS's `ECS_*`) are left alone.
pub fn unknown<'a>(
    reader: Reader,
    names: impl Iterator<Item = &'a str>,
) -> Vec<(String, Option<&'static str>)> {
    let read = || read_by(reader);
    let in_family = |name: &str| {
        read()
            .filter(|variable| !matches!(variable.unset, Off("set by ECS")))
            .any(|variable| name.starts_with(variable.family()))
    };
    let one_edit_away =
        |name: &str| read().any(|variable| strsim::levenshtein(name, variable.name) == 1);
    names
        .filter(|name| {
            (in_family(name) || one_edit_away(name))
                && !read().any(|variable| variable.name == *name)
        })
        .map(|name| (name.to_owned(), nearest(reader, name)))
        .collect()
}

/// The variable `reader` reads that `name` most likely means: the only one
/// it begins (a dropped suffix, `VISIBILITY_TIMEOUT`), or the nearest within
/// three edits.
fn nearest(reader: Reader, name: &str) -> Option<&'static str> {
    let mut longer = read_by(reader).filter(|variable| variable.name.starts_with(name));
    if let (Some(only), None) = (longer.next(), longer.next()) {
        return Some(only.name);
    }
    read_by(reader)
        .map(|variable| (strsim::levenshtein(name, variable.name), variable.name))
        .filter(|(distance, _)| *distance <= 3)
        .min()
        .map(|(_, known)| known)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_defaults_within_their_ranges() {
        for (index, variable) in VARIABLES.iter().enumerate() {
            assert!(
                VARIABLES[..index].iter().all(|earlier| earlier.name != variable.name),
                "{} is listed twice",
                variable.name
            );
            assert!(!variable.readers.is_empty(), "{} has no reader", variable.name);
            if let Unset::Whole(default) = variable.unset {
                let (min, max) = variable.decimal_range();
                assert!((min..=max).contains(&(default as f64)), "{}", variable.name);
            }
        }
    }

    #[test]
    fn each_program_reads_its_own() {
        let count = |reader| read_by(reader).count();
        assert_eq!((count(Consumer), count(Worker), count(Publisher)), (26, 38, 18));
        assert_eq!(named("CONSUMER_CONCURRENCY").map(|v| v.readers), Some(ALL));
        assert_eq!(named("CONSUMER_CONCURENCY"), None);
        assert_eq!(CONSUMER_MAX_IN_FLIGHT_PER_GROUP.family(), "CONSUMER_");
        assert_eq!(QUARANTINE_MAX_MESSAGE_BYTES.default_text(), "unset (read from the queue)");
        assert_eq!(DOWNSTREAM_MAX_RPS.accepts_text(), "0.001-1000000");
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
            "VISIBILITY_TIMEOUT",
            "ECS_CONTAINER_METADATA_URI_V4",
            "ENVELOP",
            "ENVELOPES",
            "HOME",
        ];
        assert_eq!(
            unknown(Worker, names.into_iter()),
            [
                ("WORKER_POLLER".to_owned(), Some("WORKER_POLLERS")),
                ("QUARANTINE_QUEUE".to_owned(), Some("QUARANTINE_QUEUE_URL")),
                ("WORKER_ZZZZZZZZZZ".to_owned(), None),
                ("CONSUMER_CONCURENCY".to_owned(), Some("CONSUMER_CONCURRENCY")),
                ("VISIBILITY_TIMEOUT".to_owned(), Some("VISIBILITY_TIMEOUT_SECONDS")),
                ("ENVELOP".to_owned(), Some("ENVELOPE")),
                ("ENVELOPES".to_owned(), Some("ENVELOPE")),
            ]
        );
        let publisher = ["TARGET_LOAD_PERCNT", "SAMPLE_INTERVAL_SECOND", "LOAD_HOLD_SECONDS"];
        assert_eq!(
            unknown(Publisher, publisher.into_iter()),
            [
                ("TARGET_LOAD_PERCNT".to_owned(), Some("TARGET_LOAD_PERCENT")),
                ("SAMPLE_INTERVAL_SECOND".to_owned(), Some("SAMPLE_INTERVAL_SECONDS")),
            ]
        );
    }
}
