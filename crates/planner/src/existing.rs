//! `recommend --scaling-target existing`: a service that already scales on
//! its CPU keeps its own scalable target, and the operator adds a target
//! tracking policy on `ScalingLoad` beside the CPU one. Application Auto
//! Scaling then scales out when either asks and in only when both are
//! ready. The search is over `TargetLoadPercent` alone: `MinTasks` and
//! `MaxTasks` are the operator's target's, which the stack leaves alone.

use backlog_publisher::BacklogTarget;

use crate::recommend::{Candidate, Recommendation, Robustness, evaluate, search_settings};
use crate::sim::Scenario;
use crate::sim::cpu::CpuPolicy;
use crate::sim::policy::Policy;

/// The CPU policy alone, and the load beside it at each target.
#[derive(Debug, Clone)]
pub struct Existing {
    /// The service's CPU policy.
    pub cpu: CpuPolicy,
    /// The service as it scales today: its CPU policy alone, on every seed.
    pub cpu_alone: Candidate,
    /// The load beside the CPU policy, searched as `recommend` searches.
    pub beside: Recommendation,
}

/// `scenario` on the service's own target with `cpu`: the queue's policy
/// beside it, or (`queue_policy` false) not there at all.
pub fn on_existing_target(scenario: &Scenario, cpu: CpuPolicy, queue_policy: bool) -> Scenario {
    let mut scenario = scenario.clone();
    scenario.scaling.cpu = Some(cpu);
    scenario.scaling.queue_policy = queue_policy;
    scenario
}

/// Runs the CPU policy alone and searches the load's target beside it.
pub fn search(scenario: &Scenario, cpu: CpuPolicy, robustness: Robustness) -> Existing {
    let min_tasks = scenario.scaling.min_tasks;
    let alone = on_existing_target(scenario, cpu, false);
    let unused = scenario.target_of(Policy::Load);
    let cpu_alone = evaluate(&alone, Policy::Load, (unused, min_tasks), robustness);
    let settings: Vec<(BacklogTarget, u64)> = Policy::Load
        .targets()
        .iter()
        .filter_map(|&value| Some((BacklogTarget::new(value)?, min_tasks)))
        .collect();
    let beside = on_existing_target(scenario, cpu, true);
    let beside = search_settings(&beside, Policy::Load, &settings, robustness);
    Existing { cpu, cpu_alone, beside }
}

/// What adding `added` changes against the CPU policy alone, as the text
/// and the JSON say it: task-minutes, late messages and reversals a day,
/// each a mean over the seeds (before, after).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Change {
    /// Mean task-minutes.
    pub task_minutes: (f64, f64),
    /// Mean messages that missed the SLO.
    pub late: (f64, f64),
    /// Mean reversals a day.
    pub reversals_per_day: (f64, f64),
}

impl Change {
    /// `added` against `alone`.
    pub fn of(alone: &Candidate, added: &Candidate) -> Self {
        Self {
            task_minutes: (alone.task_minutes, added.task_minutes),
            late: (alone.late, added.late),
            reversals_per_day: (alone.reversals_per_day, added.reversals_per_day),
        }
    }
}
