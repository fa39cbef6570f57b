//! `recommend --consumer lambda`: the cheapest `MaximumConcurrency` ×
//! `BatchSize` (or, in provisioned mode, `MinimumPollers` × `BatchSize`) that
//! meets the SLO on every seed with the margin, without sending the
//! downstream more than its capacity in any second.

use super::esm::Mode;
use super::run::{LambdaOutcome, run};
use crate::recommend::{NEAR_TIE, Robustness};
use crate::sim::Scenario;

/// `MaximumConcurrency` values tried (the mapping takes 2–1,000).
pub const MAXIMUM_CONCURRENCY: [u32; 10] = [2, 5, 10, 20, 50, 100, 200, 300, 500, 1_000];
/// `MinimumPollers` values tried in provisioned mode (2–200).
pub const MINIMUM_POLLERS: [u32; 7] = [2, 5, 10, 20, 50, 100, 200];
/// `BatchSize` values tried. Above 10 a standard queue needs a batching
/// window of at least 1 s, which these runs then use.
pub const BATCH_SIZES: [u32; 7] = [1, 5, 10, 20, 50, 100, 200];

/// One setting of the mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setting {
    /// Standard (with its `MaximumConcurrency`) or provisioned (with its pollers).
    pub mode: Mode,
    /// `BatchSize`.
    pub batch_size: u32,
    /// `MaximumBatchingWindowInSeconds`.
    pub batching_window: u64,
}

/// One setting and what it did over the seeds.
#[derive(Debug, Clone)]
pub struct LambdaCandidate {
    /// The setting.
    pub setting: Setting,
    /// The run on the scenario's own seed, to show and draw.
    pub run: LambdaOutcome,
    /// Mean billed GB-seconds over the seeds.
    pub gb_seconds: f64,
    /// Mean invocations over the seeds.
    pub invocations: f64,
    /// The longest SLO-quantile wait over the seeds, seconds (`None`: nothing processed).
    pub worst_wait: Option<u64>,
    /// Seeds on which it met the SLO with the margin.
    pub seeds_met: u32,
    /// The most requests the downstream received in one second, over the seeds.
    pub downstream_peak_rps: u64,
    /// Seeds on which the downstream got more than its capacity in some second.
    pub seeds_over_capacity: u32,
}

impl LambdaCandidate {
    /// Met the SLO on every seed and kept the downstream within its capacity.
    pub fn meets(&self, robustness: Robustness) -> bool {
        self.seeds_met == robustness.seeds.max(1) && self.seeds_over_capacity == 0
    }

    /// The concurrency the setting lets the mapping reach (its cap).
    pub fn concurrency_cap(&self) -> u32 {
        match self.setting.mode {
            Mode::Standard { maximum_concurrency } => maximum_concurrency.unwrap_or(u32::MAX),
            Mode::Provisioned { minimum_pollers, .. } => minimum_pollers,
        }
    }
}

/// The search's result.
#[derive(Debug, Clone)]
pub struct LambdaRecommendation {
    /// How hard a setting had to meet the SLO.
    pub robustness: Robustness,
    /// The cheapest that meets it (near-ties to the lower concurrency cap).
    pub best: Option<LambdaCandidate>,
    /// Failing that: the one that met the SLO on the most seeds, then with the shortest wait.
    pub closest: Option<LambdaCandidate>,
    /// Every setting, in search order.
    pub candidates: Vec<LambdaCandidate>,
}

/// The grid: in the scenario's mode, every cap × batch size.
pub fn settings(scenario: &Scenario) -> Vec<Setting> {
    let window = scenario.lambda.esm.batching_window;
    let modes: Vec<Mode> = match scenario.lambda.esm.mode {
        Mode::Standard { .. } => MAXIMUM_CONCURRENCY
            .iter()
            .map(|&cap| Mode::Standard { maximum_concurrency: Some(cap) })
            .collect(),
        Mode::Provisioned { maximum_pollers, .. } => MINIMUM_POLLERS
            .iter()
            .filter(|&&min| min <= maximum_pollers)
            .map(|&minimum_pollers| Mode::Provisioned { minimum_pollers, maximum_pollers })
            .collect(),
    };
    let mut grid = Vec::new();
    for mode in modes {
        for batch_size in BATCH_SIZES {
            let batching_window = if batch_size > 10 { window.max(1) } else { window };
            grid.push(Setting { mode, batch_size, batching_window });
        }
    }
    grid
}

fn evaluate(scenario: &Scenario, setting: Setting, r: Robustness) -> LambdaCandidate {
    let (quantile, slo) = (scenario.slo.quantile, scenario.slo.latency_seconds);
    let capacity = scenario.lambda.invocation.downstream.capacity_rps;
    let mut trial = scenario.clone();
    trial.lambda.esm.mode = setting.mode;
    trial.lambda.esm.batch_size = setting.batch_size;
    trial.lambda.esm.batching_window = setting.batching_window;
    let (mut first, mut gb_seconds, mut invocations) = (None, 0.0, 0.0);
    let (mut worst_wait, mut seeds_met, mut peak, mut over) = (Some(0), 0, 0, 0);
    for offset in 0..u64::from(r.seeds.max(1)) {
        trial.seed = scenario.seed.wrapping_add(offset);
        let outcome = run(&trial);
        let wait = outcome.outcome.waits.quantile(quantile);
        worst_wait = match (worst_wait, wait) {
            (Some(a), Some(b)) => Some(a.max(b)),
            _ => None,
        };
        let within = wait.is_some_and(|w| w as f64 <= r.margin * slo as f64);
        seeds_met += u32::from(outcome.outcome.meets_slo(quantile) && within);
        peak = peak.max(outcome.downstream_peak_rps);
        over += u32::from(capacity.is_some() && outcome.seconds_over_capacity > 0);
        gb_seconds += outcome.gb_seconds();
        invocations += outcome.invocations as f64;
        first.get_or_insert(outcome);
    }
    let n = f64::from(r.seeds.max(1));
    LambdaCandidate {
        setting,
        run: first.unwrap_or_else(|| run(&trial)),
        gb_seconds: gb_seconds / n,
        invocations: invocations / n,
        worst_wait,
        seeds_met,
        downstream_peak_rps: peak,
        seeds_over_capacity: over,
    }
}

/// Runs the grid on `scenario`, one thread per core.
pub fn search(scenario: &Scenario, robustness: Robustness) -> LambdaRecommendation {
    let grid = settings(scenario);
    let candidates = crate::parallel::map(&grid, |&s| evaluate(scenario, s, robustness));
    let meeting: Vec<&LambdaCandidate> =
        candidates.iter().filter(|c| c.meets(robustness)).collect();
    let cheapest = meeting.iter().map(|c| c.gb_seconds).fold(f64::INFINITY, f64::min);
    let best = meeting
        .iter()
        .filter(|c| c.gb_seconds <= cheapest * (1.0 + NEAR_TIE))
        .min_by(|a, b| {
            (a.concurrency_cap(), a.invocations as u64, a.gb_seconds)
                .partial_cmp(&(b.concurrency_cap(), b.invocations as u64, b.gb_seconds))
                .unwrap_or(std::cmp::Ordering::Equal)
        })
        .map(|c| (*c).clone());
    let closest = candidates
        .iter()
        .max_by_key(|c| {
            (
                c.seeds_over_capacity == 0,
                c.seeds_met,
                std::cmp::Reverse(c.worst_wait.unwrap_or(u64::MAX)),
            )
        })
        .cloned();
    LambdaRecommendation { robustness, best, closest, candidates }
}

/// What kept every setting from meeting the SLO within the downstream's
/// capacity, for a person.
pub fn binding_limit(scenario: &Scenario, found: &LambdaRecommendation) -> String {
    let r = found.robustness;
    let capacity = scenario.lambda.invocation.downstream.capacity_rps;
    let met_slo = found.candidates.iter().filter(|c| c.seeds_met == r.seeds.max(1));
    if let (Some(capacity), Some(gentlest)) =
        (capacity, met_slo.min_by_key(|c| c.downstream_peak_rps))
    {
        return format!(
            "every setting that met the SLO sent the downstream more than its {capacity} \
             requests/s (the gentlest, {}, peaked at {} requests/s): set DownstreamMaxRps so \
             that MaximumConcurrency × it stays within the capacity, raise the downstream's \
             capacity, or loosen the SLO",
            describe(gentlest.setting),
            gentlest.downstream_peak_rps
        );
    }
    let closest = found.closest.as_ref();
    let closest_name = closest.map_or("none".to_owned(), |c| describe(c.setting));
    let closest_wait =
        closest.and_then(|c| c.worst_wait).map_or("none processed".to_owned(), |w| w.to_string());
    let quantile = scenario.slo.quantile * 100.0;
    if let Some(capacity) = capacity {
        return format!(
            "no setting's p{quantile:.0} wait stayed within {:.0} % of the {} s SLO on all {} \
             seeds, with the downstream slowing past its {capacity} requests/s (the closest, \
             {closest_name}: {closest_wait} s, peaked at {} requests/s): the downstream's \
             capacity bounds the drain; raise it, or loosen --margin or the SLO",
            r.margin * 100.0,
            scenario.slo.latency_seconds,
            r.seeds.max(1),
            closest.map_or(0, |c| c.downstream_peak_rps),
        );
    }
    format!(
        "no setting's p{quantile:.0} wait stayed within {:.0} % of the {} s SLO on all {} seeds \
         (the closest, {closest_name}: {closest_wait} s): the account's concurrency ({}) or the \
         service time bounds the drain; raise the account's concurrency, shorten the service \
         time, or loosen --margin or the SLO",
        r.margin * 100.0,
        scenario.slo.latency_seconds,
        r.seeds.max(1),
        scenario.lambda.esm.account_concurrency
    )
}

/// `MaximumConcurrency=20 BatchSize=10`, as a person reads a setting.
pub fn describe(setting: Setting) -> String {
    let mode = match setting.mode {
        Mode::Standard { maximum_concurrency: Some(cap) } => format!("MaximumConcurrency={cap}"),
        Mode::Standard { maximum_concurrency: None } => "MaximumConcurrency=none".to_owned(),
        Mode::Provisioned { minimum_pollers, maximum_pollers } => {
            format!("MinimumPollers={minimum_pollers} MaximumPollers={maximum_pollers}")
        }
    };
    format!("{mode} BatchSize={}", setting.batch_size)
}
