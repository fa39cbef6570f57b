//! The search for the cheapest `TargetBacklogPerTask` and `MinTasks` that
//! meet the SLO with our policy.

use backlog_publisher::BacklogTarget;

use crate::policy::Policy;
use crate::sim::{Scenario, run};
use crate::stats::Outcome;

/// Targets tried: roughly geometric, wide enough for fast and slow services.
pub const TARGETS: [f64; 16] = [
    2.0, 5.0, 10.0, 15.0, 20.0, 30.0, 50.0, 75.0, 100.0, 150.0, 200.0, 300.0, 500.0, 750.0,
    1_000.0, 2_000.0,
];

/// Minimum task counts tried.
pub const MIN_TASKS: [u64; 3] = [0, 1, 2];

/// One setting and what it did.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// TargetBacklogPerTask.
    pub target: BacklogTarget,
    /// MinTasks.
    pub min_tasks: u64,
    /// The run.
    pub outcome: Outcome,
}

/// The search's result.
#[derive(Debug, Clone)]
pub struct Recommendation {
    /// Settings simulated.
    pub tried: usize,
    /// The cheapest that meets the SLO (fewest task-minutes, then fewest
    /// misses, then the larger target), if any does.
    pub best: Option<Candidate>,
    /// The setting with the fewest SLO misses, shown when none meets it.
    pub closest: Option<Candidate>,
}

/// Tries every target × min tasks (within the scenario's max) on `scenario`.
pub fn search(scenario: &Scenario) -> Recommendation {
    let mut candidates = Vec::new();
    for &min_tasks in MIN_TASKS.iter().filter(|&&min| min <= scenario.scaling.max_tasks) {
        for target in TARGETS.iter().filter_map(|&value| BacklogTarget::new(value)) {
            let mut trial = scenario.clone();
            trial.scaling.target = target;
            trial.scaling.min_tasks = min_tasks;
            let outcome = run(&trial, Policy::Ours);
            candidates.push(Candidate { target, min_tasks, outcome });
        }
    }
    let quantile = scenario.slo.quantile;
    let tried = candidates.len();
    let best =
        candidates
            .iter()
            .filter(|c| c.outcome.meets_slo(quantile))
            .min_by(|a, b| {
                (a.outcome.task_seconds, a.outcome.slo_misses(), std::cmp::Reverse(a.target)).cmp(
                    &(b.outcome.task_seconds, b.outcome.slo_misses(), std::cmp::Reverse(b.target)),
                )
            })
            .cloned();
    let closest =
        candidates.iter().min_by_key(|c| (c.outcome.slo_misses(), c.outcome.task_seconds)).cloned();
    Recommendation { tried, best, closest }
}
