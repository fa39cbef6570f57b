//! Backlog per task and the figures published next to it.
//!
//! Every function here returns finite numbers: CloudWatch rejects NaN and
//! infinities, and a scaling policy fed a wrong value scales the wrong way.

use std::str::FromStr;

use crate::target::BacklogTarget;
use backpressure_core::queue::QueueKind;

/// Message counts from one `GetQueueAttributes` call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QueueCounts {
    /// `ApproximateNumberOfMessages`.
    pub visible: u64,
    /// `ApproximateNumberOfMessagesNotVisible`.
    pub in_flight: u64,
    /// `ApproximateNumberOfMessagesDelayed`.
    pub delayed: u64,
}

/// Task counts of one ECS service from `DescribeServices`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ServiceCounts {
    /// Tasks running.
    pub running: u64,
    /// Tasks pending (starting).
    pub pending: u64,
    /// The service's desired count.
    pub desired: u64,
}

/// Which queue counts make up the backlog (`BACKLOG_INCLUDES`). Visible
/// messages always count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BacklogIncludes {
    /// Count in-flight messages (`BACKLOG_INCLUDES=inflight`).
    pub in_flight: bool,
    /// Count delayed messages (`BACKLOG_INCLUDES=delayed`).
    pub delayed: bool,
}

impl BacklogIncludes {
    /// The backlog these settings count.
    pub fn backlog(self, counts: QueueCounts) -> u64 {
        let mut backlog = counts.visible;
        if self.in_flight {
            backlog = backlog.saturating_add(counts.in_flight);
        }
        if self.delayed {
            backlog = backlog.saturating_add(counts.delayed);
        }
        backlog
    }
}

/// A `BACKLOG_INCLUDES` or `TASK_COUNT` value that is not one of the
/// accepted spellings; says what is accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct SettingError {
    reason: String,
}

impl SettingError {
    fn new(reason: impl Into<String>) -> Self {
        Self { reason: reason.into() }
    }
}

/// `visible`, optionally with `inflight` and `delayed`, comma-separated, in
/// any case: the publisher's `BACKLOG_INCLUDES`.
impl FromStr for BacklogIncludes {
    type Err = SettingError;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        let (mut visible, mut includes) = (false, Self::default());
        for token in value.split(',').map(|t| t.trim().to_ascii_lowercase()) {
            match token.as_str() {
                "visible" => visible = true,
                "inflight" => includes.in_flight = true,
                "delayed" => includes.delayed = true,
                _ => {
                    return Err(SettingError::new(format!(
                        "unknown item {token:?}; expected a comma-separated list of visible, inflight, delayed"
                    )));
                }
            }
        }
        if !visible {
            return Err(SettingError::new(
                "the list must include visible (the messages waiting), e.g. visible,inflight",
            ));
        }
        Ok(includes)
    }
}

/// Which task count divides the backlog (`TASK_COUNT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TaskCountMode {
    /// Running tasks only.
    #[default]
    Running,
    /// Running and pending tasks.
    RunningPlusPending,
    /// The desired count.
    Desired,
}

/// `running`, `running+pending` or `desired`, in any case: the publisher's
/// `TASK_COUNT`.
impl FromStr for TaskCountMode {
    type Err = SettingError;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        match value.to_ascii_lowercase().as_str() {
            "running" => Ok(Self::Running),
            "running+pending" => Ok(Self::RunningPlusPending),
            "desired" => Ok(Self::Desired),
            _ => Err(SettingError::new("expected running, running+pending or desired")),
        }
    }
}

impl TaskCountMode {
    /// The denominator this mode picks.
    pub fn task_count(self, counts: ServiceCounts) -> u64 {
        match self {
            Self::Running => counts.running,
            Self::RunningPlusPending => counts.running.saturating_add(counts.pending),
            Self::Desired => counts.desired,
        }
    }
}

/// How far above the target the zero guard publishes when no task runs.
/// Target tracking only scales out on a value above its target, and it
/// ignores small excursions inside its tolerance band; twice the target is
/// clear of that band whatever the target is.
pub const ZERO_TASK_TARGET_MULTIPLIER: f64 = 2.0;

/// Backlog per task with the zero guard:
/// - an empty queue is 0, whatever the task count;
/// - with tasks, backlog ÷ tasks;
/// - with no task and a backlog, the backlog one task would carry, but never
///   less than twice the target, so that target tracking scales out from zero
///   even when the backlog is smaller than the target. Without a known target
///   only the backlog itself can be published.
pub fn backlog_per_task(backlog: u64, tasks: u64, target: Option<BacklogTarget>) -> f64 {
    if backlog == 0 {
        return 0.0;
    }
    if tasks > 0 {
        return backlog as f64 / tasks as f64;
    }
    let one_task = backlog as f64;
    match target {
        Some(target) => one_task.max(target.get() * ZERO_TASK_TARGET_MULTIPLIER),
        None => one_task,
    }
}

/// Tasks needed to bring the backlog per task to the target: ceil(backlog ÷ target).
pub fn desired_tasks(backlog: u64, target: BacklogTarget) -> u64 {
    target.tasks_for(backlog)
}

/// In-flight messages per queue before receives start coming back empty while
/// the queue is still deep. AWS documents 120,000 for standard queues and,
/// since the November 2024 quota raise, 120,000 for FIFO queues as well
/// (SQS developer guide, "Amazon SQS FIFO queue quotas"); older material says
/// 20,000 for FIFO.
pub fn in_flight_limit(kind: QueueKind) -> u64 {
    match kind {
        QueueKind::Standard => 120_000,
        QueueKind::Fifo => 120_000,
    }
}

/// In-flight messages as a percentage of the queue's in-flight limit.
pub fn in_flight_cap_utilization(in_flight: u64, kind: QueueKind) -> f64 {
    in_flight as f64 / in_flight_limit(kind) as f64 * 100.0
}

/// Everything one sample publishes for one target, computed from its reads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BacklogSample {
    /// The queue's counts as read.
    pub queue: QueueCounts,
    /// The backlog counted ([`BacklogIncludes`]).
    pub backlog: u64,
    /// The denominator used, chosen by [`TaskCountMode`].
    pub task_count: u64,
    /// The scaling metric (zero-guarded).
    pub backlog_per_task: f64,
    /// Tasks needed for the target, when one is set.
    pub desired_tasks: Option<u64>,
    /// In-flight messages over SQS's in-flight limit, in percent.
    pub in_flight_cap_utilization: f64,
    /// Visible messages in the dead-letter queue, when the queue has one.
    pub dlq_backlog: Option<u64>,
    /// `ScalingLoad`, when the publisher is configured for it ([`crate::load`]).
    pub scaling_load: Option<f64>,
}

/// The reads a sample is computed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Readings {
    /// The queue's counts.
    pub queue: QueueCounts,
    /// The service's counts.
    pub service: ServiceCounts,
    /// The dead-letter queue's visible messages, when read.
    pub dlq_visible: Option<u64>,
}

/// How the backlog and the task count are chosen, shared by every target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BacklogPolicy {
    /// What the backlog counts.
    pub includes: BacklogIncludes,
    /// What the task count is.
    pub task_count: TaskCountMode,
}

impl BacklogPolicy {
    /// The sample for one target's readings.
    pub fn sample(
        self,
        readings: Readings,
        kind: QueueKind,
        target: Option<BacklogTarget>,
    ) -> BacklogSample {
        let backlog = self.includes.backlog(readings.queue);
        let task_count = self.task_count.task_count(readings.service);
        BacklogSample {
            queue: readings.queue,
            backlog,
            task_count,
            backlog_per_task: backlog_per_task(backlog, task_count, target),
            desired_tasks: target.map(|target| desired_tasks(backlog, target)),
            in_flight_cap_utilization: in_flight_cap_utilization(readings.queue.in_flight, kind),
            dlq_backlog: readings.dlq_visible,
            scaling_load: None,
        }
    }
}

#[cfg(test)]
mod tests;
