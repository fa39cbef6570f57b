//! The scaling policies compared: what each publishes, how its alarm reads
//! it, and whether the template's wake-up step policy is attached.

use backlog_publisher::BacklogTarget;
use backlog_publisher::backlog::{BacklogIncludes, BacklogPolicy, Readings};
use backpressure_core::queue::QueueKind;

use crate::sim::cloudwatch::Statistic;

/// Targets tried: roughly geometric, wide enough for fast and slow services,
/// up to 20,000: the AWS guide's acceptable latency × messages per second a
/// task drains is 9,600 for a 300 s SLO at the template's 32 messages at once.
pub const TARGETS: [f64; 21] = [
    2.0, 5.0, 10.0, 15.0, 20.0, 30.0, 50.0, 75.0, 100.0, 150.0, 200.0, 300.0, 500.0, 750.0,
    1_000.0, 2_000.0, 3_000.0, 5_000.0, 7_500.0, 10_000.0, 20_000.0,
];

/// `TARGET_LOAD_PERCENT` values tried for the load: how busy target
/// tracking keeps the slots the queue needs.
pub const LOAD_TARGETS: [f64; 12] =
    [30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0, 120.0, 150.0, 200.0, 300.0];

/// What consumed the queue in a run: the ECS worker service under a scaling
/// policy, or the Lambda consumer under its event source mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Consumer {
    /// sqs-worker tasks, scaled by Application Auto Scaling on this policy's metric.
    Ecs(Policy),
    /// batch-consumer, scaled by the SQS event source mapping.
    Lambda,
}

impl Consumer {
    /// The table's name for it.
    pub fn label(self) -> &'static str {
        match self {
            Self::Ecs(policy) => policy.label(),
            Self::Lambda => "lambda (event source mapping)",
        }
    }
}

/// A way to scale the worker service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Policy {
    /// `ScalingSignal=backlog-per-task`: core's backlog per task (zero guard,
    /// `BACKLOG_INCLUDES`, `TASK_COUNT`), `Average`, plus the step-scaling
    /// wake-up from zero.
    Ours,
    /// `ApproximateNumberOfMessagesVisible` as the tracked metric.
    QueueDepth,
    /// Visible ÷ running, 0 when no task runs (seed 004's function).
    ZeroWhenNoTasks,
    /// Metric math visible ÷ running: the point at zero tasks is dropped.
    MetricMathDropsZero,
    /// `ScalingSignal=metric-math`, exactly as the template deploys it: the
    /// backlog `BACKLOG_INCLUDES` counts ÷ `RunningTaskCount` in the policy's
    /// metric math, the backlog itself at zero running tasks
    /// ([`METRIC_MATH_PER_TASK`]), `Average`, plus the wake-up step
    /// ([`METRIC_MATH_WAKE_UP`]); no publisher.
    MetricMath,
    /// AWS Copilot's worker service: ⌈visible ÷ max(running, 1)⌉.
    Copilot,
    /// Ours with `Sum` instead of `Average` and six samples a minute.
    SumStatistic,
    /// core's `ScalingLoad` (in flight, growth and the visible backlog's
    /// drain, in slots, over the running capacity; held at one task until
    /// idle for `LOAD_HOLD_SECONDS`), `Average`, plus the wake-up step.
    Load,
}

impl Policy {
    /// What `template.yaml` deploys by default (`ScalingSignal=load`), and
    /// what `recommend` searches.
    pub const TEMPLATE: Self = Self::Load;

    /// Every policy, ours first.
    pub const ALL: [Self; 8] = [
        Self::Load,
        Self::Ours,
        Self::QueueDepth,
        Self::ZeroWhenNoTasks,
        Self::MetricMathDropsZero,
        Self::MetricMath,
        Self::Copilot,
        Self::SumStatistic,
    ];

    /// The table's name for it.
    pub fn label(self) -> &'static str {
        match self {
            // The template deploys this signal by default, but a row is not
            // always at the template's setting: the setting is said beside it.
            Self::Load => "ours: load",
            Self::Ours => "ours: backlog per task",
            Self::QueueDepth => "queue depth",
            Self::ZeroWhenNoTasks => "÷ running, 0 at zero",
            Self::MetricMathDropsZero => "metric math ÷ running",
            Self::MetricMath => "template: metric math",
            Self::Copilot => "copilot ⌈v÷max(r,1)⌉",
            Self::SumStatistic => "ours with Sum",
        }
    }

    /// Its name with a setting, for a run not at the picture's or table's
    /// common setting: `ours: load, target 300 %, MinTasks 0`.
    pub fn at(self, target: f64, min_tasks: u64) -> String {
        let unit = if self == Self::Load { " %" } else { "" };
        format!("{}, target {target}{unit}, MinTasks {min_tasks}", self.label())
    }

    /// The statistic its target tracking alarm uses.
    pub fn statistic(self) -> Statistic {
        match self {
            Self::SumStatistic => Statistic::Sum,
            _ => Statistic::Average,
        }
    }

    /// Samples per scheduled run, and seconds between them. Sub-minute
    /// samples are harmless under `Average` and multiply a `Sum`.
    pub fn samples(self) -> (u32, u64) {
        match self {
            Self::SumStatistic => (6, 10),
            _ => (1, 0),
        }
    }

    /// Whether the template's wake-up step policy (one task when messages
    /// wait and none runs) is attached.
    pub fn wakes_from_zero(self) -> bool {
        matches!(self, Self::Ours | Self::SumStatistic | Self::Load | Self::MetricMath)
    }

    /// Read from AWS's own metrics (`AWS/SQS`, Container Insights), which
    /// CloudWatch receives once a minute: no EventBridge schedule's jitter
    /// or duplicate runs, and the task count is always the running one.
    pub fn reads_aws_metrics(self) -> bool {
        self == Self::MetricMath
    }

    /// One of ours: the comparisons measure these against the others.
    pub fn is_ours(self) -> bool {
        matches!(self, Self::Ours | Self::SumStatistic | Self::Load)
    }

    /// The target tracking targets `recommend` tries: percent for the load,
    /// messages per task (or in the queue) for the rest.
    pub fn targets(self) -> &'static [f64] {
        match self {
            Self::Load => &LOAD_TARGETS,
            _ => &TARGETS,
        }
    }

    /// The value published for these readings; `None` publishes nothing.
    /// Ours is exactly what backlog-publisher computes, through core. The
    /// load remembers earlier samples, so [`crate::sim::publisher::Publisher`]
    /// computes it; here it reads as backlog per task.
    pub fn metric(
        self,
        readings: Readings,
        backlog: BacklogPolicy,
        target: BacklogTarget,
    ) -> Option<f64> {
        let visible = readings.queue.visible as f64;
        let running = readings.service.running;
        match self {
            Self::Ours | Self::SumStatistic | Self::Load => {
                Some(backlog.sample(readings, QueueKind::Standard, Some(target)).backlog_per_task)
            }
            Self::QueueDepth => Some(visible),
            Self::ZeroWhenNoTasks => Some(if running > 0 { visible / running as f64 } else { 0.0 }),
            Self::MetricMathDropsZero => (running > 0).then(|| visible / running as f64),
            Self::MetricMath => {
                Some(metric_math_per_task(backlog.includes.backlog(readings.queue), running))
            }
            Self::Copilot => Some((visible / running.max(1) as f64).ceil()),
        }
    }
}

/// The template's `backlogPerTask` query (`ScalingSignal=metric-math`): `backlog`
/// is [`metric_math_backlog`], `running` Container Insights' `RunningTaskCount`.
pub const METRIC_MATH_PER_TASK: &str =
    "IF(FILL(running, 0) > 0, backlog / FILL(running, 0), backlog)";

/// The template's wake-up alarm with `ScalingSignal=metric-math`.
pub const METRIC_MATH_WAKE_UP: &str = "IF(FILL(running, 0) == 0 AND backlog > 0, 1, 0)";

/// The template's `backlog` query for `BACKLOG_INCLUDES`: the `AWS/SQS`
/// counts it names, each missing point read as 0.
pub fn metric_math_backlog(includes: BacklogIncludes) -> String {
    let mut terms = vec!["FILL(visible, 0)"];
    if includes.in_flight {
        terms.push("FILL(inflight, 0)");
    }
    if includes.delayed {
        terms.push("FILL(delayed, 0)");
    }
    terms.join(" + ")
}

/// [`METRIC_MATH_PER_TASK`] evaluated: a missing `RunningTaskCount` reads as 0.
pub fn metric_math_per_task(backlog: u64, running: u64) -> f64 {
    if running > 0 { backlog as f64 / running as f64 } else { backlog as f64 }
}

#[cfg(test)]
mod tests {
    use backlog_publisher::{QueueCounts, ServiceCounts};

    use super::*;

    fn readings(visible: u64, running: u64) -> Readings {
        Readings {
            queue: QueueCounts { visible, in_flight: 0, delayed: 0 },
            service: ServiceCounts { running, pending: 0, desired: running },
            dlq_visible: None,
        }
    }

    #[test]
    fn each_policy_publishes_its_formula() {
        let target = BacklogTarget::new(100.0).unwrap();
        let at = |policy: Policy, visible, running| {
            policy.metric(readings(visible, running), BacklogPolicy::default(), target)
        };
        // (visible, running): ours, depth, zero-when-none, metric math, copilot
        let cases: &[(u64, u64, [Option<f64>; 5])] = &[
            (1_500, 10, [Some(150.0), Some(1_500.0), Some(150.0), Some(150.0), Some(150.0)]),
            (5, 0, [Some(200.0), Some(5.0), Some(0.0), None, Some(5.0)]),
            (0, 0, [Some(0.0), Some(0.0), Some(0.0), None, Some(0.0)]),
            (7, 2, [Some(3.5), Some(7.0), Some(3.5), Some(3.5), Some(4.0)]),
        ];
        for &(visible, running, expected) in cases {
            let got: Vec<_> = [
                Policy::Ours,
                Policy::QueueDepth,
                Policy::ZeroWhenNoTasks,
                Policy::MetricMathDropsZero,
                Policy::Copilot,
            ]
            .iter()
            .map(|&policy| at(policy, visible, running))
            .collect();
            assert_eq!(got, expected.to_vec(), "visible {visible}, running {running}");
            assert_eq!(at(Policy::SumStatistic, visible, running), expected[0]);
        }
    }

    #[test]
    fn the_templates_metric_math_is_the_backlog_it_counts_over_the_running_tasks() {
        let target = BacklogTarget::new(100.0).unwrap();
        let counts = Readings {
            queue: backlog_publisher::QueueCounts { visible: 90, in_flight: 30, delayed: 6 },
            service: ServiceCounts { running: 3, pending: 2, desired: 5 },
            dlq_visible: None,
        };
        let with = |in_flight, delayed| BacklogPolicy {
            includes: BacklogIncludes { in_flight, delayed },
            ..BacklogPolicy::default()
        };
        let at =
            |policy: BacklogPolicy, readings| Policy::MetricMath.metric(readings, policy, target);
        assert_eq!(at(with(false, false), counts), Some(30.0));
        assert_eq!(at(with(true, false), counts), Some(40.0));
        assert_eq!(at(with(true, true), counts), Some(42.0));
        // At zero running tasks the backlog itself, never a dropped point; pending tasks never count.
        let none_running =
            Readings { service: ServiceCounts { running: 0, pending: 2, desired: 2 }, ..counts };
        assert_eq!(at(with(false, true), none_running), Some(96.0));
        assert_eq!(
            metric_math_backlog(BacklogIncludes { in_flight: true, delayed: true }),
            "FILL(visible, 0) + FILL(inflight, 0) + FILL(delayed, 0)"
        );
        assert!(Policy::MetricMath.wakes_from_zero() && !Policy::MetricMath.is_ours());
    }
}
