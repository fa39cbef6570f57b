//! `simulate cross-validate`: the template's load defaults chosen on some
//! traces and judged on one left out, beside the cheapest alternative at its
//! own best setting on it, and a bound on reversals every choice must keep.

use crate::recommend::{self, Candidate, Robustness};
use crate::sim::Scenario;
use crate::sim::policy::Policy;

pub use crate::recommend::MAX_REVERSALS_PER_HOUR as REVERSALS_PER_HOUR;

/// Reversals a day ours may have beyond the alternative's, where ours
/// keeps a task running (`MinTasks` ≥ 1): with a task always there, no
/// reversal is a wake-up from zero.
pub const REVERSALS_BEYOND_ALTERNATIVE: f64 = 1.0;

/// The task-minutes ratio the project aims for on every trace.
pub const GOAL: f64 = 0.9;

/// `LOAD_HOLD_SECONDS` values the defaults are chosen from.
pub const HOLDS: [f64; 3] = [900.0, 1_800.0, 3_600.0];

/// `MinTasks` values the defaults are chosen from.
pub const MIN_TASKS: [u64; 2] = [0, 1];

/// One setting of the load's defaults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Setting {
    /// `TargetLoadPercent`.
    pub target: f64,
    /// `LoadHoldSeconds`.
    pub hold: f64,
    /// `MinTasks`.
    pub min_tasks: u64,
}

/// Every setting tried, in one order.
pub fn settings() -> Vec<Setting> {
    let mut all = Vec::new();
    for &min_tasks in &MIN_TASKS {
        for &hold in &HOLDS {
            for &target in &recommend::LOAD_TARGETS {
                all.push(Setting { target, hold, min_tasks });
            }
        }
    }
    all
}

/// What one setting did over the seeds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Score {
    /// Mean billed task-minutes.
    pub task_minutes: f64,
    /// Mean reversals a day.
    pub reversals_per_day: f64,
    /// Seeds on which it met the SLO with the margin.
    pub seeds_met: u32,
    /// The setting's `MinTasks`.
    pub min_tasks: u64,
    /// The setting's target (percent for the load).
    pub target: f64,
}

impl From<&Candidate> for Score {
    fn from(c: &Candidate) -> Self {
        Self {
            task_minutes: c.task_minutes,
            reversals_per_day: c.reversals_per_day,
            seeds_met: c.seeds_met,
            min_tasks: c.min_tasks,
            target: c.target.get(),
        }
    }
}

/// What one trace showed.
#[derive(Debug, Clone)]
pub struct TraceResult {
    /// The trace's name.
    pub name: String,
    /// The cheapest alternative meeting the SLO at its own best setting,
    /// within [`REVERSALS_PER_HOUR`].
    pub alternative: Option<(Policy, Score)>,
    /// An alternative cheaper still at more reversals, if one is.
    pub flapping: Option<(Policy, Score)>,
    /// The load at each of [`settings`], in that order.
    pub load: Vec<Score>,
    /// Minutes simulated (the trace and its tail): what one task all along costs.
    pub run_minutes: f64,
    /// The reversals a day the bound allows ours on this trace at
    /// `MinTasks` 0, and at `MinTasks` ≥ 1.
    pub bound: (f64, f64),
}

impl TraceResult {
    /// Whether `load[index]` meets the SLO on every seed and keeps the bound.
    pub fn eligible(&self, index: usize, seeds: u32) -> bool {
        let c = &self.load[index];
        c.seeds_met == seeds && c.reversals_per_day <= self.bound_for(c) + 1e-9
    }

    /// The reversals a day allowed at `score`'s `MinTasks`.
    pub fn bound_for(&self, score: &Score) -> f64 {
        if score.min_tasks >= 1 { self.bound.1 } else { self.bound.0 }
    }

    /// Whether the alternative's best is its `MinTasks` running all along
    /// (within 5 %): a floor no setting that keeps a task through the
    /// trace's quiet spells goes under, so [`GOAL`] is out of reach there.
    pub fn floor_is_the_answer(&self) -> bool {
        self.alternative.as_ref().is_some_and(|(_, alt)| {
            alt.min_tasks >= 1 && alt.task_minutes <= 1.05 * alt.min_tasks as f64 * self.run_minutes
        })
    }

    /// `load[index]`'s task-minutes over the alternative's (`None` without one).
    pub fn ratio(&self, index: usize) -> Option<f64> {
        let (_, alternative) = self.alternative.as_ref()?;
        Some(self.load[index].task_minutes / alternative.task_minutes)
    }
}

/// Runs every alternative's search and the load's grid on `scenario`.
pub fn evaluate(scenario: &Scenario, robustness: Robustness) -> TraceResult {
    let searched: Vec<_> = Policy::ALL
        .iter()
        .filter(|policy| !policy.is_ours())
        .map(|&policy| (policy, recommend::search_policy(scenario, policy, robustness)))
        .collect();
    let cheapest = |pick: &dyn Fn(&recommend::Recommendation) -> Option<Score>| {
        searched
            .iter()
            .filter_map(|(policy, found)| Some((*policy, pick(found)?)))
            .min_by(|a, b| a.1.task_minutes.total_cmp(&b.1.task_minutes))
    };
    let alternative = cheapest(&|found| found.best.as_ref().map(Score::from));
    let flapping = cheapest(&|found| found.cheapest_flapping.as_ref().map(Score::from))
        .filter(|(_, f)| alternative.is_none_or(|(_, a)| f.task_minutes < a.task_minutes));
    let grid = settings();
    let load = crate::parallel::map(&grid, |setting| {
        let mut trial = scenario.clone();
        trial.publisher.load.hold_seconds = setting.hold;
        let target = backlog_publisher::BacklogTarget::new(setting.target);
        let target = target.unwrap_or(scenario.scaling.target);
        Score::from(&recommend::evaluate(
            &trial,
            Policy::Load,
            (target, setting.min_tasks),
            robustness,
        ))
    });
    let days = scenario.trace.seconds().max(1) as f64 / 86_400.0;
    let bound = bound(alternative.as_ref().map(|(_, alt)| alt), days);
    let run_minutes = (scenario.trace.seconds() + scenario.tail_seconds) as f64 / 60.0;
    TraceResult {
        name: scenario.trace.name.clone(),
        alternative,
        flapping,
        load,
        bound,
        run_minutes,
    }
}

/// Reversals a day allowed on a trace of `days`, at `MinTasks` 0 and at
/// `MinTasks` ≥ 1: [`REVERSALS_PER_HOUR`]; with a task always running, also
/// no more than the alternative's and one more a day (one more in all on a
/// trace shorter than a day).
pub fn bound(alternative: Option<&Score>, days: f64) -> (f64, f64) {
    let hourly = REVERSALS_PER_HOUR * 24.0;
    let beyond = REVERSALS_BEYOND_ALTERNATIVE / days.min(1.0);
    let floor = alternative.map_or(hourly, |alt| hourly.min(alt.reversals_per_day + beyond));
    (hourly, floor)
}

/// The setting chosen on `traces`: among those eligible on all of them,
/// the smallest worst ratio (ties within 1 % to the smaller mean ratio);
/// if none is eligible on all, the one eligible on the most.
pub fn choose(traces: &[&TraceResult], seeds: u32) -> Option<usize> {
    let count = traces.first()?.load.len();
    let score = |index: usize| {
        let eligible = traces.iter().filter(|t| t.eligible(index, seeds)).count();
        let ratios: Vec<f64> = traces.iter().filter_map(|t| t.ratio(index)).collect();
        let worst = ratios.iter().copied().fold(0.0, f64::max);
        let mean = ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len().max(1) as f64;
        (eligible, worst, mean.exp())
    };
    let scores: Vec<_> = (0..count).map(score).collect();
    let most = scores.iter().map(|s| s.0).max()?;
    let best_worst =
        scores.iter().filter(|s| s.0 == most).map(|s| s.1).fold(f64::INFINITY, f64::min);
    (0..count)
        .filter(|&i| scores[i].0 == most && scores[i].1 <= best_worst * 1.01)
        .min_by(|&a, &b| scores[a].2.total_cmp(&scores[b].2))
}

/// The best eligible setting on one trace alone (its in-sample optimum).
pub fn own_best(trace: &TraceResult, seeds: u32) -> Option<usize> {
    (0..trace.load.len())
        .filter(|&i| trace.eligible(i, seeds))
        .min_by(|&a, &b| trace.load[a].task_minutes.total_cmp(&trace.load[b].task_minutes))
}

/// One row of the table.
#[derive(Debug, Clone)]
pub struct Row {
    /// The trace.
    pub name: String,
    /// The setting chosen on every trace, and the one chosen without this one.
    pub all: Option<usize>,
    /// See `all`.
    pub held_out: Option<usize>,
    /// This trace's own best.
    pub own: Option<usize>,
}

/// Each trace left out in turn.
pub fn rows(results: &[TraceResult], seeds: u32) -> Vec<Row> {
    let every: Vec<&TraceResult> = results.iter().collect();
    let all = choose(&every, seeds);
    results
        .iter()
        .enumerate()
        .map(|(i, result)| {
            let others: Vec<&TraceResult> =
                results.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, r)| r).collect();
            Row {
                name: result.name.clone(),
                all,
                held_out: choose(&others, seeds),
                own: own_best(result, seeds),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn score(task_minutes: f64, reversals_per_day: f64, seeds_met: u32) -> Score {
        Score { task_minutes, reversals_per_day, seeds_met, min_tasks: 0, target: 150.0 }
    }

    /// A trace whose alternative costs 100 and whose load costs `costs` at
    /// settings 0, 1, 2 (all meeting the SLO unless `missed`).
    fn trace(
        name: &str,
        costs: [f64; 3],
        reversals: [f64; 3],
        missed: Option<usize>,
    ) -> TraceResult {
        let load = (0..3)
            .map(|i| score(costs[i], reversals[i], if missed == Some(i) { 4 } else { 5 }))
            .collect();
        TraceResult {
            name: name.to_owned(),
            alternative: Some((Policy::QueueDepth, score(100.0, 0.0, 5))),
            flapping: None,
            load,
            bound: (48.0, 48.0),
            run_minutes: 1_000.0,
        }
    }

    #[test]
    fn the_choice_minimises_the_worst_ratio_among_settings_eligible_everywhere() {
        let a = trace("a", [50.0, 80.0, 85.0], [0.0; 3], None);
        let b = trace("b", [120.0, 85.0, 86.0], [0.0; 3], None);
        // Setting 0 is cheapest on a but worst on b: the worst ratio decides (1.20 vs 0.85 vs 0.86).
        assert_eq!(choose(&[&a, &b], 5), Some(1));
        // Setting 1 misses the SLO on b: only 0 and 2 are eligible on both.
        let b_missed = trace("b", [120.0, 85.0, 86.0], [0.0; 3], Some(1));
        assert_eq!(choose(&[&a, &b_missed], 5), Some(2));
        // Setting 1 flaps past the bound on a.
        let a_flapping = trace("a", [50.0, 80.0, 85.0], [0.0, 49.0, 0.0], None);
        assert_eq!(choose(&[&a_flapping, &b], 5), Some(2));
    }

    #[test]
    fn each_trace_is_judged_at_the_setting_chosen_without_it() {
        let a = trace("a", [50.0, 80.0, 85.0], [0.0; 3], None);
        let b = trace("b", [120.0, 85.0, 86.0], [0.0; 3], None);
        let c = trace("c", [60.0, 90.0, 95.0], [0.0; 3], None);
        let rows = rows(&[a, b, c], 5);
        assert_eq!(rows.iter().map(|r| r.all).collect::<Vec<_>>(), [Some(1); 3]);
        // Without b, setting 0 is best on a and c; b is then judged at 0, its worst.
        assert_eq!(rows[1].held_out, Some(0));
        assert_eq!(rows[0].held_out, Some(1));
        assert_eq!(rows.iter().map(|r| r.own).collect::<Vec<_>>(), [Some(0), Some(1), Some(0)]);
    }

    #[test]
    fn the_bound_is_two_an_hour_and_with_a_task_always_running_the_alternatives_and_one_a_day() {
        let alt = |reversals_per_day| score(100.0, reversals_per_day, 5);
        assert_eq!(bound(Some(&alt(30.0)), 1.0), (48.0, 31.0));
        assert_eq!(bound(Some(&alt(6.0)), 2.0), (48.0, 7.0));
        assert_eq!(bound(Some(&alt(0.0)), 0.5), (48.0, 2.0), "one more in all on half a day");
        assert_eq!(bound(Some(&alt(100.0)), 1.0), (48.0, 48.0));
        assert_eq!(bound(None, 1.0), (48.0, 48.0));
        let mut trace = trace("a", [50.0, 80.0, 85.0], [40.0, 40.0, 0.0], None);
        trace.bound = (48.0, 10.0);
        trace.load[1].min_tasks = 1;
        assert!(trace.eligible(0, 5) && !trace.eligible(1, 5) && trace.eligible(2, 5));
    }
}
