//! `--rate`: an absolute schedule shared by every loop, so the rate holds over
//! the whole run (no drift from call latency) and below one message a second.

use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

use crate::error::CliError;

#[derive(Debug)]
pub struct Pacer {
    per_message: Option<Duration>,
    next: Mutex<Option<Instant>>,
}

impl Pacer {
    /// Messages per second, or `None` for as fast as SQS takes them.
    pub fn new(rate: Option<f64>) -> Result<Self, CliError> {
        let per_message = match rate {
            None => None,
            Some(rate) if rate.is_finite() && rate > 0.0 => {
                Some(Duration::try_from_secs_f64(1.0 / rate).map_err(|_| CliError::BadRate(rate))?)
            }
            Some(rate) => return Err(CliError::BadRate(rate)),
        };
        Ok(Self { per_message, next: Mutex::new(None) })
    }

    /// Messages per send: about ten sends a second at most, so a rate is
    /// spread evenly instead of arriving in bursts of ten.
    pub fn batch_size(&self) -> usize {
        match self.per_message {
            None => 10,
            Some(gap) => ((0.1 / gap.as_secs_f64()) as usize).clamp(1, 10),
        }
    }

    /// Waits for the slot of the next `messages` and returns when it began.
    pub async fn wait(&self, messages: usize) -> Instant {
        let now = Instant::now();
        let Some(gap) = self.per_message else { return now };
        let slot = {
            let Ok(mut next) = self.next.lock() else { return now };
            let slot = next.map_or(now, |next| next.max(now));
            *next = Some(slot + gap * u32::try_from(messages).unwrap_or(u32::MAX));
            slot
        };
        tokio::time::sleep_until(slot).await;
        slot
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

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
