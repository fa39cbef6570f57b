//! What a run is told: the trace, the queue, the workers, the publisher,
//! Application Auto Scaling and the objective, at the template's defaults
//! unless changed.

use backlog_publisher::BacklogTarget;
use backlog_publisher::backlog::BacklogPolicy;
use backlog_publisher::load::LoadSettings;

use crate::defaults;
use crate::random::ServiceTime;
use crate::sim::autoscaling::{ScalingConfig, ZeroCapacity};
use crate::sim::fleet::WorkerModel;
use crate::sim::policy::Policy;
use crate::sim::publisher::PublisherModel;
use crate::sim::queue::QueueModel;
use crate::trace::{ServiceShape, Trace};

/// Mean seconds from launch to running of a Fargate task pulling the
/// worker's image: the planner's default `--startup-seconds`.
pub const FARGATE_STARTUP: f64 = 57.0;

/// The latency objective.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Slo {
    /// Longest acceptable wait, seconds.
    pub latency_seconds: u64,
    /// Fraction of messages that must wait no longer (0.99: p99 ≤ latency).
    pub quantile: f64,
}

/// Everything a run needs besides the policy.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// Arrivals per second.
    pub trace: Trace,
    /// Tasks running at second 0.
    pub initial_tasks: u64,
    /// Seeds every random draw.
    pub seed: u64,
    /// Seconds simulated after the trace ends, so a backlog can drain.
    pub tail_seconds: u64,
    /// The queue.
    pub queue: QueueModel,
    /// The workers.
    pub workers: WorkerModel,
    /// The publisher.
    pub publisher: PublisherModel,
    /// Application Auto Scaling (target, min, max, cooldowns).
    pub scaling: ScalingConfig,
    /// The objective.
    pub slo: Slo,
    /// The Lambda consumer, for `--consumer lambda` runs ([`crate::lambda::run::run`]).
    pub lambda: crate::lambda::LambdaModel,
}

impl Scenario {
    /// The template's defaults ([`crate::defaults`]: 0 to 10 tasks, 32
    /// messages at once per task, cooldowns as deployed, `rate(1 minute)`)
    /// with `target`, and 1 s a message.
    pub fn new(trace: Trace, target: BacklogTarget) -> Self {
        Self {
            trace,
            initial_tasks: 0,
            seed: 1,
            tail_seconds: 1_800,
            queue: QueueModel {
                visibility_timeout: defaults::VISIBILITY_TIMEOUT,
                max_receive_count: defaults::MAX_RECEIVE_COUNT,
                poison_fraction: 0.0,
                in_flight_limit: backlog_publisher::backlog::in_flight_limit(
                    backpressure_core::queue::QueueKind::Standard,
                ),
            },
            workers: WorkerModel {
                startup_seconds: FARGATE_STARTUP,
                startup_jitter: 8.0,
                slots: defaults::SLOTS,
                service: ServiceTime::Exponential(1.0),
                drain_seconds: Some(defaults::DRAIN_SECONDS),
                idle_first: true,
                slowdown: None,
            },
            publisher: PublisherModel {
                schedule_seconds: defaults::SCHEDULE_SECONDS,
                jitter_seconds: 10,
                duplicate_probability: 0.01,
                metric_lag_seconds: 30,
                metric_period: crate::sim::cloudwatch::PERIOD_SECONDS,
                backlog: BacklogPolicy::default(),
                load: LoadSettings::DEFAULT,
            },
            scaling: ScalingConfig {
                target,
                min_tasks: defaults::MIN_TASKS,
                max_tasks: defaults::MAX_TASKS,
                scale_in_cooldown: defaults::SCALE_IN_COOLDOWN,
                step_cooldown: defaults::STEP_COOLDOWN,
                zero_capacity: ZeroCapacity::Stay,
                step_scale_in: None,
                cpu: None,
                queue_policy: true,
            },
            slo: Slo { latency_seconds: 300, quantile: 0.99 },
            lambda: crate::lambda::LambdaModel::new(ServiceTime::Exponential(1.0)),
        }
    }
}

impl Scenario {
    /// The target tracking policy's target for `policy`: the load's percent
    /// or the backlog target.
    pub fn target_of(&self, policy: Policy) -> BacklogTarget {
        match policy {
            Policy::Load => BacklogTarget::new(self.publisher.load.target_percent)
                .unwrap_or(self.scaling.target),
            _ => self.scaling.target,
        }
    }

    /// This scenario with `policy`'s target set to `target`.
    pub fn with_target(&self, policy: Policy, target: BacklogTarget) -> Self {
        let mut trial = self.clone();
        match policy {
            Policy::Load => trial.publisher.load.target_percent = target.get(),
            _ => trial.scaling.target = target,
        }
        trial
    }

    /// Changes the service time (and, for a slower worker, the publisher's
    /// `AvgProcessingSeconds` to match) as the trace's shape says.
    pub fn shape_service(&mut self, shape: ServiceShape) {
        match shape {
            ServiceShape::AsGiven => {}
            ServiceShape::Slower(factor) => {
                self.workers.service = self.workers.service.scaled(factor);
                self.lambda.invocation.service = self.workers.service;
                self.publisher.load.processing_seconds *= factor;
            }
            ServiceShape::HeavyTailed(cv) => {
                let mean = self.workers.service.mean();
                self.workers.service = ServiceTime::LogNormal { mean, cv };
                self.lambda.invocation.service = self.workers.service;
            }
            ServiceShape::Slowdown(slowdown) => self.workers.slowdown = Some(slowdown),
        }
    }
}
