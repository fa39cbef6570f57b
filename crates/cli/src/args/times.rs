//! The instants `--since` and `--until` take.

use jiff::civil::DateTime;
use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp};

/// What a time flag accepts, for its help and its errors.
pub(crate) const TIME_FORMS: &str = "a date (2026-12-04, midnight UTC), a date and time \
     (2026-12-04T10:30, 2026-12-04 10:30:00; UTC), an RFC 3339 time with its offset \
     (2026-12-04T10:30:00Z, 2026-12-04T10:30:00+01:00) or an age (90s, 30m, 2h, 7d, 1h30m)";

/// An RFC 3339 instant; a date, or a date and time, without a zone, taken
/// as UTC (what operators type, and what the records' times are in); or an
/// age (`90s`, `30m`, `2h`, `7d`, `1h30m`) before `now`.
pub(crate) fn parse_time(value: &str, now: Timestamp) -> Option<Timestamp> {
    if let Ok(at) = value.parse::<Timestamp>() {
        return Some(at);
    }
    // A zone named only in brackets would be dropped by the civil parse and
    // the time silently read as UTC: refused instead.
    if !value.contains('[')
        && let Ok(civil) = value.parse::<DateTime>()
    {
        return TimeZone::UTC.to_timestamp(civil).ok();
    }
    let age = match value.strip_suffix('d').and_then(|days| days.parse::<i64>().ok()) {
        Some(days) => SignedDuration::from_secs(days.checked_mul(86_400)?),
        None => value.parse::<SignedDuration>().ok()?,
    };
    if age.is_negative() {
        return None;
    }
    now.checked_sub(age).ok()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn dates_and_times_without_a_zone_are_utc() {
        let now: Timestamp = "2026-12-05T00:00:00Z".parse().unwrap();
        let cases = [
            ("2026-12-04", "2026-12-04T00:00:00Z"),
            ("2026-12-04T10:30", "2026-12-04T10:30:00Z"),
            ("2026-12-04 10:30:00", "2026-12-04T10:30:00Z"),
            ("2026-12-04T10:30:00.250", "2026-12-04T10:30:00.25Z"),
            ("2026-12-04T10:30:00Z", "2026-12-04T10:30:00Z"),
            ("2026-12-04T10:30:00+01:00", "2026-12-04T09:30:00Z"),
            ("2h", "2026-12-04T22:00:00Z"),
            ("7d", "2026-11-28T00:00:00Z"),
            ("1h30m", "2026-12-04T22:30:00Z"),
        ];
        for (given, expected) in cases {
            let at = parse_time(given, now).map(|t| t.to_string());
            assert_eq!(at.as_deref(), Some(expected), "{given}");
        }
    }

    #[test]
    fn what_is_not_a_time_is_refused() {
        let now = Timestamp::now();
        for bad in [
            "yesterday",
            "-2h",
            "2026-13-01",
            "2026-12-04T25:00",
            "2026-12-04T10:30[Europe/Paris]",
            "04/12/2026",
            "",
        ] {
            assert_eq!(parse_time(bad, now), None, "{bad}");
        }
    }
}
