//! [`WorkerBuilder`]: a worker's settings, and what it reaches before its
//! first poll.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use aws_sdk_sqs::Client;
use backpressure_core::config::margin_leaves_time;
use backpressure_core::config::variables::{
    MESSAGE_TIMEOUT_SECONDS, RECEIVE_WAIT_SECONDS, VISIBILITY_TIMEOUT_SECONDS, Variable,
    WORKER_MAX_IN_FLIGHT, WORKER_POLLERS,
};
use backpressure_core::error::ApiError;
use backpressure_core::queue::QueueRef;

use crate::body::Body;
use crate::builder::{BuildError, Builder};
use crate::processor::Processor;
use crate::quarantine::QuarantineStore;
use crate::worker::health::{Stamp, default_health_file};
use crate::worker::leases::Leases;
use crate::worker::protection::Protection;
use crate::worker::queue::WorkQueue;
use crate::worker::runtime::Worker;
use crate::worker::settings::Settings;

/// Why a worker cannot start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WorkerError {
    /// A setting is out of its range; the message names it and the value.
    #[error("{0}")]
    Setting(String),
    /// The batch processor's settings cannot work.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// The work queue cannot be read (its ARN, at start-up).
    #[error("cannot read the work queue {queue}")]
    Queue {
        /// The queue's URL.
        queue: String,
        /// Why.
        #[source]
        source: ApiError,
    },
    /// The ECS agent's URI (`ECS_AGENT_URI`) does not make a URL.
    #[error("ECS_AGENT_URI={0:?} does not make a valid URL")]
    AgentUri(String),
}

/// Builds a [`Worker`]; see [`Worker::builder`].
#[derive(Debug)]
pub struct WorkerBuilder<P, Q, B> {
    batch: Builder<P, Q, B>,
    sqs: Client,
    queue: QueueRef,
    settings: Settings,
    api_call_timeout: Duration,
    protection: Option<(String, Duration)>,
    health_file: PathBuf,
}

impl<P, Q, B> Worker<P, Q, B> {
    /// A worker receiving from `queue` with `sqs`, each received batch run by
    /// `batch` (its quarantine, idempotency, concurrency, backoff and metrics
    /// namespace as set there). The defaults: 2 pollers, 100
    /// messages in flight, 20 s long polls, a 60 s visibility timeout renewed
    /// while a message is in work, 900 s for a batch, a 90 s drain, no task
    /// protection, the health stamp in the temporary directory.
    pub fn builder(
        batch: Builder<P, Q, B>,
        sqs: Client,
        queue: QueueRef,
    ) -> WorkerBuilder<P, Q, B> {
        WorkerBuilder {
            batch,
            sqs,
            settings: Settings {
                queue_name: queue.name().to_owned(),
                pollers: 2,
                max_in_flight: 100,
                receive_wait: Duration::from_secs(20),
                visibility_timeout: Duration::from_secs(60),
                message_timeout: Duration::from_secs(900),
                drain: Duration::from_secs(90),
            },
            queue,
            api_call_timeout: Duration::from_secs(10),
            protection: None,
            health_file: default_health_file(std::process::id()),
        }
    }
}

impl<P, Q, B> WorkerBuilder<P, Q, B> {
    /// `ReceiveMessage` long polls at once (1–20).
    pub fn pollers(mut self, pollers: usize) -> Self {
        self.settings.pollers = pollers;
        self
    }

    /// Messages received and not yet settled (10–10,000): no receive while
    /// it is reached, so memory stays bounded.
    pub fn max_in_flight(mut self, max_in_flight: usize) -> Self {
        self.settings.max_in_flight = max_in_flight;
        self
    }

    /// A long poll's wait (1–20 s).
    pub fn receive_wait(mut self, wait: Duration) -> Self {
        self.settings.receive_wait = wait;
        self
    }

    /// The lease a receive takes (1 s–12 h), renewed by the heartbeat while
    /// the message is in work; an idempotency claim is leased as long.
    pub fn visibility_timeout(mut self, visibility: Duration) -> Self {
        self.settings.visibility_timeout = visibility;
        self
    }

    /// How long one received batch may work before its unfinished messages
    /// are retried; above the batch processor's deadline margin.
    pub fn message_timeout(mut self, timeout: Duration) -> Self {
        self.settings.message_timeout = timeout;
        self
    }

    /// After the first SIGTERM or SIGINT, how long the work in hand may
    /// finish (below the container's `stopTimeout`: 120 s at most on Fargate).
    pub fn drain(mut self, drain: Duration) -> Self {
        self.settings.drain = drain;
        self
    }

    /// The budget of one SQS call (deletes, visibility changes; a receive
    /// gets it on top of its wait).
    pub fn api_call_timeout(mut self, timeout: Duration) -> Self {
        self.api_call_timeout = timeout;
        self
    }

    /// ECS task scale-in protection through the container agent at
    /// `agent_uri` (ECS sets `ECS_AGENT_URI`): protected while messages are
    /// in work, released after `idle` without any.
    pub fn task_protection(mut self, agent_uri: impl Into<String>, idle: Duration) -> Self {
        self.protection = Some((agent_uri.into(), idle));
        self
    }

    /// The file stamped after every successful poll, for [`super::health_check`].
    pub fn health_file(mut self, file: impl Into<PathBuf>) -> Self {
        self.health_file = file.into();
        self
    }
}

impl<B, P, Q> WorkerBuilder<P, Q, B>
where
    B: Body + 'static,
    P: Processor<B> + 'static,
    Q: QuarantineStore + 'static,
{
    /// Checks the settings, reads the work queue's ARN (a task that cannot
    /// reach its queue stops now, not at its first poll) and builds the
    /// worker. Retried FIFO messages go back at once: the worker holds a
    /// group only while a batch of it is in work.
    pub async fn build(self) -> Result<Worker<P, Q, B>, WorkerError> {
        let Self { batch, sqs, queue, settings, api_call_timeout, protection, health_file } = self;
        check(&settings, batch.margin())?;
        let namespace = batch.namespace().map(str::to_owned);
        // One table for each message's visibility lease and the claim held on it.
        let leases = Arc::new(Leases::new(settings.visibility_timeout));
        let batch = batch
            .fifo_retries_at_once(sqs.clone())
            .claims_renewed(settings.visibility_timeout, leases.clone())
            .build()?;
        // Protected for longer than one batch may work and hold its lease.
        let horizon = settings.message_timeout + settings.visibility_timeout;
        let protection =
            protection.map(|(uri, idle)| Protection::new(&uri, horizon, idle)).transpose()?;
        let (wait, visibility) = (settings.receive_wait, settings.visibility_timeout);
        let work_queue = WorkQueue::connect(sqs, &queue, wait, visibility, api_call_timeout)
            .await
            .map_err(|source| WorkerError::Queue { queue: queue.url().to_owned(), source })?;
        let health = Stamp::new(&health_file);
        Ok(Worker::new(work_queue, batch, leases, settings, protection, health, namespace))
    }
}

/// Every setting in its range, or the first that is not. The ranges are the
/// variable table's, where `run_worker` reads the same settings.
fn check(settings: &Settings, margin: Duration) -> Result<(), WorkerError> {
    let out = |what: &str, value: String, range: String| {
        Err(WorkerError::Setting(format!("{what} {value} is out of range: give {range}")))
    };
    let count = |what: &str, value: usize, variable: &Variable| {
        let (low, high) = variable.whole_range();
        match (low..=high).contains(&(value as u64)) {
            true => Ok(()),
            false => out(what, value.to_string(), format!("{low} to {high}")),
        }
    };
    let seconds = |what: &str, value: Duration, variable: &Variable| {
        let (low, high) = variable.whole_range();
        let range = Duration::from_secs(low)..=Duration::from_secs(high);
        match range.contains(&value) {
            true => Ok(()),
            false => out(what, format!("{} s", value.as_secs_f64()), format!("{low} to {high} s")),
        }
    };
    count("pollers", settings.pollers, &WORKER_POLLERS)?;
    count("max_in_flight", settings.max_in_flight, &WORKER_MAX_IN_FLIGHT)?;
    seconds("receive_wait", settings.receive_wait, &RECEIVE_WAIT_SECONDS)?;
    seconds("visibility_timeout", settings.visibility_timeout, &VISIBILITY_TIMEOUT_SECONDS)?;
    seconds("message_timeout", settings.message_timeout, &MESSAGE_TIMEOUT_SECONDS)?;
    // Beyond the template's 110 s (ECS's stop timeout), a service of one's own may drain longer.
    if settings.drain.is_zero() {
        return out("drain", "0 s".to_owned(), "at least 1 s".to_owned());
    }
    margin_leaves_time(margin, settings.message_timeout).map_err(WorkerError::Setting)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defaults() -> Settings {
        Settings {
            queue_name: "work".to_owned(),
            pollers: 2,
            max_in_flight: 100,
            receive_wait: Duration::from_secs(20),
            visibility_timeout: Duration::from_secs(60),
            message_timeout: Duration::from_secs(900),
            drain: Duration::from_secs(90),
        }
    }

    #[test]
    fn a_setting_out_of_range_is_named_with_its_value() {
        let margin = Duration::from_secs(2);
        assert!(check(&defaults(), margin).is_ok());
        type Change = fn(&mut Settings);
        let cases: [(Change, &str); 5] = [
            (|s| s.pollers = 21, "pollers 21 is out of range: give 1 to 20"),
            (|s| s.max_in_flight = 5, "max_in_flight 5 is out of range"),
            (|s| s.receive_wait = Duration::from_secs(21), "receive_wait 21 s is out of range"),
            (|s| s.drain = Duration::ZERO, "drain 0 s is out of range"),
            (
                |s| s.message_timeout = Duration::from_secs(2),
                "the deadline margin (2 s) must be below",
            ),
        ];
        for (change, expected) in cases {
            let mut settings = defaults();
            change(&mut settings);
            let error = check(&settings, margin).unwrap_err().to_string();
            assert!(error.starts_with(expected), "{error}");
        }
    }
}
