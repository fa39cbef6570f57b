//! Traffic traces: how many messages arrive in each second.

use std::fmt;

use crate::random::poisson;

/// A trace: the messages sent to the queue in each second of the run.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    /// Shown in tables and file names.
    pub name: String,
    /// Arrivals per second, from second 0.
    pub arrivals: Vec<u32>,
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
        Trace { name: self.name().to_owned(), arrivals }
    }
}

/// What is wrong with a CSV trace, and where.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum CsvError {
    /// Nothing but a header, or nothing at all.
    #[error("the trace has no rows (expected `timestamp,arrivals` lines)")]
    Empty,
    /// A row that is not `timestamp,arrivals`.
    #[error("line {line}: expected `timestamp,arrivals`, found {found:?}")]
    Shape {
        /// 1-based line number.
        line: usize,
        /// The line, cut to 80 characters.
        found: String,
    },
    /// A timestamp that is neither seconds nor RFC 3339.
    #[error("line {line}: timestamp {value:?} is neither seconds since the epoch nor RFC 3339")]
    Timestamp {
        /// 1-based line number.
        line: usize,
        /// The field as written.
        value: String,
    },
    /// A count that is not a whole number of messages.
    #[error("line {line}: arrivals {value:?} is not a whole number ≥ 0")]
    Arrivals {
        /// 1-based line number.
        line: usize,
        /// The field as written.
        value: String,
    },
    /// Rows out of order or repeated.
    #[error("line {line}: timestamp {value:?} is not later than the row before")]
    Order {
        /// 1-based line number.
        line: usize,
        /// The field as written.
        value: String,
    },
    /// More messages than a run can hold in memory.
    #[error("line {line}: the trace passes {max} messages, the most one run can simulate")]
    TooMany {
        /// 1-based line number where the total passed the limit.
        line: usize,
        /// The limit.
        max: u64,
    },
    /// A trace longer than a simulation should run.
    #[error("the trace spans {seconds} s; at most {max} s (31 days) can be simulated")]
    TooLong {
        /// The span found.
        seconds: u64,
        /// The limit.
        max: u64,
    },
}

/// The longest CSV trace accepted: a month of 1-second steps.
pub const MAX_TRACE_SECONDS: u64 = 31 * 86_400;

/// The most messages a CSV trace may hold: each one queued takes 8 bytes,
/// and every second's count must fit the per-second arrivals.
pub const MAX_TRACE_MESSAGES: u64 = 200_000_000;

/// Reads a `timestamp,arrivals` CSV, as exported from CloudWatch's
/// `NumberOfMessagesSent` (one row per period). Timestamps are seconds since
/// the epoch or RFC 3339; a header line is skipped. Each row's messages are
/// spread evenly over the seconds up to the next row (the last row's period
/// is taken to be the one before it, or 60 s), so the total is kept exactly.
pub fn parse_csv(name: &str, text: &str) -> Result<Trace, CsvError> {
    let mut rows: Vec<(i64, u64)> = Vec::new();
    let mut total = 0_u64;
    // Spreadsheet exports often start with a byte-order mark.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let row = raw.trim();
        if row.is_empty() || row.starts_with('#') {
            continue;
        }
        let Some((stamp, count)) = row.split_once(',') else {
            return Err(CsvError::Shape { line, found: row.chars().take(80).collect() });
        };
        let (stamp, count) = (stamp.trim(), count.trim());
        if rows.is_empty() && index == 0 && parse_timestamp(stamp).is_none() {
            continue; // the header
        }
        let seconds = parse_timestamp(stamp)
            .ok_or_else(|| CsvError::Timestamp { line, value: stamp.to_owned() })?;
        let arrivals = parse_count(count)
            .ok_or_else(|| CsvError::Arrivals { line, value: count.to_owned() })?;
        if rows.last().is_some_and(|&(previous, _)| seconds <= previous) {
            return Err(CsvError::Order { line, value: stamp.to_owned() });
        }
        total = total.saturating_add(arrivals);
        if total > MAX_TRACE_MESSAGES {
            return Err(CsvError::TooMany { line, max: MAX_TRACE_MESSAGES });
        }
        rows.push((seconds, arrivals));
    }
    let (Some(&(first, _)), Some(&(last, _))) = (rows.first(), rows.last()) else {
        return Err(CsvError::Empty);
    };
    let last_period = match rows.len() {
        1 => 60,
        n => (rows[n - 1].0 - rows[n - 2].0).unsigned_abs(),
    };
    let span = (last - first).unsigned_abs() + last_period;
    if span > MAX_TRACE_SECONDS {
        return Err(CsvError::TooLong { seconds: span, max: MAX_TRACE_SECONDS });
    }
    let mut arrivals = vec![0_u32; span as usize];
    for (i, &(stamp, count)) in rows.iter().enumerate() {
        let start = (stamp - first).unsigned_abs();
        let end = rows.get(i + 1).map_or(span, |&(next, _)| (next - first).unsigned_abs());
        spread(&mut arrivals[start as usize..end as usize], count);
    }
    Ok(Trace { name: name.to_owned(), arrivals })
}

/// Spreads `count` over `slots` as evenly as whole messages allow.
fn spread(slots: &mut [u32], count: u64) {
    let n = slots.len() as u64;
    for (i, slot) in slots.iter_mut().enumerate() {
        let i = i as u64;
        let share = count * (i + 1) / n - count * i / n;
        // At most MAX_TRACE_MESSAGES in all, so a second's share fits.
        *slot = u32::try_from(share).unwrap_or(u32::MAX);
    }
}

fn parse_count(field: &str) -> Option<u64> {
    if let Ok(n) = field.parse::<u64>() {
        return Some(n);
    }
    // CloudWatch exports counts as floats ("12.0").
    let value: f64 = field.parse().ok()?;
    (value.is_finite() && value >= 0.0 && value.fract() == 0.0 && value < 1e12)
        .then_some(value as u64)
}

fn parse_timestamp(field: &str) -> Option<i64> {
    if let Ok(seconds) = field.parse::<i64>() {
        return Some(seconds);
    }
    field.parse::<jiff::Timestamp>().ok().map(jiff::Timestamp::as_second)
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
    fn csv_spreads_each_row_over_its_period_and_keeps_the_total() {
        let trace = parse_csv("t", "timestamp,arrivals\n0,120\n60,7\n120,0\n").unwrap();
        assert_eq!(trace.seconds(), 180);
        assert_eq!(trace.total(), 127);
        assert_eq!(trace.arrivals[..60].iter().map(|&n| u64::from(n)).sum::<u64>(), 120);
        assert!(trace.arrivals[..60].iter().all(|&n| n == 2));
        assert_eq!(trace.arrivals[60..120].iter().filter(|&&n| n == 1).count(), 7);
    }

    #[test]
    fn csv_accepts_a_byte_order_mark_and_crlf_line_ends() {
        let trace = parse_csv("t", "\u{feff}0,60\r\n60,0\r\n").unwrap();
        assert_eq!((trace.seconds(), trace.total()), (120, 60));
        let headed = parse_csv("t", "\u{feff}Timestamp,Sum\r\n0,5\r\n").unwrap();
        assert_eq!((headed.seconds(), headed.total()), (60, 5));
    }

    #[test]
    fn csv_reads_rfc3339_and_float_counts() {
        let text = "2026-11-30T10:00:00Z,3.0\n2026-11-30T10:05:00Z,600\n";
        let trace = parse_csv("t", text).unwrap();
        assert_eq!(trace.seconds(), 600);
        assert_eq!(trace.total(), 603);
    }

    #[test]
    fn csv_errors_name_the_line_and_value() {
        let cases: &[(&str, CsvError)] = &[
            ("", CsvError::Empty),
            ("timestamp,arrivals\n", CsvError::Empty),
            ("0,1\n60\n", CsvError::Shape { line: 2, found: "60".into() }),
            ("0,1\nyesterday,2\n", CsvError::Timestamp { line: 2, value: "yesterday".into() }),
            ("0,1\n60,-3\n", CsvError::Arrivals { line: 2, value: "-3".into() }),
            ("0,1\n60,2.5\n", CsvError::Arrivals { line: 2, value: "2.5".into() }),
            ("0,1\n60,NaN\n", CsvError::Arrivals { line: 2, value: "NaN".into() }),
            ("60,1\n0,2\n", CsvError::Order { line: 2, value: "0".into() }),
            ("60,1\n60,2\n", CsvError::Order { line: 2, value: "60".into() }),
            ("0,1\n60,200000000\n", CsvError::TooMany { line: 2, max: MAX_TRACE_MESSAGES }),
            ("0,18446744073709551615\n", CsvError::TooMany { line: 1, max: MAX_TRACE_MESSAGES }),
            (
                "0,1\n99999999,2\n",
                CsvError::TooLong { seconds: 199_999_998, max: MAX_TRACE_SECONDS },
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_csv("t", text).as_ref(), Err(expected), "{text:?}");
        }
    }

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
