//! `DOWNSTREAM_MAX_RPS`: evenly spaced request slots for one function
//! instance, because the downstream's safe rate is the real limit.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use tokio::time::{Instant, sleep_until};

/// Request slots spaced `1 / rps` apart, shared by every message in flight.
#[derive(Debug)]
pub struct RateLimiter {
    interval: Duration,
    next_slot: Mutex<Option<Instant>>,
}

impl RateLimiter {
    /// `rps` requests a second (a positive, finite rate: [`Downstream::from_vars`](super::Downstream::from_vars) checks it).
    pub fn per_second(rps: f64) -> Self {
        Self { interval: Duration::from_secs_f64(1.0 / rps), next_slot: Mutex::new(None) }
    }

    /// Waits for the next free slot. Returns false at once, reserving
    /// nothing, when that slot is after `deadline`.
    pub async fn wait(&self, deadline: Instant) -> bool {
        let slot = {
            let mut next = self.next_slot.lock().unwrap_or_else(PoisonError::into_inner);
            let now = Instant::now();
            let slot = next.map_or(now, |next| next.max(now));
            if slot > deadline {
                return false;
            }
            *next = Some(slot + self.interval);
            slot
        };
        sleep_until(slot).await;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn spaces_requests_and_refuses_slots_past_the_deadline() {
        let limiter = RateLimiter::per_second(4.0);
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
}
