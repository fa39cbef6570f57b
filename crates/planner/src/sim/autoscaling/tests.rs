//! The scaler's rules, each against the AWS page it comes from.

use super::*;

fn config() -> ScalingConfig {
    ScalingConfig {
        target: BacklogTarget::new(100.0).unwrap(),
        min_tasks: 0,
        max_tasks: 50,
        scale_in_cooldown: 300,
        step_cooldown: 300,
        zero_capacity: ZeroCapacity::Stay,
        step_scale_in: None,
        cpu: None,
        queue_policy: true,
    }
}

fn eval(high: AlarmState, low: AlarmState, metric: f64, wake_up: bool) -> Evaluation {
    Evaluation { high, low, metric: Some(metric), wake_up, step_low: AlarmState::Ok, cpu: None }
}

use AlarmState::{Alarm, Ok};

#[test]
fn the_aws_worked_example_scales_ten_tasks_to_fifteen() {
    // 1,500 messages, 10 tasks: backlog per task 150 by core's maths.
    let target = backlog_publisher::BacklogTarget::new(100.0).unwrap();
    let metric = backlog_publisher::backlog::backlog_per_task(1_500, 10, Some(target));
    assert_eq!(metric, 150.0);
    assert_eq!(tracking_capacity(10, metric, 100.0), 15);
    let mut scaler = Scaler::new(config(), 10);
    let action = scaler.evaluate(180, 10, eval(Alarm, Ok, metric, false));
    assert_eq!(action, Some(ScalingAction { at: 180, from: 10, to: 15 }));
}

#[test]
fn capacity_is_a_ceiling_not_a_rounding() {
    assert_eq!(tracking_capacity(3, 101.0, 100.0), 4);
    assert_eq!(tracking_capacity(7, 100.0 / 7.0 * 3.0, 100.0), 3);
    assert_eq!(tracking_capacity(0, 1e9, 100.0), 0);
    assert_eq!(tracking_capacity(4, 0.0, 100.0), 0);
}

#[test]
fn zero_running_tasks_stay_at_zero_unless_told_otherwise() {
    let mut stay = Scaler::new(config(), 0);
    assert_eq!(stay.evaluate(60, 0, eval(Alarm, Ok, 500.0, false)), None);
    let mut as_one =
        Scaler::new(ScalingConfig { zero_capacity: ZeroCapacity::AsOne, ..config() }, 0);
    assert_eq!(as_one.evaluate(60, 0, eval(Alarm, Ok, 500.0, false)).map(|a| a.to), Some(5));
}

#[test]
fn the_wake_up_step_adds_one_task_then_waits_for_its_cooldown() {
    let mut scaler = Scaler::new(config(), 0);
    let wake = eval(Ok, Ok, 200.0, true);
    assert_eq!(scaler.evaluate(60, 0, wake).map(|a| a.to), Some(1));
    assert_eq!(scaler.evaluate(120, 0, wake), None, "inside the step cooldown");
    assert_eq!(scaler.evaluate(360, 0, wake).map(|a| a.to), Some(2));
}

#[test]
fn scale_out_wins_and_scale_in_respects_its_cooldown_but_not_the_other_way() {
    let mut scaler = Scaler::new(config(), 10);
    // Both alarms cannot be in ALARM on one metric; a high alarm beats the step's +1.
    assert_eq!(scaler.evaluate(60, 10, eval(Alarm, Ok, 300.0, true)).map(|a| a.to), Some(30));
    assert_eq!(scaler.evaluate(120, 30, eval(Ok, Alarm, 10.0, false)).map(|a| a.to), Some(3));
    assert_eq!(scaler.evaluate(180, 3, eval(Ok, Alarm, 10.0, false)), None, "scale-in cooldown");
    assert_eq!(scaler.evaluate(240, 3, eval(Alarm, Ok, 200.0, false)).map(|a| a.to), Some(6));
    assert_eq!(scaler.evaluate(420, 6, eval(Ok, Alarm, 0.0, false)).map(|a| a.to), Some(0));
}

#[test]
fn the_desired_count_stays_within_min_and_max() {
    let mut scaler = Scaler::new(ScalingConfig { min_tasks: 2, max_tasks: 8, ..config() }, 0);
    assert_eq!(scaler.desired(), 2);
    assert_eq!(scaler.evaluate(60, 2, eval(Alarm, Ok, 1e6, false)).map(|a| a.to), Some(8));
    assert_eq!(scaler.evaluate(120, 8, eval(Ok, Alarm, 0.0, false)).map(|a| a.to), Some(2));
    assert_eq!(scaler.evaluate(900, 2, eval(Ok, Alarm, 0.0, false)), None);
    let missing =
        Evaluation { high: Ok, low: Alarm, metric: None, wake_up: false, step_low: Ok, cpu: None };
    assert_eq!(scaler.evaluate(1_800, 2, missing), None);
}

#[test]
fn percent_changes_round_as_application_auto_scaling_rounds_them() {
    let cases = [
        (10, -33, -3),
        (3, -33, -1),
        (1, -80, -1),
        (10, -80, -8),
        (2, -60, -1),
        (4, 25, 1),
        (0, -80, 0),
    ];
    for (capacity, percent, expected) in cases {
        assert_eq!(percent_change(capacity, percent), expected, "{capacity} × {percent} %");
    }
}

#[test]
fn the_load_scale_in_step_leaves_what_the_load_needs_and_waits_for_its_cooldown() {
    let config = ScalingConfig { step_scale_in: Some(120), ..config() };
    let low = |metric: f64| Evaluation { step_low: Alarm, ..eval(Ok, Ok, metric, false) };
    let mut scaler = Scaler::new(config, 10);
    // 0.25 of the target: 2.5 tasks' worth of 10; −60 % leaves 4.
    assert_eq!(scaler.evaluate(60, 10, low(25.0)).map(|a| a.to), Some(4));
    assert_eq!(scaler.evaluate(120, 4, low(10.0)), None, "inside the step's cooldown");
    assert_eq!(scaler.evaluate(180, 4, low(10.0)).map(|a| a.to), Some(1));
    // Target tracking's own low alarm no longer scales in.
    assert_eq!(scaler.evaluate(900, 1, eval(Ok, Alarm, 0.0, false)), None);
    assert_eq!(scaler.evaluate(960, 1, low(0.0)).map(|a| a.to), Some(0));
}

fn beside_cpu(queue: Evaluation, high: AlarmState, low: AlarmState, cpu: f64) -> Evaluation {
    Evaluation { cpu: Some(CpuEvaluation { high, low, metric: Some(cpu) }), ..queue }
}

fn with_cpu(queue_policy: bool) -> ScalingConfig {
    let cpu = CpuPolicy {
        target_percent: 50.0,
        scale_in_cooldown: 300,
        idle_percent: 0.0,
        percent_per_message: 1.0,
    };
    ScalingConfig { cpu: Some(cpu), queue_policy, ..config() }
}

#[test]
fn beside_a_cpu_policy_either_scales_out_and_both_must_agree_to_scale_in() {
    let mut scaler = Scaler::new(with_cpu(true), 4);
    // CPU at 100 % of 4 tasks for a target of 50 asks 8; the queue's 150 of 100 asks 6.
    let out = beside_cpu(eval(Alarm, Ok, 150.0, false), Alarm, Ok, 100.0);
    assert_eq!(scaler.evaluate(60, 4, out).map(|a| a.to), Some(8), "the larger scale-out");
    // The queue is ready to scale in, the CPU is not: nothing.
    let queue_only = beside_cpu(eval(Ok, Alarm, 10.0, false), Ok, Ok, 40.0);
    assert_eq!(scaler.evaluate(600, 8, queue_only), None, "the CPU is not ready");
    // Both ready: the larger of their capacities, ⌈8·10/100⌉ = 1 and ⌈8·25/50⌉ = 4.
    let both = beside_cpu(eval(Ok, Alarm, 10.0, false), Ok, Alarm, 25.0);
    assert_eq!(scaler.evaluate(660, 8, both).map(|a| a.to), Some(4));
    assert_eq!(scaler.evaluate(720, 4, both), None, "the scale-in cooldown");
}

#[test]
fn the_cpu_policy_alone_reads_no_queue_metric_and_cannot_wake_from_zero() {
    let mut scaler = Scaler::new(with_cpu(false), 2);
    let queue_high = beside_cpu(eval(Alarm, Ok, 1e6, false), Ok, Ok, 40.0);
    assert_eq!(scaler.evaluate(60, 2, queue_high), None, "no queue policy on the target");
    let idle = beside_cpu(eval(Ok, Ok, 0.0, false), Ok, Alarm, 0.0);
    assert_eq!(scaler.evaluate(600, 2, idle).map(|a| a.to), Some(0));
    let no_datapoint =
        Evaluation { cpu: Some(CpuEvaluation { high: Alarm, low: Ok, metric: None }), ..idle };
    assert_eq!(scaler.evaluate(1_200, 0, no_datapoint), None, "no task, no CPU");
}
