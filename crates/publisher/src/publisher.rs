//! One scheduled invocation: take the configured samples, publish each as it
//! is taken, and fail honestly when a target could not be read or a sample
//! could not be published.

use backpressure_core::sync::lock;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use crate::load::LoadMemory;
use crate::services::MetricSink;
use crate::{BacklogSample, PublisherConfig, Sampling, Target, metrics};
use backpressure_core::error::{ApiError, error_chain};
use serde::Serialize;
use tokio::time::{Instant, sleep_until, timeout};
use tracing::{debug, error, info, warn};

use crate::aws::{EcsServices, SqsQueues};
use crate::collect::{DeadLetterError, TargetError, TargetReading, read_targets};

/// Time kept free before the invocation's deadline, so the function always
/// returns its own answer instead of being cut off by a Lambda timeout.
pub const DEADLINE_MARGIN: Duration = Duration::from_millis(500);

#[derive(Debug)]
pub struct Publisher<M> {
    config: PublisherConfig,
    queues: SqsQueues,
    services: EcsServices,
    metrics: M,
    /// Each target's [`LoadMemory`], kept across the invocations this
    /// execution environment serves, on a clock that starts with it.
    load: Mutex<Vec<LoadMemory>>,
    clock: Instant,
}

/// The successful output: the last published figures of every target.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub samples: u32,
    pub targets: Vec<TargetSummary>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetSummary {
    pub queue_name: String,
    pub cluster: String,
    pub service: String,
    pub backlog: u64,
    pub task_count: u64,
    pub backlog_per_task: f64,
    pub desired_tasks: Option<u64>,
    pub in_flight: u64,
    pub delayed: u64,
    pub in_flight_cap_utilization: f64,
    pub dlq_backlog: Option<u64>,
    pub scaling_load: Option<f64>,
}

impl TargetSummary {
    fn new(target: &Target, sample: &BacklogSample) -> Self {
        Self {
            queue_name: target.queue.name().to_owned(),
            cluster: target.cluster_name().to_owned(),
            service: target.service_name().to_owned(),
            backlog: sample.backlog,
            task_count: sample.task_count,
            backlog_per_task: sample.backlog_per_task,
            desired_tasks: sample.desired_tasks,
            in_flight: sample.queue.in_flight,
            delayed: sample.queue.delayed,
            in_flight_cap_utilization: sample.in_flight_cap_utilization,
            dlq_backlog: sample.dlq_backlog,
            scaling_load: sample.scaling_load,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum InvocationError {
    /// Raised after every other target has been published.
    #[error("{failed} of {total} targets were not published: {details}")]
    TargetsNotPublished { failed: usize, total: usize, details: String },
    #[error("publishing sample {sample} failed")]
    Publish {
        sample: u32,
        #[source]
        source: ApiError,
    },
    /// Every target's scaling figures were published, but a dead-letter
    /// queue could not be read: `DlqBacklog` is missing for those targets.
    #[error("{failed} of {total} targets have no DlqBacklog: {details}")]
    DeadLetterQueueUnreadable { failed: usize, total: usize, details: String },
    #[error("sample {sample} could not finish before the invocation's deadline; {}",
        match published_requests {
            0 => "none of it was published".to_owned(),
            n => format!("{n} of its PutMetricData requests had been accepted, the rest not"),
        })]
    Deadline { sample: u32, published_requests: usize },
}

impl InvocationError {
    pub fn error_type(&self) -> &'static str {
        match self {
            Self::TargetsNotPublished { .. } => "TargetsNotPublished",
            Self::Publish { .. } => "PutMetricDataFailed",
            Self::DeadLetterQueueUnreadable { .. } => "DeadLetterQueueUnreadable",
            Self::Deadline { .. } => "DeadlineReached",
        }
    }
}

/// "target: error chain" for every target with an error.
fn failure_details<E: std::error::Error + 'static>(
    targets: &[Target],
    failures: &[Option<E>],
) -> Vec<String> {
    targets
        .iter()
        .zip(failures)
        .filter_map(|(target, failure)| {
            Some(format!("{target}: {}", error_chain(failure.as_ref()?)))
        })
        .collect()
}

type SampleResult = Result<(BacklogSample, Option<DeadLetterError>), TargetError>;

impl<M: MetricSink> Publisher<M> {
    pub fn new(
        config: PublisherConfig,
        queues: SqsQueues,
        services: EcsServices,
        metrics: M,
    ) -> Self {
        let load = Mutex::new(vec![LoadMemory::default(); config.targets.len()]);
        Self { config, queues, services, metrics, load, clock: Instant::now() }
    }

    pub fn config(&self) -> &PublisherConfig {
        &self.config
    }

    /// Takes the configured samples, `interval` apart, and stops early rather
    /// than run into `deadline`.
    pub async fn run(&self, deadline: Instant) -> Result<Summary, InvocationError> {
        let Sampling { samples, interval } = self.config.sampling;
        let targets = &self.config.targets;
        let mut last: Vec<Option<TargetSummary>> = vec![None; targets.len()];
        let mut failures: Vec<Option<TargetError>> = vec![None; targets.len()];
        let mut dead_letter_failures: Vec<Option<DeadLetterError>> = vec![None; targets.len()];
        let (start, mut longest, mut taken) = (Instant::now(), Duration::ZERO, 0);

        for index in 0..samples {
            let due = start + interval * index;
            if index > 0 && due + longest + DEADLINE_MARGIN > deadline {
                warn!(
                    taken,
                    planned = samples,
                    "stopping sampling early: the next sample would run into the deadline"
                );
                break;
            }
            sleep_until(due).await;
            let started = Instant::now();
            let budget =
                deadline.saturating_duration_since(started).saturating_sub(DEADLINE_MARGIN);
            if budget.is_zero() {
                return Err(InvocationError::Deadline { sample: index, published_requests: 0 });
            }
            let published = AtomicUsize::new(0);
            let results =
                timeout(budget, self.sample(index, &published)).await.map_err(|_| {
                    InvocationError::Deadline {
                        sample: index,
                        published_requests: published.load(Ordering::Relaxed),
                    }
                })??;
            longest = longest.max(started.elapsed());
            taken += 1;
            for (slot, (target, result)) in targets.iter().zip(results).enumerate() {
                match result {
                    Ok((sample, dead_letter_error)) => {
                        last[slot] = Some(TargetSummary::new(target, &sample));
                        if dead_letter_error.is_some() {
                            dead_letter_failures[slot] = dead_letter_error;
                        }
                    }
                    Err(error) => failures[slot] = Some(error),
                }
            }
        }

        let failed = failure_details(targets, &failures);
        if !failed.is_empty() {
            return Err(InvocationError::TargetsNotPublished {
                failed: failed.len(),
                total: targets.len(),
                details: failed.join("; "),
            });
        }
        let without_dlq = failure_details(targets, &dead_letter_failures);
        if !without_dlq.is_empty() {
            return Err(InvocationError::DeadLetterQueueUnreadable {
                failed: without_dlq.len(),
                total: targets.len(),
                details: without_dlq.join("; "),
            });
        }
        Ok(Summary { samples: taken, targets: last.into_iter().flatten().collect() })
    }

    /// Each target's sample from its reads, the load from its memory.
    fn compute(
        &self,
        readings: Vec<Result<TargetReading, TargetError>>,
        at: f64,
    ) -> Vec<SampleResult> {
        let targets = &self.config.targets;
        // A poisoned lock only means another sample panicked; the memories stay valid.
        let mut memories = lock(&self.load);
        targets
            .iter()
            .zip(readings)
            .zip(memories.iter_mut())
            .map(|((target, reading), memory)| {
                reading.map(|TargetReading { readings, dead_letter_error }| {
                    let mut sample = self.config.policy.sample(
                        readings,
                        target.queue.kind(),
                        target.backlog_target,
                    );
                    // Only a target whose reads all succeeded is remembered.
                    sample.scaling_load = self.config.load.map(|settings| {
                        memory.observe(
                            at,
                            readings.queue,
                            self.config.policy.includes,
                            sample.task_count,
                            settings,
                        )
                    });
                    (sample, dead_letter_error)
                })
            })
            .collect()
    }

    /// Reads every target, publishes the readable ones in one `PutMetricData`
    /// call (more only past 1,000 datums), and returns each target's result.
    /// `published` counts the requests accepted so far, for a deadline report.
    async fn sample(
        &self,
        index: u32,
        published: &AtomicUsize,
    ) -> Result<Vec<SampleResult>, InvocationError> {
        let timestamp = SystemTime::now();
        let targets = &self.config.targets;
        let readings = read_targets(&self.queues, &self.services, targets).await;
        let at = self.clock.elapsed().as_secs_f64();
        let results = self.compute(readings, at);

        let mut datums = Vec::new();
        for (target, result) in targets.iter().zip(&results) {
            match result {
                Ok((sample, dead_letter_error)) => {
                    if let Some(error) = dead_letter_error {
                        error!(
                            sample = index,
                            queue = target.queue.name(),
                            dead_letter_queue_arn = error.arn().unwrap_or("unknown"),
                            error = %error_chain(error),
                            "DlqBacklog not published: the dead-letter queue could not be read; \
                             the scaling figures are published"
                        );
                    }
                    debug!(
                        sample = index,
                        queue = target.queue.name(),
                        cluster = %target.cluster,
                        service = %target.service,
                        backlog = sample.backlog,
                        task_count = sample.task_count,
                        backlog_per_task = sample.backlog_per_task,
                        scaling_load = sample.scaling_load,
                        "target read"
                    );
                    datums.extend(metrics::datums(target, sample, timestamp));
                }
                Err(error) => error!(
                    sample = index,
                    queue = target.queue.name(),
                    cluster = %target.cluster,
                    service = %target.service,
                    error = %error_chain(error),
                    "target not published: its reads failed"
                ),
            }
        }
        for request in metrics::requests(&datums) {
            self.metrics
                .put_metric_data(request)
                .await
                .map_err(|source| InvocationError::Publish { sample: index, source })?;
            published.fetch_add(1, Ordering::Relaxed);
        }
        info!(
            sample = index,
            published = results.iter().filter(|r| r.is_ok()).count(),
            failed = results.iter().filter(|r| r.is_err()).count(),
            datums = datums.len(),
            "sample published"
        );
        Ok(results)
    }
}
