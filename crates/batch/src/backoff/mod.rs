//! Visibility backoff for retried messages on standard queues: the next
//! delivery waits longer each time the message has been received.

#[cfg(feature = "sqs")]
pub(crate) mod policy;

use std::time::Duration;

/// One retried message's new visibility timeout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct VisibilityChange {
    /// The message to delay, by its receipt handle.
    pub receipt_handle: String,
    /// Its new visibility timeout, counted from now.
    pub timeout: Duration,
}

/// `ChangeMessageVisibility` accepts at most 12 hours.
pub(crate) const MAX_VISIBILITY: Duration = Duration::from_secs(43_200);

/// Exponential, jittered visibility backoff: `base` doubled per receive, capped at `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// The first retry's delay; zero turns backoff off.
    pub base: Duration,
    /// The longest delay (at most SQS's 12 hours).
    pub max: Duration,
}

impl Backoff {
    /// Whether retried messages' visibility is changed at all.
    pub(crate) fn is_enabled(self) -> bool {
        !self.base.is_zero()
    }

    /// The visibility timeout for a message received `receive_count` times:
    /// base × 2^(count − 1), capped at `max`, with "equal jitter" (half fixed,
    /// half random, `jitter` in [0, 1)) so retries of one batch spread out.
    /// A downstream's `Retry-After` is a floor. Whole seconds, as SQS takes them.
    ///
    /// SQS refuses a visibility timeout that reaches past 12 hours from the
    /// message's first receipt, so `since_first_receive`
    /// (`ApproximateFirstReceiveTimestamp` to now) shortens the cap; `None`
    /// when no time is left, and the message comes back on the queue's own timeout.
    pub(crate) fn visibility_timeout(
        self,
        receive_count: u32,
        retry_after: Option<Duration>,
        jitter: f64,
        since_first_receive: Option<Duration>,
    ) -> Option<Duration> {
        if !self.is_enabled() {
            return None;
        }
        let lease_left = lease_left(since_first_receive);
        if lease_left.is_zero() {
            return None;
        }
        let max = self.max.min(lease_left);
        let exponent = receive_count.saturating_sub(1).min(32);
        let ceiling = self.base.saturating_mul(1 << exponent.min(31)).min(max);
        let jitter = jitter.clamp(0.0, 1.0);
        let delay = ceiling.mul_f64(0.5 + jitter / 2.0);
        let delay = retry_after.map_or(delay, |floor| delay.max(floor)).min(max);
        Some(Duration::from_secs(delay.as_secs_f64().ceil() as u64).min(max))
    }
}

/// The longest visibility timeout SQS still takes for a message first received
/// `since_first_receive` ago: whole seconds, rounded down, so it is never past the limit.
pub(crate) fn lease_left(since_first_receive: Option<Duration>) -> Duration {
    let left = MAX_VISIBILITY.saturating_sub(since_first_receive.unwrap_or_default());
    Duration::from_secs(left.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: Duration = Duration::from_secs(1);

    fn backoff(base: u64, max: u64) -> Backoff {
        Backoff { base: SECOND * base as u32, max: SECOND * max as u32 }
    }

    #[test]
    fn doubles_per_receive_and_stops_at_the_cap() {
        let b = backoff(10, 900);
        // jitter 1.0 gives the ceiling, 0.0 half of it.
        let table = [
            (1, 10, 5),
            (2, 20, 10),
            (3, 40, 20),
            (4, 80, 40),
            (7, 640, 320),
            (8, 900, 450),
            (50, 900, 450),
        ];
        for (count, high, low) in table {
            assert_eq!(
                b.visibility_timeout(count, None, 1.0, None),
                Some(SECOND * high),
                "count {count}"
            );
            assert_eq!(
                b.visibility_timeout(count, None, 0.0, None),
                Some(SECOND * low),
                "count {count}"
            );
        }
        assert_eq!(
            b.visibility_timeout(0, None, 1.0, None),
            Some(SECOND * 10),
            "a missing count counts as the first"
        );
    }

    #[test]
    fn jitter_stays_between_half_and_full() {
        let b = backoff(10, 900);
        for step in 0..=20 {
            let jitter = f64::from(step) / 20.0;
            let value = b.visibility_timeout(3, None, jitter, None).unwrap();
            assert!((SECOND * 20..=SECOND * 40).contains(&value), "{jitter}: {value:?}");
        }
    }

    #[test]
    fn retry_after_is_a_floor_under_the_cap() {
        let b = backoff(10, 900);
        assert_eq!(b.visibility_timeout(1, Some(SECOND * 120), 0.0, None), Some(SECOND * 120));
        assert_eq!(b.visibility_timeout(1, Some(SECOND * 2), 1.0, None), Some(SECOND * 10));
        assert_eq!(b.visibility_timeout(1, Some(SECOND * 5000), 0.0, None), Some(SECOND * 900));
    }

    #[test]
    fn zero_base_disables_and_the_sqs_maximum_always_holds() {
        assert_eq!(backoff(0, 900).visibility_timeout(5, Some(SECOND * 60), 0.5, None), None);
        let huge = Backoff { base: SECOND * 100_000, max: SECOND * 100_000 };
        assert_eq!(huge.visibility_timeout(1, None, 1.0, None), Some(MAX_VISIBILITY));
    }

    #[test]
    fn never_past_twelve_hours_from_the_first_receipt() {
        let b = backoff(600, 43_200);
        let hours = |h: u64| Some(SECOND * (h * 3600) as u32);
        // Received 11 h 59 min 30.5 s ago: 29 whole seconds are left.
        let late = Some(Duration::from_millis(43_170_500));
        assert_eq!(b.visibility_timeout(9, None, 1.0, late), Some(SECOND * 29));
        assert_eq!(
            b.visibility_timeout(9, Some(SECOND * 3600), 0.0, hours(11)),
            Some(SECOND * 3600)
        );
        assert_eq!(b.visibility_timeout(20, None, 1.0, hours(11)), Some(SECOND * 3600));
        assert_eq!(b.visibility_timeout(1, None, 1.0, hours(12)), None);
        assert_eq!(b.visibility_timeout(1, None, 1.0, hours(30)), None);
        assert_eq!(b.visibility_timeout(1, None, 1.0, Some(Duration::ZERO)), Some(SECOND * 600));
    }
}
