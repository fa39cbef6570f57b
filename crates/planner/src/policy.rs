//! The scaling policies compared: what each publishes, how its alarm reads
//! it, and whether the template's wake-up step policy is attached.

use backlog_publisher::BacklogTarget;
use backlog_publisher::backlog::{BacklogPolicy, Readings};
use backpressure_core::queue::QueueKind;

use crate::cloudwatch::Statistic;

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
    pub const ALL: [Self; 7] = [
        Self::Load,
        Self::Ours,
        Self::QueueDepth,
        Self::ZeroWhenNoTasks,
        Self::MetricMathDropsZero,
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
        matches!(self, Self::Ours | Self::SumStatistic | Self::Load)
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
    /// load remembers earlier samples, so [`crate::publisher::Publisher`]
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
            Self::Copilot => Some((visible / running.max(1) as f64).ceil()),
        }
    }
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
            let got: Vec<_> =
                Policy::ALL[1..6].iter().map(|&policy| at(policy, visible, running)).collect();
            assert_eq!(got, expected.to_vec(), "visible {visible}, running {running}");
            assert_eq!(at(Policy::SumStatistic, visible, running), expected[0]);
        }
    }
}
