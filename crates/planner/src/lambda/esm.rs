//! The SQS event source mapping's concurrency, by the rules AWS documents in
//! "Configuring scaling behavior for SQS event source mappings"
//! (<https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html>):
//!
//! - Standard mode: when messages are available it processes five batches at
//!   once, adds up to 300 concurrent invokes a minute while messages remain,
//!   at most 1,250 at once, and scales back to five when traffic is low.
//!   `MaximumConcurrency` (2–1,000) caps it.
//! - Provisioned mode: `MinimumPollers` (2–200) pollers kept ready and up to
//!   `MaximumPollers`; a poller handles up to 10 concurrent invokes, and the
//!   mapping adds up to 1,000 concurrency a minute.
//!
//! Either way the account's concurrency (1,000 by default,
//! <https://docs.aws.amazon.com/lambda/latest/dg/lambda-concurrency.html>)
//! is the ceiling: beyond it invocations are throttled.

/// Concurrent invokes standard mode starts with when messages are available.
pub const STANDARD_START: u32 = 5;
/// Concurrent invokes standard mode adds per minute, at most.
pub const STANDARD_RAMP_PER_MINUTE: u32 = 300;
/// Invokes a standard-mode mapping runs at once, at most.
pub const STANDARD_CEILING: u32 = 1_250;
/// Concurrent invokes one provisioned poller handles.
pub const INVOKES_PER_POLLER: u32 = 10;
/// Concurrency provisioned mode adds per minute, at most.
pub const PROVISIONED_RAMP_PER_MINUTE: u32 = 1_000;
/// The default account concurrency quota.
pub const ACCOUNT_CONCURRENCY: u32 = 1_000;
/// Seconds without a visible message before standard mode scales back.
const QUIET_SECONDS: u64 = 60;

/// How the mapping scales.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Lambda's own scaling, optionally capped (`ScalingConfig.MaximumConcurrency`).
    Standard {
        /// `MaximumConcurrency`; `None` for no cap.
        maximum_concurrency: Option<u32>,
    },
    /// `ProvisionedPollerConfig`.
    Provisioned {
        /// `MinimumPollers`.
        minimum_pollers: u32,
        /// `MaximumPollers`.
        maximum_pollers: u32,
    },
}

/// The mapping's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EsmModel {
    /// Standard or provisioned.
    pub mode: Mode,
    /// `BatchSize`.
    pub batch_size: u32,
    /// `MaximumBatchingWindowInSeconds`.
    pub batching_window: u64,
    /// The account's (or the function's reserved) concurrency.
    pub account_concurrency: u32,
}

impl EsmModel {
    /// The concurrency it never goes below while messages wait.
    pub fn floor(&self) -> u32 {
        let floor = match self.mode {
            Mode::Standard { .. } => STANDARD_START,
            Mode::Provisioned { minimum_pollers, .. } => minimum_pollers * INVOKES_PER_POLLER,
        };
        floor.min(self.ceiling())
    }

    /// The concurrency it never goes above.
    pub fn ceiling(&self) -> u32 {
        let own = match self.mode {
            Mode::Standard { maximum_concurrency } => {
                maximum_concurrency.unwrap_or(STANDARD_CEILING).min(STANDARD_CEILING)
            }
            Mode::Provisioned { maximum_pollers, .. } => maximum_pollers * INVOKES_PER_POLLER,
        };
        own.min(self.account_concurrency).max(1)
    }

    fn ramp_per_minute(&self) -> u32 {
        match self.mode {
            Mode::Standard { .. } => STANDARD_RAMP_PER_MINUTE,
            Mode::Provisioned { .. } => PROVISIONED_RAMP_PER_MINUTE,
        }
    }
}

/// The mapping's concurrency limit as it scales.
#[derive(Debug, Clone)]
pub struct Scaling {
    model: EsmModel,
    limit: u32,
    /// Concurrency earned towards the next whole step (the ramp is per minute).
    credit: f64,
    quiet: u64,
}

impl Scaling {
    /// At rest: the floor.
    pub fn new(model: EsmModel) -> Self {
        Self { model, limit: model.floor(), credit: 0.0, quiet: 0 }
    }

    /// Invocations it may run at once now.
    pub fn limit(&self) -> u32 {
        self.limit
    }

    /// The end of one second: with messages still visible and every allowed
    /// invocation running, it ramps up; after a quiet minute it scales back
    /// to what is running (never below the floor).
    pub fn tick(&mut self, running: u32, visible: u64) {
        if visible > 0 {
            self.quiet = 0;
            if running >= self.limit && self.limit < self.model.ceiling() {
                self.credit += f64::from(self.model.ramp_per_minute()) / 60.0;
                let step = self.credit.floor();
                self.credit -= step;
                self.limit = (self.limit + step as u32).min(self.model.ceiling());
            }
            return;
        }
        self.credit = 0.0;
        self.quiet += 1;
        if self.quiet >= QUIET_SECONDS {
            self.limit = running.max(self.model.floor());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn standard(maximum_concurrency: Option<u32>) -> EsmModel {
        EsmModel {
            mode: Mode::Standard { maximum_concurrency },
            batch_size: 10,
            batching_window: 0,
            account_concurrency: ACCOUNT_CONCURRENCY,
        }
    }

    #[test]
    fn standard_mode_starts_at_five_and_adds_300_a_minute_while_saturated() {
        let mut scaling = Scaling::new(standard(None));
        assert_eq!(scaling.limit(), 5);
        for _ in 0..60 {
            let running = scaling.limit();
            scaling.tick(running, 1_000);
        }
        assert_eq!(scaling.limit(), 305);
        // Not saturated: no ramp.
        scaling.tick(10, 1_000);
        assert_eq!(scaling.limit(), 305);
    }

    #[test]
    fn the_account_and_maximum_concurrency_cap_it() {
        let mut scaling = Scaling::new(standard(None));
        for _ in 0..600 {
            let running = scaling.limit();
            scaling.tick(running, 1_000);
        }
        assert_eq!(scaling.limit(), ACCOUNT_CONCURRENCY);
        let mut capped = Scaling::new(standard(Some(20)));
        for _ in 0..60 {
            let running = capped.limit();
            capped.tick(running, 1_000);
        }
        assert_eq!(capped.limit(), 20);
        assert_eq!(standard(Some(2)).floor(), 2);
    }

    #[test]
    fn provisioned_mode_starts_at_its_pollers_and_ramps_at_1000_a_minute() {
        let model = EsmModel {
            mode: Mode::Provisioned { minimum_pollers: 2, maximum_pollers: 200 },
            ..standard(None)
        };
        let mut scaling = Scaling::new(model);
        assert_eq!(scaling.limit(), 20);
        for _ in 0..30 {
            let running = scaling.limit();
            scaling.tick(running, 1_000);
        }
        assert_eq!(scaling.limit(), 520);
    }

    #[test]
    fn a_quiet_minute_scales_back_to_the_floor() {
        let mut scaling = Scaling::new(standard(None));
        for _ in 0..60 {
            let running = scaling.limit();
            scaling.tick(running, 1_000);
        }
        for _ in 0..59 {
            scaling.tick(0, 0);
        }
        assert_eq!(scaling.limit(), 305);
        scaling.tick(0, 0);
        assert_eq!(scaling.limit(), 5);
    }
}
