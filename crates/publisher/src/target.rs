//! What the publisher measures: a queue, the ECS service that drains it, and
//! the backlog per task that service's scaling policy aims for.

use std::fmt;

use backpressure_core::queue::QueueRef;

/// The scaling policy's target value: acceptable backlog per task, from
/// [`BacklogTarget::MIN`] to [`BacklogTarget::MAX`], taken to six decimal
/// places. Kept as a whole number of millionths so that "tasks needed" is
/// exact (21 messages at 0.7 need 30 tasks; in floating point 21 ÷ 0.7 is
/// 30.000000000000004), and bounded so that nothing derived from it can leave
/// the range CloudWatch accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct BacklogTarget {
    millionths: u64,
}

const MILLION: u64 = 1_000_000;

impl BacklogTarget {
    /// The smallest target accepted.
    pub const MIN: f64 = 0.001;
    /// The largest target accepted.
    pub const MAX: f64 = 1e9;

    /// `None` outside [`Self::MIN`, `Self::MAX`] (NaN included).
    pub fn new(value: f64) -> Option<Self> {
        if !(Self::MIN..=Self::MAX).contains(&value) {
            return None;
        }
        // Below 2^53 millionths, so the product and the rounding are exact
        // for every value written with at most six decimals.
        Some(Self { millionths: (value * MILLION as f64).round() as u64 })
    }

    /// Acceptable latency ÷ average processing time, as in the AWS guide
    /// ("Scale Amazon ECS services based on an Amazon SQS queue").
    pub fn from_latency(acceptable_latency_seconds: f64, processing_seconds: f64) -> Option<Self> {
        Self::new(acceptable_latency_seconds / processing_seconds)
    }

    /// The target as a number.
    pub fn get(self) -> f64 {
        self.millionths as f64 / MILLION as f64
    }

    /// ceil(backlog ÷ target), exactly; saturates at `u64::MAX`.
    pub fn tasks_for(self, backlog: u64) -> u64 {
        let scaled = u128::from(backlog) * u128::from(MILLION);
        let tasks = scaled.div_ceil(u128::from(self.millionths));
        u64::try_from(tasks).unwrap_or(u64::MAX)
    }
}

/// One queue and the ECS service that drains it.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// The queue measured.
    pub queue: QueueRef,
    /// The ECS cluster, by name or ARN.
    pub cluster: String,
    /// The ECS service, by name or ARN.
    pub service: String,
    /// This target's backlog per task, when it has one of its own.
    pub backlog_target: Option<BacklogTarget>,
}

/// The name part of an ECS cluster or service given as a name or an ARN
/// (`arn:…:cluster/NAME`, `arn:…:service/CLUSTER/NAME` or the older
/// `arn:…:service/NAME`). Metrics are dimensioned by names whichever form
/// was configured, so the scaling policy's dimensions match.
pub fn ecs_name(name_or_arn: &str) -> &str {
    if name_or_arn.starts_with("arn:") {
        name_or_arn.rsplit('/').next().unwrap_or(name_or_arn)
    } else {
        name_or_arn
    }
}

impl Target {
    /// The cluster's name, whether configured by name or ARN.
    pub fn cluster_name(&self) -> &str {
        ecs_name(&self.cluster)
    }

    /// The service's name, whether configured by name or ARN.
    pub fn service_name(&self) -> &str {
        ecs_name(&self.service)
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "queue {} → service {}/{}", self.queue.name(), self.cluster, self.service)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tasks_for_is_an_exact_ceiling() {
        let target = |v: f64| BacklogTarget::new(v).unwrap();
        let cases = [
            (21, 0.7, 30),
            (22, 0.7, 32),
            (0, 0.7, 0),
            (1, 100.0, 1),
            (100, 100.0, 1),
            (101, 100.0, 2),
            (3, 0.3, 10),
            (10, 0.1, 100),
            (7, 2.333333, 4),
            (14, 3.5, 4),
            (u64::MAX, 1e9, u64::MAX / 1_000_000_000 + 1),
            (u64::MAX, 0.001, u64::MAX),
        ];
        for (backlog, value, tasks) in cases {
            assert_eq!(target(value).tasks_for(backlog), tasks, "{backlog} at {value}");
        }
    }

    #[test]
    fn ecs_names_from_names_and_arns() {
        for (given, name) in [
            ("workers", "workers"),
            ("arn:aws:ecs:eu-west-1:123456789012:service/prod/workers", "workers"),
            ("arn:aws:ecs:eu-west-1:123456789012:service/workers", "workers"),
            ("arn:aws:ecs:eu-west-1:123456789012:cluster/prod", "prod"),
        ] {
            assert_eq!(ecs_name(given), name, "{given}");
        }
    }

    #[test]
    fn backlog_target_is_bounded_and_finite() {
        assert_eq!(BacklogTarget::new(100.0).map(BacklogTarget::get), Some(100.0));
        assert_eq!(BacklogTarget::new(0.7).map(BacklogTarget::get), Some(0.7));
        assert_eq!(BacklogTarget::new(0.001).map(BacklogTarget::get), Some(0.001));
        assert_eq!(BacklogTarget::new(1e9).map(BacklogTarget::get), Some(1e9));
        for bad in [0.0, -1.0, 0.000_999, 1e9 + 1.0, 1e300, f64::NAN, f64::INFINITY] {
            assert_eq!(BacklogTarget::new(bad), None, "{bad}");
        }
        assert_eq!(BacklogTarget::from_latency(10.0, 0.1).map(BacklogTarget::get), Some(100.0));
        assert_eq!(BacklogTarget::from_latency(10.0, 0.0), None);
    }
}
