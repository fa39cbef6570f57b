use proptest::prelude::*;

use super::*;
use crate::metrics::{cloudwatch_accepts, datums};
use crate::target::Target;
use backpressure_core::queue::QueueRef;

fn target(value: f64) -> Option<BacklogTarget> {
    Some(BacklogTarget::new(value).unwrap())
}

#[test]
fn backlog_per_task_table() {
    // (backlog, tasks, target, expected)
    let cases: &[(u64, u64, Option<BacklogTarget>, f64)] = &[
        (0, 0, target(100.0), 0.0),
        (0, 5, target(100.0), 0.0),
        (0, 0, None, 0.0),
        (150, 3, target(100.0), 50.0),
        (1500, 10, target(100.0), 150.0),
        (1, 3, None, 1.0 / 3.0),
        (5, 0, target(100.0), 200.0),
        (5, 0, target(0.5), 5.0),
        (u64::MAX, 0, target(1e9), u64::MAX as f64),
        (1, 0, target(1e9), 2e9),
        (1000, 0, target(100.0), 1000.0),
        (200, 0, target(100.0), 200.0),
        (5, 0, None, 5.0),
        (u64::MAX, 1, target(100.0), u64::MAX as f64),
        (u64::MAX, 0, target(100.0), u64::MAX as f64),
        (u64::MAX, u64::MAX, target(100.0), 1.0),
    ];
    for &(backlog, tasks, target, expected) in cases {
        let got = backlog_per_task(backlog, tasks, target);
        assert_eq!(got, expected, "backlog {backlog}, tasks {tasks}, target {target:?}");
        assert!(got.is_finite());
    }
}

#[test]
fn zero_tasks_with_backlog_is_strictly_above_target() {
    for backlog in [1_u64, 5, 99, 100, 101, 10_000] {
        for t in [BacklogTarget::MIN, 1.0, 100.0, BacklogTarget::MAX] {
            let value = backlog_per_task(backlog, 0, target(t));
            assert!(value > t, "backlog {backlog}, target {t} gave {value}");
        }
    }
}

#[test]
fn backlog_includes_each_choice() {
    let counts = QueueCounts { visible: 10, in_flight: 20, delayed: 40 };
    let cases = [
        (BacklogIncludes { in_flight: false, delayed: false }, 10),
        (BacklogIncludes { in_flight: true, delayed: false }, 30),
        (BacklogIncludes { in_flight: false, delayed: true }, 50),
        (BacklogIncludes { in_flight: true, delayed: true }, 70),
    ];
    for (includes, expected) in cases {
        assert_eq!(includes.backlog(counts), expected, "{includes:?}");
    }
    let huge = QueueCounts { visible: u64::MAX, in_flight: 1, delayed: 1 };
    assert_eq!(BacklogIncludes { in_flight: true, delayed: true }.backlog(huge), u64::MAX);
}

#[test]
fn task_count_each_choice() {
    let counts = ServiceCounts { running: 3, pending: 2, desired: 7 };
    assert_eq!(TaskCountMode::Running.task_count(counts), 3);
    assert_eq!(TaskCountMode::RunningPlusPending.task_count(counts), 5);
    assert_eq!(TaskCountMode::Desired.task_count(counts), 7);
    let huge = ServiceCounts { running: u64::MAX, pending: 1, desired: 0 };
    assert_eq!(TaskCountMode::RunningPlusPending.task_count(huge), u64::MAX);
}

#[test]
fn desired_tasks_rounds_up() {
    let hundred = BacklogTarget::new(100.0).unwrap();
    assert_eq!(desired_tasks(0, hundred), 0);
    assert_eq!(desired_tasks(1, hundred), 1);
    assert_eq!(desired_tasks(100, hundred), 1);
    assert_eq!(desired_tasks(101, hundred), 2);
    assert_eq!(desired_tasks(1500, hundred), 15);
    let seven_tenths = BacklogTarget::new(0.7).unwrap();
    assert_eq!(desired_tasks(21, seven_tenths), 30);
}

#[test]
fn in_flight_utilisation_is_a_percentage() {
    assert_eq!(in_flight_cap_utilization(0, QueueKind::Standard), 0.0);
    assert_eq!(in_flight_cap_utilization(60_000, QueueKind::Standard), 50.0);
    assert_eq!(in_flight_cap_utilization(120_000, QueueKind::Fifo), 100.0);
    assert!(in_flight_cap_utilization(u64::MAX, QueueKind::Fifo).is_finite());
}

#[test]
fn sample_combines_policy_and_readings() {
    let readings = Readings {
        queue: QueueCounts { visible: 150, in_flight: 30, delayed: 6 },
        service: ServiceCounts { running: 3, pending: 3, desired: 6 },
        dlq_visible: Some(4),
    };
    let policy = BacklogPolicy {
        includes: BacklogIncludes { in_flight: true, delayed: false },
        task_count: TaskCountMode::RunningPlusPending,
    };
    let sample = policy.sample(readings, QueueKind::Standard, target(20.0));
    assert_eq!(sample.backlog, 180);
    assert_eq!(sample.task_count, 6);
    assert_eq!(sample.backlog_per_task, 30.0);
    assert_eq!(sample.desired_tasks, Some(9));
    assert_eq!(sample.in_flight_cap_utilization, 0.025);
    assert_eq!(sample.dlq_backlog, Some(4));
    let without_target = policy.sample(readings, QueueKind::Standard, None);
    assert_eq!(without_target.desired_tasks, None);
}

proptest! {
    /// Whatever the queue, the service and the (validated) target say, every
    /// datum a sample produces is one CloudWatch accepts.
    #[test]
    fn every_published_value_is_acceptable_to_cloudwatch(
        visible in any::<u64>(), in_flight in any::<u64>(), delayed in any::<u64>(),
        running in any::<u64>(), pending in any::<u64>(), desired in any::<u64>(),
        dlq in proptest::option::of(any::<u64>()),
        target in proptest::option::of(BacklogTarget::MIN..=BacklogTarget::MAX),
        includes in (any::<bool>(), any::<bool>()),
        mode in 0..3_u8,
    ) {
        let policy = BacklogPolicy {
            includes: BacklogIncludes { in_flight: includes.0, delayed: includes.1 },
            task_count: [TaskCountMode::Running, TaskCountMode::RunningPlusPending, TaskCountMode::Desired][mode as usize],
        };
        let readings = Readings {
            queue: QueueCounts { visible, in_flight, delayed },
            service: ServiceCounts { running, pending, desired },
            dlq_visible: dlq,
        };
        let target = target.and_then(BacklogTarget::new);
        let sample = policy.sample(readings, QueueKind::Fifo, target);
        let queue = QueueRef::parse("https://sqs.eu-west-1.amazonaws.com/1/q.fifo").unwrap();
        let target_ref = Target { queue, cluster: "c".into(), service: "s".into(), backlog_target: target };
        for datum in datums(&target_ref, &sample, std::time::SystemTime::UNIX_EPOCH) {
            prop_assert!(cloudwatch_accepts(datum.value), "{} = {}", datum.name, datum.value);
        }
        if sample.backlog > 0 && sample.task_count == 0 && let Some(target) = target {
            prop_assert!(sample.backlog_per_task > target.get());
        }
    }
}
