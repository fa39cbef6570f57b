//! The search for the cheapest `TargetBacklogPerTask` and `MinTasks` that
//! meet the SLO with our policy, robustly: on several seeds, with a margin,
//! and with the fewest scaling reversals among settings that cost about the same.

use backlog_publisher::BacklogTarget;

use crate::sim::policy::Policy;
use crate::sim::{Scenario, run};
use crate::stats::Outcome;

pub use crate::sim::policy::{LOAD_TARGETS, TARGETS};

/// Minimum task counts tried.
pub const MIN_TASKS: [u64; 3] = [0, 1, 2];

/// Settings within this fraction of the cheapest count as a tie, won by
/// fewer reversals: a setting that flaps costs what its task-minutes do not say.
pub const NEAR_TIE: f64 = 0.05;

/// Reversals of the scaling direction an hour beyond which no setting of
/// any policy counts as meeting the objective: every reversal is a task
/// stopped while work comes and another started (its start-up, a cold
/// cache, a deregistration), which its task-minutes do not show.
pub const MAX_REVERSALS_PER_HOUR: f64 = 2.0;

/// Whether `candidate` keeps [`MAX_REVERSALS_PER_HOUR`].
pub fn within_reversal_bound(candidate: &Candidate) -> bool {
    candidate.reversals_per_day <= MAX_REVERSALS_PER_HOUR * 24.0 + 1e-9
}

/// How hard a setting must meet the SLO to count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Robustness {
    /// Seeds each setting runs on (`--seeds`); it must meet the SLO on every one.
    pub seeds: u32,
    /// The SLO quantile's wait must be at most this fraction of the SLO
    /// (`--margin`) on every seed.
    pub margin: f64,
}

impl Default for Robustness {
    fn default() -> Self {
        Self { seeds: 5, margin: 0.8 }
    }
}

/// One setting and what it did over the seeds.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// TargetBacklogPerTask.
    pub target: BacklogTarget,
    /// MinTasks.
    pub min_tasks: u64,
    /// The run on the scenario's own seed, to show and draw.
    pub outcome: Outcome,
    /// Mean billed task-minutes over the seeds.
    pub task_minutes: f64,
    /// Mean messages that missed the SLO (the table's SLO misses) over the seeds.
    pub late: f64,
    /// The longest SLO-quantile wait over the seeds, seconds (`None`: nothing processed).
    pub worst_wait: Option<u64>,
    /// Seeds on which it met the SLO with the margin.
    pub seeds_met: u32,
    /// Seeds on which the desired count reached `MaxTasks`.
    pub seeds_at_max: u32,
    /// Scaling actions and reversals per day, mean over the seeds.
    pub actions_per_day: f64,
    /// See `actions_per_day`.
    pub reversals_per_day: f64,
}

/// The search's result.
#[derive(Debug, Clone)]
pub struct Recommendation {
    /// Settings simulated (each on every seed).
    pub tried: usize,
    /// How hard a setting had to meet the SLO.
    pub robustness: Robustness,
    /// The cheapest that meets it within [`MAX_REVERSALS_PER_HOUR`]
    /// (near-ties to fewer reversals), if any does.
    pub best: Option<Candidate>,
    /// The cheapest that meets the SLO at any number of reversals, when it
    /// is not `best`: what the bound costs.
    pub cheapest_flapping: Option<Candidate>,
    /// The setting that met it on the most seeds, then with the shortest worst wait.
    pub closest: Option<Candidate>,
    /// Every setting, in search order, for `--verbose`.
    pub candidates: Vec<Candidate>,
}

/// Runs `scenario` at one setting on each seed.
pub(crate) fn evaluate(
    scenario: &Scenario,
    policy: Policy,
    (target, min_tasks): (BacklogTarget, u64),
    r: Robustness,
) -> Candidate {
    let (quantile, slo) = (scenario.slo.quantile, scenario.slo.latency_seconds);
    let days = (scenario.trace.seconds().max(1) as f64) / 86_400.0;
    let mut first = None;
    let (mut minutes, mut actions, mut reversals, mut late) = (0.0, 0.0, 0.0, 0.0);
    let (mut worst_wait, mut seeds_met, mut seeds_at_max) = (Some(0), 0, 0);
    for offset in 0..u64::from(r.seeds.max(1)) {
        let mut trial = scenario.with_target(policy, target);
        trial.scaling.min_tasks = min_tasks;
        trial.seed = scenario.seed.wrapping_add(offset);
        let outcome = run(&trial, policy);
        let wait = outcome.waits.quantile(quantile);
        worst_wait = match (worst_wait, wait) {
            (Some(a), Some(b)) => Some(a.max(b)),
            _ => None,
        };
        // With no message to wait, there is no wait to keep within the margin: a
        // run that received nothing meets the SLO when nothing was left late.
        let within = wait.map_or(outcome.counted == 0, |w| w as f64 <= r.margin * slo as f64);
        seeds_met += u32::from(outcome.meets_slo(quantile) && within);
        seeds_at_max += u32::from(outcome.peak_desired() >= trial.scaling.max_tasks);
        minutes += outcome.task_minutes();
        late += outcome.slo_misses() as f64;
        actions += outcome.actions.len() as f64 / days;
        reversals += outcome.direction_changes() as f64 / days;
        first.get_or_insert(outcome);
    }
    let n = f64::from(r.seeds.max(1));
    Candidate {
        target,
        min_tasks,
        outcome: first.unwrap_or_else(|| run(scenario, policy)),
        task_minutes: minutes / n,
        late: late / n,
        worst_wait,
        seeds_met,
        seeds_at_max,
        actions_per_day: actions / n,
        reversals_per_day: reversals / n,
    }
}

/// Tries every target × min tasks (within the scenario's max) on `scenario`
/// with the template's policy.
pub fn search(scenario: &Scenario, robustness: Robustness) -> Recommendation {
    search_policy(scenario, Policy::TEMPLATE, robustness)
}

/// The same search for any policy: each at its own best setting, for a fair comparison.
pub fn search_policy(
    scenario: &Scenario,
    policy: Policy,
    robustness: Robustness,
) -> Recommendation {
    let mut settings = Vec::new();
    for &min_tasks in MIN_TASKS.iter().filter(|&&min| min <= scenario.scaling.max_tasks) {
        for target in policy.targets().iter().filter_map(|&value| BacklogTarget::new(value)) {
            settings.push((target, min_tasks));
        }
    }
    search_settings(scenario, policy, &settings, robustness)
}

/// The search over `settings` (target, MinTasks), by the rules above.
pub(crate) fn search_settings(
    scenario: &Scenario,
    policy: Policy,
    settings: &[(BacklogTarget, u64)],
    robustness: Robustness,
) -> Recommendation {
    let candidates =
        crate::parallel::map(settings, |&setting| evaluate(scenario, policy, setting, robustness));
    let seeds = robustness.seeds.max(1);
    let met_slo = |c: &&Candidate| c.seeds_met == seeds;
    let meeting: Vec<&Candidate> =
        candidates.iter().filter(met_slo).filter(|c| within_reversal_bound(c)).collect();
    let cheapest_flapping = candidates
        .iter()
        .filter(met_slo)
        .filter(|c| !within_reversal_bound(c))
        .min_by(|a, b| a.task_minutes.total_cmp(&b.task_minutes))
        .filter(|c| meeting.iter().all(|m| c.task_minutes < m.task_minutes))
        .cloned();
    let cheapest = meeting.iter().map(|c| c.task_minutes).fold(f64::INFINITY, f64::min);
    let best = meeting
        .iter()
        .filter(|c| c.task_minutes <= cheapest * (1.0 + NEAR_TIE))
        .min_by(|a, b| {
            (a.reversals_per_day, a.task_minutes)
                .partial_cmp(&(b.reversals_per_day, b.task_minutes))
                .unwrap_or(std::cmp::Ordering::Equal)
        })
        .map(|c| (*c).clone());
    let closest = candidates
        .iter()
        .max_by_key(|c| (c.seeds_met, std::cmp::Reverse(c.worst_wait.unwrap_or(u64::MAX))))
        .cloned();
    Recommendation {
        tried: candidates.len(),
        robustness,
        best,
        cheapest_flapping,
        closest,
        candidates,
    }
}

/// The signals the template deploys besides the load, each at its own best
/// setting: what `recommend` weighs the load against.
pub fn deployable_alternatives(
    scenario: &Scenario,
    robustness: Robustness,
) -> Vec<(Policy, Recommendation)> {
    [Policy::Ours, Policy::MetricMath]
        .into_iter()
        .map(|policy| (policy, search_policy(scenario, policy, robustness)))
        .collect()
}

/// What kept the closest setting from meeting the SLO, for a person: the
/// limit that bound, and how far to move it.
pub fn binding_limit(scenario: &Scenario, closest: &Candidate, robustness: Robustness) -> String {
    let (max, seeds) = (scenario.scaling.max_tasks, robustness.seeds.max(1));
    if closest.seeds_at_max > 0 {
        // The busiest minute's arrivals, at the mean service time, over the slots of one task.
        let busiest = scenario
            .trace
            .arrivals
            .chunks(60)
            .map(|m| m.iter().map(|&n| u64::from(n)).sum::<u64>())
            .max()
            .unwrap_or(0);
        let per_task =
            f64::from(scenario.workers.slots) / scenario.workers.service.mean().max(1e-9);
        let needed = ((busiest as f64 / 60.0) / per_task).ceil() as u64;
        return format!(
            "peak reached MaxTasks={max} on {} of {seeds} seeds: raise MaxTasks to at least {} \
             (the busiest minute, {busiest} messages, needs {needed} tasks of {} at {:.2} s a \
             message), or shorten the service time",
            closest.seeds_at_max,
            needed.max(max + 1),
            scenario.workers.slots,
            scenario.workers.service.mean()
        );
    }
    format!(
        "no setting's p{:.0} wait stayed within {:.0} % of the {} s SLO on all {seeds} seeds \
         (the closest: {}): every message waits at least the start-up and the alarms' minutes; \
         raise MinTasks past {}, or loosen --margin or the SLO",
        scenario.slo.quantile * 100.0,
        robustness.margin * 100.0,
        scenario.slo.latency_seconds,
        closest.worst_wait.map_or("none processed".to_owned(), |w| format!("{w} s")),
        MIN_TASKS[MIN_TASKS.len() - 1]
    )
}

/// When every target searched at the best's `MinTasks` ran as the best did
/// (the same task-minutes, late messages and reversals as printed): the
/// trace does not tell them apart, and the note that says so.
pub fn all_targets_tie(found: &Recommendation, knob: &str) -> Option<String> {
    let best = found.best.as_ref()?;
    let alike = |c: &&Candidate| c.min_tasks == best.min_tasks;
    let same = |c: &Candidate| {
        same_cost(c.task_minutes, best.task_minutes)
            && same_cost(c.late, best.late)
            && same_cost(c.reversals_per_day, best.reversals_per_day)
            && c.seeds_met == best.seeds_met
    };
    let at_min: Vec<&Candidate> = found.candidates.iter().filter(alike).collect();
    (at_min.len() > 1 && at_min.iter().all(|c| same(c))).then(|| {
        format!(
            "every {knob} searched at MinTasks {} gives the same runs here: this trace does not \
             tell them apart, so {knob}={} is no better than any other (the template's default \
             is {})",
            best.min_tasks,
            best.target.get(),
            backlog_publisher::load::LoadSettings::DEFAULT.target_percent,
        )
    })
}

/// Whether two mean task-minutes are the same figure as printed (to 0.1):
/// a difference below what the output shows is neither cheaper nor dearer.
pub fn same_cost(a: f64, b: f64) -> bool {
    format!("{a:.1}") == format!("{b:.1}")
}

/// The cheapest of `alternatives` at its best, when it costs less than
/// `ours` by the figures printed (or ours meets the SLO at no setting).
pub fn cheaper_alternative<'a>(
    ours: Option<&crate::recommend::Candidate>,
    alternatives: &'a [(Policy, crate::recommend::Recommendation)],
) -> Option<(Policy, &'a crate::recommend::Candidate)> {
    alternatives
        .iter()
        .filter_map(|(p, r)| Some((*p, r.best.as_ref()?)))
        .filter(|(_, c)| {
            ours.is_none_or(|o| {
                c.task_minutes < o.task_minutes && !same_cost(c.task_minutes, o.task_minutes)
            })
        })
        .min_by(|a, b| a.1.task_minutes.total_cmp(&b.1.task_minutes))
}
