//! The instants `--since` and `--until` take.

use jiff::{SignedDuration, Timestamp};

/// An RFC 3339 instant, or an age (`90s`, `30m`, `2h`, `7d`, `1h30m`) before `now`.
pub(crate) fn parse_time(value: &str, now: Timestamp) -> Option<Timestamp> {
    if let Ok(at) = value.parse::<Timestamp>() {
        return Some(at);
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
