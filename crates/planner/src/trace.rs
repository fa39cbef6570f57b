//! Traffic traces: how many messages arrive in each second.

use std::fmt;

use crate::random::poisson;

pub use crate::csv_trace::{CsvError, CsvTrace, MAX_TRACE_MESSAGES, MAX_TRACE_SECONDS, parse_csv};

/// A trace: the messages sent to the queue in each second of the run.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    /// Shown in tables and file names.
    pub name: String,
    /// Arrivals per second, from second 0.
    pub arrivals: Vec<u32>,
    /// When second 0 was, seconds since the epoch (a CSV's first row); `None`
    /// for a built-in trace, whose second 0 is a midnight.
    pub start: Option<i64>,
}

impl Trace {
    /// All messages in the trace.
    pub fn total(&self) -> u64 {
        self.arrivals.iter().map(|&n| u64::from(n)).sum()
    }

    /// Length in seconds.
    pub fn seconds(&self) -> u64 {
        self.arrivals.len() as u64
    }
}

/// The traces every comparison runs unless told otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BuiltIn {
    /// 20 messages a second for 3 hours.
    Steady,
    /// 24 hours between 2 and 40 messages a second, peaking mid-afternoon.
    Diurnal,
    /// 20 idle minutes, 10 minutes at 30 a second, then idle: the fleet starts from zero tasks.
    BurstFromIdle,
    /// 20 a second with a 5-minute spike to 120 a second, on a fleet already running.
    SpikeOnWarmFleet,
    /// 8 hours overnight, one message every 20 minutes on average.
    SparseTrickle,
}

impl BuiltIn {
    /// Every built-in trace, in the order tables show them.
    pub const ALL: [Self; 5] = [
        Self::Steady,
        Self::Diurnal,
        Self::BurstFromIdle,
        Self::SpikeOnWarmFleet,
        Self::SparseTrickle,
    ];

    /// The kebab-case name the command line takes.
    pub fn name(self) -> &'static str {
        match self {
            Self::Steady => "steady",
            Self::Diurnal => "diurnal",
            Self::BurstFromIdle => "burst-from-idle",
            Self::SpikeOnWarmFleet => "spike-on-warm-fleet",
            Self::SparseTrickle => "sparse-trickle",
        }
    }

    /// Tasks already running at second 0: only the warm-fleet trace starts warm.
    pub fn initial_tasks(self) -> u64 {
        match self {
            Self::Steady | Self::Diurnal | Self::SpikeOnWarmFleet => 5,
            Self::BurstFromIdle | Self::SparseTrickle => 0,
        }
    }

    /// Messages sent per second on average at second `t`.
    fn rate(self, t: u64) -> f64 {
        let minute = t / 60;
        match self {
            Self::Steady => 20.0,
            Self::Diurnal => {
                let day = t as f64 / 86_400.0;
                // Lowest at 03:00, highest at 15:00.
                let phase = (day - 0.125) * std::f64::consts::TAU;
                21.0 - 19.0 * phase.cos()
            }
            Self::BurstFromIdle => {
                if (20..30).contains(&minute) {
                    30.0
                } else {
                    0.0
                }
            }
            Self::SpikeOnWarmFleet => {
                if (30..35).contains(&minute) {
                    120.0
                } else {
                    20.0
                }
            }
            Self::SparseTrickle => 1.0 / 1_200.0,
        }
    }

    fn seconds(self) -> u64 {
        match self {
            Self::Steady => 3 * 3_600,
            Self::Diurnal => 24 * 3_600,
            Self::BurstFromIdle => 90 * 60,
            Self::SpikeOnWarmFleet => 2 * 3_600,
            Self::SparseTrickle => 8 * 3_600,
        }
    }

    /// The trace, with Poisson arrivals drawn from `seed`.
    pub fn trace(self, seed: u64) -> Trace {
        let mut rng = fastrand::Rng::with_seed(seed ^ 0x7472_6163_6500);
        let arrivals = (0..self.seconds()).map(|t| poisson(&mut rng, self.rate(t))).collect();
        Trace { name: self.name().to_owned(), arrivals, start: None }
    }
}

impl fmt::Display for BuiltIn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_are_deterministic_per_seed() {
        for builtin in BuiltIn::ALL {
            assert_eq!(builtin.trace(7), builtin.trace(7), "{builtin}");
        }
        assert_ne!(BuiltIn::Steady.trace(7), BuiltIn::Steady.trace(8));
        let steady = BuiltIn::Steady.trace(1);
        let mean = steady.total() as f64 / steady.seconds() as f64;
        assert!((mean - 20.0).abs() < 0.5, "mean {mean}");
    }
}
