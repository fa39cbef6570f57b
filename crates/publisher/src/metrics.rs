//! The datums one sample publishes, independent of the CloudWatch SDK.

use std::time::SystemTime;

use crate::backlog::BacklogSample;
use crate::target::Target;

/// `PutMetricData` accepts at most 1,000 datums per request.
pub const MAX_DATUMS_PER_REQUEST: usize = 1000;

/// Dimension names, in the order every datum carries them. The scaling
/// policy in `template.yaml` must name exactly these.
pub const DIMENSION_NAMES: [&str; 3] = ["ClusterName", "ServiceName", "QueueName"];

/// Backlog per task: the metric the scaling policy tracks.
pub const BACKLOG_PER_TASK: &str = "BacklogPerTask";
/// The backlog counted.
pub const QUEUE_BACKLOG: &str = "QueueBacklog";
/// Messages in flight.
pub const IN_FLIGHT: &str = "InFlight";
/// Messages delayed.
pub const DELAYED: &str = "Delayed";
/// The task count divided by.
pub const TASK_COUNT: &str = "TaskCount";
/// Tasks needed for the target backlog per task.
pub const DESIRED_TASKS: &str = "DesiredTasks";
/// In-flight messages over SQS's in-flight limit, in percent.
pub const IN_FLIGHT_CAP_UTILIZATION: &str = "InFlightCapUtilization";
/// Visible messages in the dead-letter queue.
pub const DLQ_BACKLOG: &str = "DlqBacklog";
/// The capacity needed over the capacity running, percent ([`crate::load`]).
pub const SCALING_LOAD: &str = "ScalingLoad";

/// Every metric the publisher can write, in the order it writes them.
pub const METRIC_NAMES: [&str; 9] = [
    BACKLOG_PER_TASK,
    QUEUE_BACKLOG,
    IN_FLIGHT,
    DELAYED,
    TASK_COUNT,
    DESIRED_TASKS,
    IN_FLIGHT_CAP_UTILIZATION,
    DLQ_BACKLOG,
    SCALING_LOAD,
];

/// CloudWatch's rule for a datum's value: 0, or a magnitude from 2^-260 to
/// 2^360 (NaN and infinities refused). One refused value fails the whole
/// `PutMetricData` request, every target's datums with it.
pub fn cloudwatch_accepts(value: f64) -> bool {
    let magnitude = value.abs();
    value == 0.0 || (magnitude >= 2f64.powi(-260) && magnitude <= 2f64.powi(360))
}

/// A datum's CloudWatch unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// `Count`.
    Count,
    /// `Percent`.
    Percent,
}

/// One metric value, dimensioned by cluster, service and queue.
#[derive(Debug, Clone, PartialEq)]
pub struct Datum {
    /// The metric's name.
    pub name: &'static str,
    /// Its value (always one CloudWatch accepts).
    pub value: f64,
    /// Its unit.
    pub unit: Unit,
    /// Values for [`DIMENSION_NAMES`], in the same order.
    pub dimensions: [String; 3],
    /// When it was measured.
    pub timestamp: SystemTime,
}

/// The datums for one target's sample. Optional figures are left out rather
/// than published as zero: a zero would read as a real measurement.
pub fn datums(target: &Target, sample: &BacklogSample, timestamp: SystemTime) -> Vec<Datum> {
    let dimensions = [
        target.cluster_name().to_owned(),
        target.service_name().to_owned(),
        target.queue.name().to_owned(),
    ];
    let count = |name, value: u64| Some((name, value as f64, Unit::Count));
    [
        Some((BACKLOG_PER_TASK, sample.backlog_per_task, Unit::Count)),
        count(QUEUE_BACKLOG, sample.backlog),
        count(IN_FLIGHT, sample.queue.in_flight),
        count(DELAYED, sample.queue.delayed),
        count(TASK_COUNT, sample.task_count),
        sample.desired_tasks.and_then(|tasks| count(DESIRED_TASKS, tasks)),
        Some((IN_FLIGHT_CAP_UTILIZATION, sample.in_flight_cap_utilization, Unit::Percent)),
        sample.dlq_backlog.and_then(|visible| count(DLQ_BACKLOG, visible)),
        sample.scaling_load.map(|load| (SCALING_LOAD, load, Unit::Percent)),
    ]
    .into_iter()
    .flatten()
    .map(|(name, value, unit)| Datum {
        name,
        value,
        unit,
        dimensions: dimensions.clone(),
        timestamp,
    })
    .collect()
}

/// Splits one sample's datums into `PutMetricData` requests.
pub fn requests(datums: &[Datum]) -> std::slice::Chunks<'_, Datum> {
    datums.chunks(MAX_DATUMS_PER_REQUEST)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backlog::QueueCounts;
    use backpressure_core::queue::QueueRef;

    fn target() -> Target {
        Target {
            queue: QueueRef::parse("https://sqs.eu-west-1.amazonaws.com/1/work").unwrap(),
            cluster: "c".into(),
            service: "s".into(),
            backlog_target: None,
        }
    }

    fn sample(desired: Option<u64>, dlq: Option<u64>) -> BacklogSample {
        let scaling_load = desired.map(|_| 62.5);
        BacklogSample {
            queue: QueueCounts { visible: 150, in_flight: 7, delayed: 2 },
            backlog: 150,
            task_count: 3,
            backlog_per_task: 50.0,
            desired_tasks: desired,
            in_flight_cap_utilization: 0.5,
            dlq_backlog: dlq,
            scaling_load,
        }
    }

    #[test]
    fn every_datum_carries_the_three_dimensions() {
        let now = SystemTime::UNIX_EPOCH;
        let all = datums(&target(), &sample(Some(2), Some(4)), now);
        let names: Vec<_> = all.iter().map(|d| d.name).collect();
        assert_eq!(names, METRIC_NAMES);
        for datum in &all {
            assert_eq!(datum.dimensions, ["c", "s", "work"]);
            assert_eq!(datum.timestamp, now);
            assert!(datum.value.is_finite());
            let percent = [IN_FLIGHT_CAP_UTILIZATION, SCALING_LOAD].contains(&datum.name);
            let expected_unit = if percent { Unit::Percent } else { Unit::Count };
            assert_eq!(datum.unit, expected_unit, "{}", datum.name);
        }
        assert_eq!(all[0].value, 50.0);
        assert_eq!(all[7].value, 4.0);
        assert_eq!(all[8].value, 62.5);
    }

    #[test]
    fn the_cloudwatch_value_rule() {
        for good in [0.0, -0.0, 1.0, 2f64.powi(360), -(2f64.powi(-260)), u64::MAX as f64] {
            assert!(cloudwatch_accepts(good), "{good}");
        }
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 2f64.powi(361), 2f64.powi(-261)] {
            assert!(!cloudwatch_accepts(bad), "{bad}");
        }
    }

    #[test]
    fn unknown_figures_are_left_out_not_zeroed() {
        let names: Vec<_> = datums(&target(), &sample(None, None), SystemTime::UNIX_EPOCH)
            .into_iter()
            .map(|d| d.name)
            .collect();
        assert!(!names.contains(&DESIRED_TASKS));
        assert!(!names.contains(&DLQ_BACKLOG));
        assert!(!names.contains(&SCALING_LOAD));
        assert_eq!(names.len(), 6);
    }

    #[test]
    fn requests_split_at_one_thousand_datums() {
        let one = datums(&target(), &sample(Some(2), Some(4)), SystemTime::UNIX_EPOCH);
        for (targets, expected) in
            [(0, vec![]), (100, vec![900]), (112, vec![1000, 8]), (300, vec![1000, 1000, 700])]
        {
            let all: Vec<Datum> = one.iter().cycle().take(targets * one.len()).cloned().collect();
            let sizes: Vec<usize> = requests(&all).map(<[Datum]>::len).collect();
            assert_eq!(sizes, expected, "{targets} targets");
        }
    }
}
