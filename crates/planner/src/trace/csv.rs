//! A trace of your own: `timestamp,arrivals` rows, as CloudWatch's
//! `NumberOfMessagesSent` is exported (one row per period, and no row for a
//! period without data).

use crate::trace::Trace;

/// What is wrong with a CSV trace, and where.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum CsvError {
    /// Nothing but a header, or nothing at all.
    #[error("the trace has no rows (expected `timestamp,arrivals` lines)")]
    Empty,
    /// A row without exactly two fields.
    #[error(
        "line {line}: expected 2 columns (timestamp,arrivals), got {found}{}",
        other.map(|c| format!(" (the separator is a comma; this line has {c:?})")).unwrap_or_default()
    )]
    Columns {
        /// 1-based line number.
        line: usize,
        /// The fields found.
        found: usize,
        /// Another separator the line holds (`;`, a tab), as a hint.
        other: Option<char>,
    },
    /// A timestamp that is neither seconds nor a date and time.
    #[error(
        "line {line}: timestamp {value:?} is neither seconds since the epoch nor a date and time \
         (RFC 3339, or YYYY-MM-DD HH:MM:SS in UTC)"
    )]
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
    /// Two rows closer together than the period given.
    #[error("line {line}: {gap} s after the row before, closer than --period-seconds {period}")]
    Period {
        /// 1-based line number.
        line: usize,
        /// Seconds between the two rows.
        gap: u64,
        /// The period given.
        period: u64,
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

/// A CSV trace, and what was read to make it.
#[derive(Debug, Clone, PartialEq)]
pub struct CsvTrace {
    /// Arrivals per second.
    pub trace: Trace,
    /// Seconds each row counts: given, or the shortest gap between two rows.
    pub period: u64,
    /// Rows read.
    pub rows: usize,
    /// Periods between the first row and the last that had no row, taken as
    /// no arrivals (CloudWatch leaves out a period without data).
    pub missing_periods: u64,
    /// The shortest gap between two rows, seconds (`None` for one row).
    pub shortest_gap: Option<u64>,
}

/// Reads a `timestamp,arrivals` CSV. Timestamps are seconds since the epoch,
/// RFC 3339, or `YYYY-MM-DD HH:MM:SS` in UTC; fields may be quoted; a header
/// line is skipped. Each row's messages are spread evenly over its period
/// (`period`, or the shortest gap between two rows), so the total is kept
/// exactly; a period without a row has no arrivals.
pub fn parse_csv(name: &str, text: &str, period: Option<u64>) -> Result<CsvTrace, CsvError> {
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
        let fields = fields(row);
        let [stamp, count] = &fields[..] else {
            let other = [';', '\t', '|'].into_iter().find(|&c| row.contains(c));
            return Err(CsvError::Columns { line, found: fields.len(), other });
        };
        let (stamp, count) = (stamp.as_str(), count.as_str());
        // A header names its columns: a first field with a digit is a row, however malformed.
        if rows.is_empty() && index == 0 && !stamp.chars().any(|c| c.is_ascii_digit()) {
            continue;
        }
        let seconds = parse_timestamp(stamp)
            .ok_or_else(|| CsvError::Timestamp { line, value: stamp.to_owned() })?;
        let arrivals = parse_count(count)
            .ok_or_else(|| CsvError::Arrivals { line, value: count.to_owned() })?;
        if let Some(&(previous, _)) = rows.last() {
            let gap = seconds.saturating_sub(previous);
            if gap <= 0 {
                return Err(CsvError::Order { line, value: stamp.to_owned() });
            }
            if let Some(period) = period.filter(|&p| gap.unsigned_abs() < p) {
                return Err(CsvError::Period { line, gap: gap.unsigned_abs(), period });
            }
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
    let gaps = rows.windows(2).map(|pair| (pair[1].0 - pair[0].0).unsigned_abs());
    let shortest_gap = gaps.clone().min();
    let period = period.or(shortest_gap).unwrap_or(60).max(1);
    let span = (last - first).unsigned_abs().saturating_add(period);
    if span > MAX_TRACE_SECONDS {
        return Err(CsvError::TooLong { seconds: span, max: MAX_TRACE_SECONDS });
    }
    let missing_periods = gaps.map(|gap| (gap / period).saturating_sub(1)).sum();
    let mut arrivals = vec![0_u32; span as usize];
    for &(stamp, count) in &rows {
        let start = (stamp - first).unsigned_abs() as usize;
        spread(&mut arrivals[start..start + period as usize], count);
    }
    let trace = Trace { name: name.to_owned(), arrivals, start: Some(first) };
    Ok(CsvTrace { trace, period, rows: rows.len(), missing_periods, shortest_gap })
}

/// A row's fields: split on commas outside double quotes, each without its
/// quotes (a doubled quote inside is one), as spreadsheets write them.
fn fields(row: &str) -> Vec<String> {
    let (mut fields, mut field, mut quoted) = (Vec::new(), String::new(), false);
    let mut chars = row.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => fields.push(std::mem::take(&mut field).trim().to_owned()),
            c => field.push(c),
        }
    }
    fields.push(field.trim().to_owned());
    fields
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
    if let Ok(instant) = field.parse::<jiff::Timestamp>() {
        return Some(instant.as_second());
    }
    // A spreadsheet's date and time, without a zone: UTC, as CloudWatch exports.
    let civil = field.replacen(' ', "T", 1).parse::<jiff::civil::DateTime>().ok()?;
    civil.to_zoned(jiff::tz::TimeZone::UTC).ok().map(|zoned| zoned.timestamp().as_second())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<CsvTrace, CsvError> {
        parse_csv("t", text, None)
    }

    #[test]
    fn csv_spreads_each_row_over_its_period_and_keeps_the_total() {
        let parsed = parse("timestamp,arrivals\n0,120\n60,7\n120,0\n").unwrap();
        let trace = &parsed.trace;
        assert_eq!((parsed.period, parsed.rows, parsed.missing_periods), (60, 3, 0));
        assert_eq!(trace.seconds(), 180);
        assert_eq!(trace.total(), 127);
        assert_eq!(trace.arrivals[..60].iter().map(|&n| u64::from(n)).sum::<u64>(), 120);
        assert!(trace.arrivals[..60].iter().all(|&n| n == 2));
        assert_eq!(trace.arrivals[60..120].iter().filter(|&&n| n == 1).count(), 7);
    }

    #[test]
    fn missing_periods_are_no_arrivals_not_a_smear() {
        // CloudWatch's rows at 00:00, 00:05 and 05:00: 58 five-minute periods without data.
        let text = "2026-11-30T00:00:00Z,10\n2026-11-30T00:05:00Z,10\n2026-11-30T05:00:00Z,2\n";
        let parsed = parse(text).unwrap();
        assert_eq!((parsed.period, parsed.missing_periods), (300, 58));
        let trace = &parsed.trace;
        assert_eq!(trace.seconds(), 5 * 3600 + 300);
        assert_eq!(trace.total(), 22);
        let between: u64 = trace.arrivals[600..18_000].iter().map(|&n| u64::from(n)).sum();
        assert_eq!(between, 0, "nothing arrives in the hours without a row");
        let given = parse_csv("t", text, Some(60)).unwrap();
        assert_eq!((given.period, given.missing_periods), (60, 4 + 294));
        assert_eq!(given.shortest_gap, Some(300), "what the hint offers instead of 60");
        assert_eq!(given.trace.arrivals[..60].iter().map(|&n| u64::from(n)).sum::<u64>(), 10);
    }

    #[test]
    fn csv_accepts_a_byte_order_mark_quotes_and_crlf_line_ends() {
        let parsed = parse("\u{feff}0,60\r\n60,0\r\n").unwrap();
        assert_eq!((parsed.trace.seconds(), parsed.trace.total()), (120, 60));
        let headed = parse("\u{feff}\"Timestamp\",\"Sum\"\r\n\"0\",\"5\"\r\n").unwrap();
        assert_eq!((headed.trace.seconds(), headed.trace.total()), (60, 5));
    }

    #[test]
    fn csv_reads_rfc3339_spreadsheet_times_and_float_counts() {
        let parsed = parse("2026-11-30T10:00:00Z,3.0\n2026-11-30T10:05:00Z,600\n").unwrap();
        assert_eq!((parsed.trace.seconds(), parsed.trace.total()), (600, 603));
        let civil = parse("2026-11-30 10:00:00,3\n2026-11-30 10:01:00,4\n").unwrap();
        assert_eq!((civil.period, civil.trace.total()), (60, 7));
    }

    #[test]
    fn csv_errors_name_the_line_and_value() {
        let cases: &[(&str, CsvError)] = &[
            ("", CsvError::Empty),
            ("timestamp,arrivals\n", CsvError::Empty),
            ("0,1\n60\n", CsvError::Columns { line: 2, found: 1, other: None }),
            ("0,1\n60,1\n120,1,x\n", CsvError::Columns { line: 3, found: 3, other: None }),
            ("0;1\n", CsvError::Columns { line: 1, found: 1, other: Some(';') }),
            (
                "2026-13-30T09:00:00Z,5\n",
                CsvError::Timestamp { line: 1, value: "2026-13-30T09:00:00Z".into() },
            ),
            ("0,\"1,200\"\n", CsvError::Arrivals { line: 1, value: "1,200".into() }),
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
            assert_eq!(parse(text).as_ref(), Err(expected), "{text:?}");
        }
        let closer = parse_csv("t", "0,1\n60,1\n", Some(300));
        assert_eq!(closer, Err(CsvError::Period { line: 2, gap: 60, period: 300 }));
        let message = CsvError::Columns { line: 7, found: 3, other: None }.to_string();
        assert_eq!(message, "line 7: expected 2 columns (timestamp,arrivals), got 3");
        let hinted = CsvError::Columns { line: 1, found: 1, other: Some(';') }.to_string();
        assert!(hinted.ends_with("(the separator is a comma; this line has ';')"), "{hinted}");
    }
}
