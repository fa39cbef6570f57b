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
        self.tracking_in(now, eval, computed, cpu, cpu_computed)
    }

    /// Target tracking's scale-in: only when every policy on the target is
    /// ready to and out of its cooldown, to the largest capacity they compute.
    fn tracking_in(
        &mut self,
        now: u64,
        eval: Evaluation,
        computed: Option<u64>,
        cpu: Option<(CpuPolicy, CpuEvaluation)>,
        cpu_computed: Option<u64>,
    ) -> Option<ScalingAction> {
        let cfg = self.config;
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
mod tests;
