//! Evenly spaced slots on an absolute schedule, shared by every task that
//! takes them: the rate holds over a whole run (no drift from call latency),
//! also below one a second. `DOWNSTREAM_MAX_RPS` and the CLI's `--rate`.

use backpressure_core::sync::lock;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::{Instant, sleep_until};

/// Slots spaced `1 / rate` apart.
#[derive(Debug)]
pub struct RateLimiter {
    interval: Duration,
    next_slot: Mutex<Option<Instant>>,
}

impl RateLimiter {
    /// `rate` slots a second; `None` when the rate is not positive and finite
    /// or its interval cannot be represented.
    pub fn per_second(rate: f64) -> Option<Self> {
        if !(rate.is_finite() && rate > 0.0) {
            return None;
        }
        let interval = Duration::try_from_secs_f64(1.0 / rate).ok()?;
        Some(Self { interval, next_slot: Mutex::new(None) })
    }

    /// The time between two slots.
    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// Waits for the next free slot and reserves it. Returns false at once,
    /// reserving nothing, when that slot is after `deadline`.
    pub async fn wait(&self, deadline: Instant) -> bool {
        self.reserve(1, Some(deadline)).await.is_some()
    }

    /// Reserves the next `slots` slots and waits for the first; returns when
    /// it began, or `None` at once, reserving nothing, when it is after `deadline`.
    pub async fn reserve(&self, slots: usize, deadline: Option<Instant>) -> Option<Instant> {
        let slot = {
            let mut next = lock(&self.next_slot);
            let now = Instant::now();
            let slot = next.map_or(now, |next| next.max(now));
            if deadline.is_some_and(|deadline| slot > deadline) {
                return None;
            }
            *next = Some(slot + self.interval * u32::try_from(slots).unwrap_or(u32::MAX));
            slot
        };
        sleep_until(slot).await;
        Some(slot)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn spaces_slots_and_refuses_those_past_the_deadline() {
        let limiter = RateLimiter::per_second(4.0).unwrap();
        let start = Instant::now();
        let deadline = start + Duration::from_millis(800);
        let mut granted = Vec::new();
        for _ in 0..6 {
            if limiter.wait(deadline).await {
                granted.push(start.elapsed().as_millis());
            }
        }
        assert_eq!(granted, [0, 250, 500, 750]);
    }

    #[tokio::test(start_paused = true)]
    async fn several_slots_at_once_also_below_one_a_second() {
        let limiter = RateLimiter::per_second(0.5).unwrap();
        let start = Instant::now();
        let first = limiter.reserve(2, None).await.unwrap();
        let second = limiter.reserve(1, None).await.unwrap();
        assert_eq!((first - start, second - start), (Duration::ZERO, Duration::from_secs(4)));
    }

    #[test]
    fn a_rate_must_be_positive_and_finite() {
        for rate in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e-300] {
            assert!(RateLimiter::per_second(rate).is_none(), "{rate}");
        }
    }
}
