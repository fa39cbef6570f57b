//! Traffic traces: how many messages arrive in each second.

pub mod csv;

use std::fmt;

use crate::random::poisson;

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
    /// A quiet Sunday, then Monday's office hours (08:00–18:00) up to 100 a second with a lunch
    /// dip; one message every 5 seconds outside them.
    OfficeHours,
    /// 12 hours of one message every 2 seconds, and every 4 hours a batch job sending 30,000 in 5 minutes.
    #[value(name = "batch-every-4h")]
    BatchEvery4h,
    /// 6 hours rising from 2 to 60 a second, each minute's rate off by up to ±30 % (noise).
    SlowRamp,
    /// A day of 3 a second with an evening sales surge: up to 80 a second from 19:00 to 21:00.
    EveningSurge,
    /// 12 hours of one message every 2 seconds and, about every 45 minutes at random, a burst of
    /// 2,000–20,000 messages over 2–10 minutes.
    RandomBursts,
    /// A day of one message every 30 seconds, and a nightly batch of 6,000 at 02:00 (one minute).
    NightlyBatch,
    /// A week of a 5-second job (AvgProcessingSeconds 5): office-hours peaks of 12 a second on
    /// weekdays, 4 at the weekend, 0.5 at night.
    Weekly,
    /// 40,000 messages in 10 minutes, then 6 hours flat at 2 a second.
    TailAfterBurst,
    /// 3 hours at 15 a second whose service times are heavy-tailed (log-normal, CV 3).
    HeavyTailedService,
    /// 4 hours at 15 a second; from hour 1 to hour 2 the downstream is slow and every message
    /// takes 4 × as long (the publisher's AvgProcessingSeconds stays as set).
    SlowDownstream,
}

/// How a trace changes the service time the scenario gives.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ServiceShape {
    /// As given.
    AsGiven,
    /// A worker this many times slower, with the publisher's AvgProcessingSeconds to match.
    Slower(f64),
    /// Log-normal with the given mean and this coefficient of variation.
    HeavyTailed(f64),
    /// Messages started in `from..until` (seconds) take `factor` × as long.
    Slowdown(crate::sim::fleet::Slowdown),
}

impl BuiltIn {
    /// Every built-in trace, in the order tables show them.
    pub const ALL: [Self; 15] = [
        Self::Steady,
        Self::Diurnal,
        Self::BurstFromIdle,
        Self::SpikeOnWarmFleet,
        Self::SparseTrickle,
        Self::OfficeHours,
        Self::BatchEvery4h,
        Self::SlowRamp,
        Self::EveningSurge,
        Self::RandomBursts,
        Self::NightlyBatch,
        Self::Weekly,
        Self::TailAfterBurst,
        Self::HeavyTailedService,
        Self::SlowDownstream,
    ];

    /// The kebab-case name the command line takes.
    pub fn name(self) -> &'static str {
        match self {
            Self::Steady => "steady",
            Self::Diurnal => "diurnal",
            Self::BurstFromIdle => "burst-from-idle",
            Self::SpikeOnWarmFleet => "spike-on-warm-fleet",
            Self::SparseTrickle => "sparse-trickle",
            Self::OfficeHours => "office-hours",
            Self::BatchEvery4h => "batch-every-4h",
            Self::SlowRamp => "slow-ramp",
            Self::EveningSurge => "evening-surge",
            Self::RandomBursts => "random-bursts",
            Self::NightlyBatch => "nightly-batch",
            Self::Weekly => "weekly",
            Self::TailAfterBurst => "tail-after-burst",
            Self::HeavyTailedService => "heavy-tailed-service",
            Self::SlowDownstream => "slow-downstream",
        }
    }

    /// What the trace does to the service time.
    pub fn service_shape(self) -> ServiceShape {
        match self {
            Self::HeavyTailedService => ServiceShape::HeavyTailed(3.0),
            Self::Weekly => ServiceShape::Slower(5.0),
            Self::SlowDownstream => ServiceShape::Slowdown(crate::sim::fleet::Slowdown {
                from: 3_600,
                until: 7_200,
                factor: 4.0,
            }),
            _ => ServiceShape::AsGiven,
        }
    }

    /// Tasks already running at second 0: only the warm-fleet trace starts warm.
    pub fn initial_tasks(self) -> u64 {
        match self {
            Self::Steady | Self::Diurnal | Self::SpikeOnWarmFleet => 5,
            Self::HeavyTailedService | Self::SlowDownstream => 5,
            Self::OfficeHours | Self::BatchEvery4h | Self::SlowRamp => 1,
            Self::EveningSurge | Self::RandomBursts | Self::Weekly => 1,
            Self::BurstFromIdle | Self::SparseTrickle => 0,
            Self::NightlyBatch | Self::TailAfterBurst => 0,
        }
    }

    /// Messages sent per second on average at second `t`; `bursts` are
    /// random-bursts' (start, seconds, messages).
    fn rate(self, t: u64, bursts: &[(u64, u64, f64)]) -> f64 {
        let minute = t / 60;
        match self {
            Self::Steady => 20.0,
            Self::Diurnal => diurnal(t),
            Self::BurstFromIdle => during(minute, 20..30, 30.0, 0.0),
            Self::SpikeOnWarmFleet => during(minute, 30..35, 120.0, 20.0),
            Self::SparseTrickle => 1.0 / 1_200.0,
            Self::OfficeHours => office_hours(t),
            Self::BatchEvery4h => {
                if minute % 240 < 5 && minute >= 30 {
                    100.0
                } else {
                    0.5
                }
            }
            Self::SlowRamp => 2.0 + 58.0 * t as f64 / self.seconds() as f64,
            Self::EveningSurge => evening_surge(t),
            Self::RandomBursts => {
                let burst =
                    bursts.iter().find(|&&(start, len, _)| (start..start + len).contains(&t));
                0.5 + burst.map_or(0.0, |&(_, len, messages)| messages / len as f64)
            }
            Self::NightlyBatch => during(minute, 120..121, 100.0, 1.0 / 30.0),
            Self::Weekly => weekly(t),
            Self::TailAfterBurst => match minute {
                10..20 => 40_000.0 / 600.0,
                20.. => 2.0,
                _ => 0.0,
            },
            Self::HeavyTailedService | Self::SlowDownstream => 15.0,
        }
    }

    /// random-bursts' bursts for `seed`: (start, seconds, messages).
    fn bursts(self, seed: u64) -> Vec<(u64, u64, f64)> {
        if self != Self::RandomBursts {
            return Vec::new();
        }
        let mut rng = fastrand::Rng::with_seed(seed ^ 0x6275_7273_7473);
        let mut bursts = Vec::new();
        let mut at = 0.0;
        loop {
            // Exponential gaps with a 45-minute mean.
            at += -2_700.0 * (1.0 - rng.f64()).ln();
            let len = rng.u64(120..=600);
            if at as u64 + len > self.seconds() {
                return bursts;
            }
            bursts.push((at as u64, len, rng.u64(2_000..=20_000) as f64));
        }
    }

    fn seconds(self) -> u64 {
        match self {
            Self::Steady => 3 * 3_600,
            Self::Diurnal => 24 * 3_600,
            Self::BurstFromIdle => 90 * 60,
            Self::SpikeOnWarmFleet => 2 * 3_600,
            Self::SparseTrickle => 8 * 3_600,
            Self::OfficeHours => 2 * 86_400,
            Self::BatchEvery4h => 12 * 3_600,
            Self::SlowRamp => 6 * 3_600,
            Self::EveningSurge | Self::NightlyBatch => 24 * 3_600,
            Self::RandomBursts => 12 * 3_600,
            Self::Weekly => 7 * 86_400,
            Self::TailAfterBurst => 6 * 3_600 + 20 * 60,
            Self::HeavyTailedService => 3 * 3_600,
            Self::SlowDownstream => 4 * 3_600,
        }
    }

    /// The trace, with Poisson arrivals drawn from `seed`.
    pub fn trace(self, seed: u64) -> Trace {
        let mut rng = fastrand::Rng::with_seed(seed ^ 0x7472_6163_6500);
        let mut noise = 1.0;
        let bursts = self.bursts(seed);
        let arrivals = (0..self.seconds())
            .map(|t| {
                if self == Self::SlowRamp && t % 60 == 0 {
                    noise = 0.7 + 0.6 * rng.f64();
                }
                let factor = if self == Self::SlowRamp { noise } else { 1.0 };
                poisson(&mut rng, self.rate(t, &bursts) * factor)
            })
            .collect();
        Trace { name: self.name().to_owned(), arrivals, start: None }
    }
}

/// `inside` messages a second during `minutes`, `outside` otherwise.
fn during(minute: u64, minutes: std::ops::Range<u64>, inside: f64, outside: f64) -> f64 {
    if minutes.contains(&minute) { inside } else { outside }
}

/// Between 2 and 40 a second: lowest at 03:00, highest at 15:00.
fn diurnal(t: u64) -> f64 {
    let day = t as f64 / 86_400.0;
    let phase = (day - 0.125) * std::f64::consts::TAU;
    21.0 - 19.0 * phase.cos()
}

/// A quiet Sunday (day 0), then Monday's office hours up to 100 a second.
fn office_hours(t: u64) -> f64 {
    let (day, hour) = (t / 86_400, (t % 86_400) as f64 / 3_600.0);
    let office = day == 1 && (8.0..18.0).contains(&hour);
    if !office {
        return 0.2;
    }
    // Up by 10:00, a dip over lunch, down from 16:00.
    let ramp = ((hour - 8.0) / 2.0).min((18.0 - hour) / 2.0).min(1.0);
    let lunch = if (12.0..13.5).contains(&hour) { 0.6 } else { 1.0 };
    0.2 + 99.8 * ramp * lunch
}

/// 3 a second, and a surge up from 19:00, at its peak at 20:00, down by 21:00.
fn evening_surge(t: u64) -> f64 {
    let hour = t as f64 / 3_600.0;
    let surge = (1.0 - (hour - 20.0).abs()).max(0.0);
    3.0 + 77.0 * surge
}

/// Office-hours peaks on weekdays (day 0 is a Monday), lower ones on days 5 and 6.
fn weekly(t: u64) -> f64 {
    let (day, hour) = (t / 86_400, (t % 86_400) as f64 / 3_600.0);
    let peak = if day >= 5 { 4.0 } else { 12.0 };
    let office = ((hour - 7.0) / 2.0).min((19.0 - hour) / 2.0).clamp(0.0, 1.0);
    0.5 + (peak - 0.5) * office
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
