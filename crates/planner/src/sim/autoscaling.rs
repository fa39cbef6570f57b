//! Application Auto Scaling on an ECS service's desired count: a target
//! tracking policy, optionally the template's step-scaling wake-up from zero,
//! and the rules that combine them.

use backlog_publisher::BacklogTarget;

use crate::sim::cloudwatch::AlarmState;
use crate::sim::cpu::{CpuEvaluation, CpuPolicy};

/// What target tracking does when no task runs. The AWS documentation gives
/// capacity in proportion to the current capacity and does not say what
/// happens at zero (the reason the template adds a step policy), so the
/// simulation lets you choose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ZeroCapacity {
    /// ⌈0 · M / T⌉ = 0: target tracking alone never leaves zero.
    #[default]
    Stay,
    /// Computed as if one task ran: ⌈M / T⌉.
    AsOne,
}

/// The scalable target and its policies' settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScalingConfig {
    /// `TargetValue` of the target tracking policy.
    pub target: BacklogTarget,
    /// `MinCapacity`.
    pub min_tasks: u64,
    /// `MaxCapacity`.
    pub max_tasks: u64,
    /// `ScaleInCooldown` (the template: 300 s).
    pub scale_in_cooldown: u64,
    /// The wake-up step policy's `Cooldown` (the template: 300 s).
    pub step_cooldown: u64,
    /// Target tracking at zero running tasks.
    pub zero_capacity: ZeroCapacity,
    /// With `Some(cooldown)`, target tracking's scale-in is disabled
    /// (`DisableScaleIn`) and the template's load scale-in step policy
    /// removes tasks instead ([`SCALE_IN_STEPS`]).
    pub step_scale_in: Option<u64>,
    /// The service's own CPU target tracking policy on the same target
    /// (`ScalingTarget=existing`), beside the queue's.
    pub cpu: Option<CpuPolicy>,
    /// Whether the queue's target tracking policy is on the target: `false`
    /// for a service on its CPU policy alone.
    pub queue_policy: bool,
}

/// The load scale-in step policy (`LoadScaleInPolicy`): its alarm is the load
/// below [`SCALE_IN_THRESHOLD`] × the target for 3 of 3 minutes, and each
/// step, by the alarm's latest value as a fraction of the target (upper
/// bound), removes a percentage of the tasks. Each step leaves the load at
/// most 0.9 × the target, rounding included (two tasks at 0.45 become one at
/// 0.9), so target tracking's scale-out (above the target) never undoes it.
pub const SCALE_IN_STEPS: [(f64, i64); 3] = [(0.15, -80), (0.3, -60), (SCALE_IN_THRESHOLD, -33)];

pub use crate::sim::cloudwatch::SCALE_IN_THRESHOLD;

// One held task stays above the threshold, two held tasks come down below it.
const _: () = {
    let hold = backlog_publisher::load::HOLD_FRACTION;
    assert!(hold > SCALE_IN_THRESHOLD && hold / 2.0 < SCALE_IN_THRESHOLD);
};

/// A `PercentChangeInCapacity` adjustment as Application Auto Scaling rounds
/// it: above 1 down, between 0 and 1 to 1, between -1 and 0 to -1, below -1
/// up ("Step scaling policies for Application Auto Scaling", adjustment
/// types).
pub fn percent_change(capacity: u64, percent: i64) -> i64 {
    let exact = capacity as f64 * percent as f64 / 100.0;
    match exact {
        e if e >= 1.0 => e.floor() as i64,
        e if e > 0.0 => 1,
        e if e <= -1.0 => e.ceil() as i64,
        e if e < 0.0 => -1,
        _ => 0,
    }
}

/// What one alarm evaluation saw.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Evaluation {
    /// Target tracking's high alarm.
    pub high: AlarmState,
    /// Target tracking's low alarm.
    pub low: AlarmState,
    /// The metric's latest period, which the capacity is computed from.
    pub metric: Option<f64>,
    /// The wake-up alarm is in ALARM (always `false` without that policy).
    pub wake_up: bool,
    /// The load scale-in alarm (`Ok` without that policy).
    pub step_low: AlarmState,
    /// The CPU policy's alarms (`None` without that policy).
    pub cpu: Option<CpuEvaluation>,
}

/// A change of the desired count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScalingAction {
    /// When, in seconds from the start.
    pub at: u64,
    /// Desired count before.
    pub from: u64,
    /// Desired count after.
    pub to: u64,
}

/// Target tracking's capacity: ⌈R · M / T⌉ from the running count R, the
/// metric M and the target T — the AWS guide's worked example: 10 tasks at
/// 150 messages each with a target of 100 give 15 ("Scale Amazon ECS services
/// based on an Amazon SQS queue",
/// <https://docs.aws.amazon.com/AmazonECS/latest/developerguide/service-autoscaling-queue.html>).
/// Rounded to nine decimals before the ceiling, so floating-point noise
/// (15.000000000000002) does not add a task.
pub fn tracking_capacity(running: u64, metric: f64, target: f64) -> u64 {
    let exact = running as f64 * metric / target;
    let rounded = (exact * 1e9).round() / 1e9;
    if rounded.is_finite() && rounded > 0.0 { rounded.ceil() as u64 } else { 0 }
}

/// The scalable target's desired count and the cooldown clocks.
#[derive(Debug, Clone)]
pub struct Scaler {
    config: ScalingConfig,
    desired: u64,
    last_scale_in: Option<u64>,
    last_step: Option<u64>,
    last_step_in: Option<u64>,
}

impl Scaler {
    /// Starts at `initial` tasks, held within the min and max.
    pub fn new(config: ScalingConfig, initial: u64) -> Self {
        let desired = initial.clamp(config.min_tasks, config.max_tasks);
        Self { config, desired, last_scale_in: None, last_step: None, last_step_in: None }
    }

    /// The service's desired count.
    pub fn desired(&self) -> u64 {
        self.desired
    }

    /// One evaluation at `now`, with `running` tasks. An alarm in ALARM runs
    /// its policy again at every evaluation: for Auto Scaling actions "the
    /// alarm continues to invoke the action once per minute that the alarm
    /// remains in the new state" ("Using Amazon CloudWatch alarms", alarm
    /// actions, <https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/AlarmThatSendsEmail.html>).
    pub fn evaluate(&mut self, now: u64, running: u64, eval: Evaluation) -> Option<ScalingAction> {
        let cfg = self.config;
        let base = match (running, cfg.zero_capacity) {
            (0, ZeroCapacity::AsOne) => 1,
            _ => running,
        };
        let computed = eval
            .metric
            .filter(|_| cfg.queue_policy)
            .map(|metric| tracking_capacity(base, metric, cfg.target.get()));
        // The CPU policy has no datapoint at zero tasks, so its capacity is from the running ones.
        let cpu = cfg.cpu.zip(eval.cpu);
        let cpu_computed = cpu.and_then(|(policy, cpu)| {
            cpu.metric.map(|metric| tracking_capacity(running, metric, policy.target_percent))
        });

        // Scale-out wins: the largest scale-out any policy asks for is applied
        // ("Multiple scaling policies": Application Auto Scaling scales out if
        // any policy is ready to scale out, and scales in only if all target
        // tracking policies are ready to scale in; overview page above).
        // Tasks still starting are part of the desired count, so a scale-out
        // during `ScaleOutCooldown` happens only when the computed capacity
        // exceeds it (the page below: the capacity the previous scale-out
        // added "is calculated as part of the desired capacity for the next
        // scale out").
        let asks_out = |high: AlarmState, capacity: Option<u64>| match (high, capacity) {
            (AlarmState::Alarm, Some(capacity)) if capacity > self.desired => Some(capacity),
            _ => None,
        };
        let tracking_out = asks_out(eval.high, computed)
            .max(cpu.and_then(|(_, cpu)| asks_out(cpu.high, cpu_computed)));
        // The step policy's `Cooldown`: a further step activity waits until it
        // has passed ("Step scaling policies for Application Auto Scaling",
        // https://docs.aws.amazon.com/autoscaling/application/userguide/application-auto-scaling-step-scaling-policies.html).
        // ChangeInCapacity +1 adds a task whatever the current capacity.
        let step_ready = self.last_step.is_none_or(|last| now >= last + cfg.step_cooldown);
        let step_out =
            (eval.wake_up && step_ready).then_some(self.desired + crate::defaults::WAKE_UP_STEP);
        let out = tracking_out.max(step_out).map(|capacity| capacity.min(cfg.max_tasks));
        if let Some(to) = out.filter(|&to| to > self.desired) {
            if step_out.is_some_and(|step| step >= tracking_out.unwrap_or(0)) {
                self.last_step = Some(now);
            }
            return Some(self.set(now, to));
        }

        // Scale-in: only out of its cooldown, which a scale-out does not wait
        // for (`ScaleInCooldown`: "if another alarm triggers a scale-out
        // activity during the cooldown period … it scales out the target
        // immediately";
        // https://docs.aws.amazon.com/autoscaling/application/APIReference/API_TargetTrackingScalingPolicyConfiguration.html).
        if let Some(cooldown) = cfg.step_scale_in {
            return self.step_in(now, eval, cooldown);
        }
        let cooled = |cooldown: u64| self.last_scale_in.is_none_or(|last| now >= last + cooldown);
        // Every target tracking policy on the target must be ready to scale in; the
        // capacity is the largest they compute, so none is left above its target.
        let queue_in = match cfg.queue_policy {
            false => Some(None),
            true if eval.low == AlarmState::Alarm && cooled(cfg.scale_in_cooldown) => {
                Some(Some(computed?))
            }
            true => None,
        };
        let cpu_in = match cpu {
            None => Some(None),
            Some((policy, cpu))
                if cpu.low == AlarmState::Alarm && cooled(policy.scale_in_cooldown) =>
            {
                Some(Some(cpu_computed?))
            }
            Some(_) => None,
        };
        let to = queue_in?.max(cpu_in?)?.max(cfg.min_tasks);
        if to < self.desired {
            self.last_scale_in = Some(now);
            return Some(self.set(now, to));
        }
        None
    }

    /// The load scale-in step policy: outside its cooldown, while its alarm
    /// is in ALARM, the step for the latest value.
    fn step_in(&mut self, now: u64, eval: Evaluation, cooldown: u64) -> Option<ScalingAction> {
        let cooled = self.last_step_in.is_none_or(|last| now >= last + cooldown);
        if eval.step_low != AlarmState::Alarm || !cooled {
            return None;
        }
        let ratio = eval.metric? / self.config.target.get();
        let (_, percent) = SCALE_IN_STEPS.iter().find(|(upper, _)| ratio < *upper)?;
        let change = percent_change(self.desired, *percent);
        let to = self.desired.saturating_add_signed(change).max(self.config.min_tasks);
        if to >= self.desired {
            return None;
        }
        self.last_step_in = Some(now);
        Some(self.set(now, to))
    }

    fn set(&mut self, at: u64, to: u64) -> ScalingAction {
        let action = ScalingAction { at, from: self.desired, to };
        self.desired = to;
        action
    }
}

#[cfg(test)]
mod tests {
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
        assert_eq!(
            scaler.evaluate(180, 3, eval(Ok, Alarm, 10.0, false)),
            None,
            "scale-in cooldown"
        );
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
        let missing = Evaluation {
            high: Ok,
            low: Alarm,
            metric: None,
            wake_up: false,
            step_low: Ok,
            cpu: None,
        };
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
}
