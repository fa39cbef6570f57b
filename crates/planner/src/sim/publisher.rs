//! backlog-publisher on its schedule, CloudWatch holding what it put, and
//! the alarms that read it.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use backlog_publisher::BacklogTarget;
use backlog_publisher::backlog::{BacklogPolicy, Readings};
use backlog_publisher::load::{LoadMemory, LoadSettings};
use backpressure_core::queue::QueueKind;
use fastrand::Rng;

use crate::sim::autoscaling::Evaluation;
use crate::sim::cloudwatch::{AlarmShape, Series, Statistic, window};
use crate::sim::policy::Policy;

/// backlog-publisher's schedule and CloudWatch's delay.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PublisherModel {
    /// The EventBridge schedule's period (`rate(1 minute)`: 60).
    pub schedule_seconds: u64,
    /// Each run starts up to this many seconds after its scheduled time.
    pub jitter_seconds: u64,
    /// Chance that a run is delivered twice (EventBridge delivers at least once).
    pub duplicate_probability: f64,
    /// Seconds from `PutMetricData` until alarms can read the datapoint.
    pub metric_lag_seconds: u64,
    /// The scaling metric's period, seconds: 60, or 10, 20 or 30 when the
    /// publisher samples that often at one-second resolution and target
    /// tracking reads it at that period (`--metric-period`).
    pub metric_period: u64,
    /// `BACKLOG_INCLUDES` and `TASK_COUNT`.
    pub backlog: BacklogPolicy,
    /// The load's settings (its target is `TARGET_LOAD_PERCENT`).
    pub load: LoadSettings,
}

/// The publisher of one policy, and the metrics it has put.
#[derive(Debug)]
pub struct Publisher {
    model: PublisherModel,
    policy: Policy,
    target: BacklogTarget,
    high: AlarmShape,
    low: AlarmShape,
    step_low: AlarmShape,
    sample_times: BinaryHeap<Reverse<u64>>,
    metric: Series,
    task_count: Series,
    queue_backlog: Series,
    load: LoadMemory,
}

impl Publisher {
    /// Nothing published yet.
    pub fn new(model: PublisherModel, policy: Policy, target: BacklogTarget) -> Self {
        Self {
            model,
            policy,
            target,
            high: AlarmShape::target_tracking_high(target.get()),
            low: AlarmShape::target_tracking_low(target.get()),
            step_low: AlarmShape::load_scale_in(target.get()),
            sample_times: BinaryHeap::new(),
            metric: Series::with_period(if policy.reads_aws_metrics() {
                // AWS/SQS and Container Insights publish once a minute.
                crate::sim::cloudwatch::PERIOD_SECONDS
            } else {
                model.metric_period
            }),
            task_count: Series::default(),
            queue_backlog: Series::default(),
            load: LoadMemory::default(),
        }
    }

    /// Second `now`: schedules the period's runs when one starts, and takes
    /// every sample due, reading the queue and the service only then. Besides
    /// the policy's metric it puts TaskCount and QueueBacklog, which the
    /// wake-up alarm reads.
    pub fn tick(&mut self, now: u64, read: impl FnOnce() -> Readings, rng: &mut Rng) {
        if now.is_multiple_of(self.model.schedule_seconds) {
            self.schedule_runs(now, rng);
        }
        if self.sample_times.peek().is_none_or(|Reverse(at)| *at > now) {
            return;
        }
        let readings = read();
        let lag = self.model.metric_lag_seconds;
        while self.sample_times.peek().is_some_and(|Reverse(at)| *at <= now) {
            self.sample_times.pop();
            let sample =
                self.model.backlog.sample(readings, QueueKind::Standard, Some(self.target));
            let value = match self.policy {
                Policy::Load => Some(self.load.observe(
                    now as f64,
                    readings.queue,
                    self.model.backlog.includes,
                    sample.task_count,
                    LoadSettings { target_percent: self.target.get(), ..self.model.load },
                )),
                policy => policy.metric(readings, self.model.backlog, self.target),
            };
            if let Some(value) = value {
                self.metric.put(now, lag, value);
            }
            // Container Insights' RunningTaskCount, whatever TASK_COUNT says.
            let tasks = if self.policy.reads_aws_metrics() {
                readings.service.running
            } else {
                sample.task_count
            };
            self.task_count.put(now, lag, tasks as f64);
            self.queue_backlog.put(now, lag, sample.backlog as f64);
        }
    }

    /// The period's runs: one after a jitter, sometimes a duplicate, each
    /// taking the policy's samples.
    fn schedule_runs(&mut self, now: u64, rng: &mut Rng) {
        let (samples, interval) = match self.policy.samples() {
            // One sample a period, as SAMPLES_PER_INVOCATION and SAMPLE_INTERVAL_SECONDS set it.
            (1, _) if self.metric.seconds() < crate::sim::cloudwatch::PERIOD_SECONDS => {
                let period = self.metric.seconds();
                ((crate::sim::cloudwatch::PERIOD_SECONDS / period) as u32, period)
            }
            given => given,
        };
        if self.policy.reads_aws_metrics() {
            self.sample_times.push(Reverse(now));
            return;
        }
        let mut starts = vec![now + rng.u64(0..=self.model.jitter_seconds)];
        if rng.f64() < self.model.duplicate_probability {
            starts.push(now + rng.u64(0..=self.model.jitter_seconds));
        }
        for start in starts {
            for i in 0..u64::from(samples) {
                self.sample_times.push(Reverse(start + i * interval));
            }
        }
    }

    /// Seconds between evaluations of the scaling metric's alarms.
    pub fn evaluation_interval(&self) -> u64 {
        crate::sim::cloudwatch::evaluation_interval(self.metric.seconds())
    }

    /// What the alarms say at `now`, an evaluation of the metric's alarms
    /// ([`crate::sim::cloudwatch::evaluation_interval`]). The wake-up alarm has a
    /// one-minute period and is evaluated on minute boundaries only.
    pub fn evaluation(&self, now: u64) -> Evaluation {
        let statistic = self.policy.statistic();
        let minute_boundary = now.is_multiple_of(crate::sim::cloudwatch::PERIOD_SECONDS);
        Evaluation {
            high: self.high.evaluate_series(&self.metric, statistic, now),
            low: self.low.evaluate_series(&self.metric, statistic, now),
            metric: crate::sim::cloudwatch::recent(&self.metric, statistic, now, 1)[0],
            wake_up: minute_boundary && self.policy.wakes_from_zero() && self.wake_up_alarm(now),
            step_low: match self.policy {
                Policy::Load => self.step_low.evaluate_series(&self.metric, statistic, now),
                _ => crate::sim::cloudwatch::AlarmState::Ok,
            },
            cpu: None,
        }
    }

    /// The template's `ScaleFromZeroAlarm`: `IF(tasks == 0 AND backlog > 0, 1, 0)`
    /// over the last minute, `Maximum` of TaskCount and `Minimum` of
    /// QueueBacklog, 1 of 1 above 0, missing data `notBreaching`.
    fn wake_up_alarm(&self, now: u64) -> bool {
        let tasks = window(&self.task_count, Statistic::Maximum, now, 1)[0];
        let backlog = window(&self.queue_backlog, Statistic::Minimum, now, 1)[0];
        matches!((tasks, backlog), (Some(tasks), Some(backlog)) if tasks == 0.0 && backlog > 0.0)
    }

    /// The policy's metric for `minute` as its statistic reads it, once every
    /// datapoint is visible; `None` when nothing was published.
    pub fn minute(&self, minute: u64) -> Option<f64> {
        let per_minute = crate::sim::cloudwatch::PERIOD_SECONDS / self.metric.seconds();
        let first = minute * per_minute;
        self.metric.span(first, first + per_minute, self.policy.statistic(), u64::MAX)
    }
}
