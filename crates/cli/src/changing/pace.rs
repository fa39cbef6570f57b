//! `--rate`: an absolute schedule shared by every loop, so the rate holds over
//! the whole run (no drift from call latency) and below one message a second.

use backpressure_startup::rate::RateLimiter;
use tokio::time::Instant;

use crate::terminal::error::CliError;

#[derive(Debug)]
pub(crate) struct Pacer {
    limiter: Option<RateLimiter>,
}

impl Pacer {
    /// Messages per second, or `None` for as fast as SQS takes them.
    pub(crate) fn new(rate: Option<f64>) -> Result<Self, CliError> {
        let limiter = match rate {
            None => None,
            Some(rate) => Some(RateLimiter::per_second(rate).ok_or(CliError::BadRate(rate))?),
        };
        Ok(Self { limiter })
    }

    /// Messages per send: about ten sends a second at most, so a rate is
    /// spread evenly instead of arriving in bursts of ten.
    pub(crate) fn batch_size(&self) -> usize {
        match &self.limiter {
            None => 10,
            Some(limiter) => ((0.1 / limiter.interval().as_secs_f64()) as usize).clamp(1, 10),
        }
    }

    /// Waits for the slot of the next `messages` and returns when it began.
    pub(crate) async fn wait(&self, messages: usize) -> Instant {
        match &self.limiter {
            None => Instant::now(),
            Some(limiter) => limiter.reserve(messages, None).await.unwrap_or_else(Instant::now),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::time::Duration;

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn slots_follow_the_rate_also_below_one_a_second() {
        let pacer = Pacer::new(Some(0.5)).unwrap();
        assert_eq!(pacer.batch_size(), 1);
        let start = Instant::now();
        let mut slots = Vec::new();
        for _ in 0..4 {
            slots.push(pacer.wait(1).await.duration_since(start));
        }
        assert_eq!(slots, [0, 2, 4, 6].map(Duration::from_secs));
    }

    #[tokio::test(start_paused = true)]
    async fn a_batch_takes_the_slots_of_its_messages() {
        let pacer = Pacer::new(Some(200.0)).unwrap();
        assert_eq!(pacer.batch_size(), 10);
        let start = Instant::now();
        pacer.wait(10).await;
        let second = pacer.wait(10).await.duration_since(start);
        assert_eq!(second, Duration::from_millis(50));
        assert_eq!(Pacer::new(Some(25.0)).unwrap().batch_size(), 2);
        assert_eq!(Pacer::new(None).unwrap().batch_size(), 10);
    }

    #[test]
    fn a_rate_must_be_positive_and_finite() {
        for rate in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e-300] {
            let error = Pacer::new(Some(rate)).unwrap_err().to_string();
            assert!(error.contains("--rate"), "{error}");
        }
    }
}
