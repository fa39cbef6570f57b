//! The invocation's remaining time, from the Runtime API's deadline header.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Any real epoch deadline is far above this (it is 2001-09-09 in ms).
const EPOCH_MS_FLOOR: u64 = 1_000_000_000_000;

/// Time left until `deadline_ms` (`Lambda-Runtime-Deadline-Ms`, epoch
/// milliseconds). cargo-lambda's local emulator (1.9) sends the function
/// timeout itself in this header, e.g. `600000`; a value that cannot be an
/// epoch time is read as that relative timeout, so `make invoke` keeps a
/// real deadline guard instead of seeing every invocation as already late.
pub fn remaining(deadline_ms: u64, now: SystemTime) -> Duration {
    if deadline_ms < EPOCH_MS_FLOOR {
        return Duration::from_millis(deadline_ms);
    }
    let now_ms = now.duration_since(UNIX_EPOCH).unwrap_or_default().as_millis() as u64;
    Duration::from_millis(deadline_ms.saturating_sub(now_ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epoch_deadlines_and_relative_timeouts() {
        let now = UNIX_EPOCH + Duration::from_millis(1_796_000_000_000);
        assert_eq!(remaining(1_796_000_030_000, now), Duration::from_secs(30));
        assert_eq!(
            remaining(1_795_999_999_000, now),
            Duration::ZERO,
            "a past deadline leaves nothing"
        );
        assert_eq!(
            remaining(600_000, now),
            Duration::from_secs(600),
            "cargo-lambda's relative timeout"
        );
    }
}
