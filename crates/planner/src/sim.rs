//! The simulation loop: one second at a time, the trace's messages arrive,
//! leases lapse, tasks work, the publisher samples on its schedule, the
//! alarms evaluate each minute and ECS follows the desired count.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use backpressure_core::publisher::backlog::{BacklogPolicy, Readings};
use backpressure_core::publisher::{BacklogTarget, QueueCounts, ServiceCounts};
use fastrand::Rng;

use crate::autoscaling::{Evaluation, Scaler, ScalingConfig, ZeroCapacity};
use crate::cloudwatch::{AlarmShape, PERIOD_SECONDS, Series, Statistic, window};
use crate::fleet::{Fleet, WorkerModel};
use crate::policy::Policy;
use crate::queue::{Message, Queue, QueueModel};
use crate::random::ServiceTime;
use crate::stats::{Minute, Outcome, Waits};
use crate::trace::Trace;

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
    /// `BACKLOG_INCLUDES` and `TASK_COUNT`.
    pub backlog: BacklogPolicy,
}

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
}

impl Scenario {
    /// The template's defaults (0 to 20 tasks, cooldowns as deployed,
    /// `rate(1 minute)`) with `target`, and a worker with 4 slots at 1 s a
    /// message.
    pub fn new(trace: Trace, target: BacklogTarget) -> Self {
        Self {
            trace,
            initial_tasks: 0,
            seed: 1,
            tail_seconds: 1_800,
            queue: QueueModel {
                visibility_timeout: 60,
                max_receive_count: 5,
                poison_fraction: 0.0,
                in_flight_limit: backpressure_core::publisher::backlog::in_flight_limit(
                    backpressure_core::queue::QueueKind::Standard,
                ),
            },
            workers: WorkerModel {
                startup_seconds: 57.0,
                startup_jitter: 8.0,
                slots: 4,
                service: ServiceTime::Exponential(1.0),
                drain_seconds: Some(90),
                idle_first: true,
            },
            publisher: PublisherModel {
                schedule_seconds: 60,
                jitter_seconds: 10,
                duplicate_probability: 0.01,
                metric_lag_seconds: 30,
                backlog: BacklogPolicy::default(),
            },
            scaling: ScalingConfig {
                target,
                min_tasks: 0,
                max_tasks: 20,
                scale_in_cooldown: 300,
                step_cooldown: 300,
                zero_capacity: ZeroCapacity::Stay,
            },
            slo: Slo { latency_seconds: 300, quantile: 0.99 },
        }
    }
}

/// The metrics a run publishes.
#[derive(Debug, Default)]
struct Published {
    metric: Series,
    task_count: Series,
    queue_backlog: Series,
}

/// Separate generators per concern, so that every policy sees the same
/// poison messages and service times in the same order.
#[derive(Debug)]
struct Rngs {
    poison: Rng,
    service: Rng,
    startup: Rng,
    schedule: Rng,
}

impl Rngs {
    fn new(seed: u64) -> Self {
        Self {
            poison: Rng::with_seed(seed ^ 0x01),
            service: Rng::with_seed(seed ^ 0x02),
            startup: Rng::with_seed(seed ^ 0x03),
            schedule: Rng::with_seed(seed ^ 0x04),
        }
    }
}

/// Runs `policy` on `scenario`.
pub fn run(scenario: &Scenario, policy: Policy) -> Outcome {
    let target = scenario.scaling.target;
    let mut rngs = Rngs::new(scenario.seed);
    let mut queue = Queue::new(scenario.queue);
    let mut fleet = Fleet::new(scenario.workers, scenario.initial_tasks);
    let mut scaler = Scaler::new(scenario.scaling, scenario.initial_tasks);
    fleet.reconcile(0, scaler.desired(), &mut queue, &mut rngs.startup);
    let high = AlarmShape::target_tracking_high(target.get());
    let low = AlarmShape::target_tracking_low(target.get());
    let statistic = policy.statistic();
    let (samples, sample_interval) = policy.samples();
    let lag = scenario.publisher.metric_lag_seconds;

    let mut published = Published::default();
    let mut sample_times: BinaryHeap<Reverse<u64>> = BinaryHeap::new();
    let mut waits = Waits::default();
    let mut actions = Vec::new();
    let mut episodes = Vec::new();
    let mut zero_since: Option<u64> = None;
    let mut minutes = Vec::new();
    let mut minute_arrivals = 0;
    let mut counted = 0;

    let end = scenario.trace.seconds() + scenario.tail_seconds;
    for now in 0..end {
        let arrivals = scenario.trace.arrivals.get(now as usize).copied().unwrap_or(0);
        for _ in 0..arrivals {
            let poison = rngs.poison.f64() < scenario.queue.poison_fraction;
            counted += u64::from(!poison);
            queue.send(Message { sent: now as u32, receives: 0, poison });
        }
        minute_arrivals += u64::from(arrivals);
        queue.expire_leases(now);
        fleet.work(now, &mut queue, &mut rngs.service, &mut waits);

        if now % scenario.publisher.schedule_seconds == 0 {
            schedule_runs(
                now,
                scenario.publisher,
                samples,
                sample_interval,
                &mut rngs.schedule,
                &mut sample_times,
            );
        }
        while sample_times.peek().is_some_and(|Reverse(at)| *at <= now) {
            sample_times.pop();
            let readings = Readings {
                queue: QueueCounts {
                    visible: queue.visible(),
                    in_flight: queue.in_flight(),
                    delayed: 0,
                },
                service: ServiceCounts {
                    running: fleet.running(),
                    pending: fleet.pending(),
                    desired: scaler.desired(),
                },
                dlq_visible: None,
            };
            if let Some(value) = policy.metric(readings, scenario.publisher.backlog, target) {
                published.metric.put(now, lag, value);
            }
            let sample = scenario.publisher.backlog.sample(
                readings,
                backpressure_core::queue::QueueKind::Standard,
                Some(target),
            );
            published.task_count.put(now, lag, sample.task_count as f64);
            published.queue_backlog.put(now, lag, sample.backlog as f64);
        }

        if now > 0 && now % PERIOD_SECONDS == 0 {
            let latest = window(&published.metric, statistic, now, 1)[0];
            let eval = Evaluation {
                high: high.evaluate_series(&published.metric, statistic, now),
                low: low.evaluate_series(&published.metric, statistic, now),
                metric: latest,
                wake_up: policy.wakes_from_zero() && wake_up_alarm(&published, now),
            };
            if let Some(action) = scaler.evaluate(now, fleet.running(), eval) {
                actions.push(action);
            }
        }
        fleet.reconcile(now, scaler.desired(), &mut queue, &mut rngs.startup);

        let waiting = queue.visible() + queue.in_flight() > 0;
        match (zero_since, fleet.running()) {
            (None, 0) if waiting => zero_since = Some(now),
            (Some(since), running) if running > 0 => {
                episodes.push(Some(now - since));
                zero_since = None;
            }
            _ => {}
        }
        if now % PERIOD_SECONDS == PERIOD_SECONDS - 1 {
            let minute = now / PERIOD_SECONDS;
            minutes.push(Minute {
                arrivals: minute_arrivals,
                visible: queue.visible(),
                running: fleet.running(),
                desired: scaler.desired(),
                metric: published.metric.period(minute, statistic, u64::MAX),
            });
            minute_arrivals = 0;
        }
    }
    if zero_since.is_some() {
        episodes.push(None);
    }

    let slo = scenario.slo.latency_seconds;
    let mut left = 0;
    let mut left_late = 0;
    for message in queue.remaining().chain(fleet.holding()) {
        left += 1;
        if !message.poison && end - u64::from(message.sent) > slo {
            left_late += 1;
        }
    }
    Outcome {
        policy,
        sent: scenario.trace.total(),
        processed: waits.count(),
        dead_lettered: queue.dead_lettered(),
        left,
        left_late,
        counted,
        waits,
        slo_seconds: slo,
        task_seconds: fleet.bill_remaining(end),
        actions,
        zero_to_first_task: episodes,
        minutes,
    }
}

/// The schedule's runs for the period starting at `now`: one run after a
/// jitter, sometimes a duplicate, each taking `samples` samples.
fn schedule_runs(
    now: u64,
    model: PublisherModel,
    samples: u32,
    interval: u64,
    rng: &mut Rng,
    times: &mut BinaryHeap<Reverse<u64>>,
) {
    let mut starts = vec![now + rng.u64(0..=model.jitter_seconds)];
    if rng.f64() < model.duplicate_probability {
        starts.push(now + rng.u64(0..=model.jitter_seconds));
    }
    for start in starts {
        for i in 0..u64::from(samples) {
            times.push(Reverse(start + i * interval));
        }
    }
}

/// The template's `ScaleFromZeroAlarm`: `IF(tasks == 0 AND backlog > 0, 1, 0)`
/// over the last minute, `Maximum` of TaskCount and `Minimum` of
/// QueueBacklog, 1 of 1 above 0, missing data `notBreaching`.
fn wake_up_alarm(published: &Published, now: u64) -> bool {
    let tasks = window(&published.task_count, Statistic::Maximum, now, 1)[0];
    let backlog = window(&published.queue_backlog, Statistic::Minimum, now, 1)[0];
    matches!((tasks, backlog), (Some(tasks), Some(backlog)) if tasks == 0.0 && backlog > 0.0)
}
