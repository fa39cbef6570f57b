//! `--consumer lambda`'s flags: the event source mapping, the function and
//! its downstream, with the mapping's own rules on combining them.

use clap::Args;

use crate::args::error::{ArgsError, check};
use crate::defaults;

/// The help heading of the flags only the Lambda consumer's model reads.
const LAMBDA: &str = "Lambda consumer (--consumer lambda)";

/// `--consumer lambda`'s settings: the event source mapping, the function
/// and its downstream. Defaults are the template's. Their clap group,
/// `lambda`, is what an ECS run refuses.
#[derive(Debug, Args)]
#[group(id = "lambda")]
pub struct LambdaArgs {
    /// BatchSize (above 10 needs --batching-window of 1 s or more).
    #[arg(long, help_heading = LAMBDA, default_value_t = defaults::BATCH_SIZE, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub batch_size: u32,
    /// MaximumBatchingWindowInSeconds.
    #[arg(long, help_heading = LAMBDA, default_value_t = defaults::BATCHING_WINDOW, value_parser = clap::value_parser!(u64).range(0..=300))]
    pub batching_window: u64,
    /// MaximumConcurrency: 2-1000, or 0 for none (standard mode) [default: 5, the template's].
    #[arg(long, help_heading = LAMBDA, value_parser = maximum_concurrency)]
    pub maximum_concurrency: Option<u32>,
    /// Provisioned mode: MinimumPollers (2-200); needs --provisioned-max-pollers.
    #[arg(long, help_heading = LAMBDA, value_parser = clap::value_parser!(u32).range(2..=200))]
    pub provisioned_min_pollers: Option<u32>,
    /// Provisioned mode: MaximumPollers (2-10000); MinimumPollers is 2 unless
    /// --provisioned-min-pollers is given.
    #[arg(long, help_heading = LAMBDA, value_parser = clap::value_parser!(u32).range(2..=10_000))]
    pub provisioned_max_pollers: Option<u32>,
    /// The account's concurrency quota (or what other functions leave of it).
    #[arg(long, help_heading = LAMBDA, default_value_t = crate::lambda::esm::ACCOUNT_CONCURRENCY, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub account_concurrency: u32,
    /// ConsumerTimeout, seconds: one of the template's 10, 15, 30, 60, 120, 300, 600, 900; the
    /// queue's visibility timeout is 6 × this unless --visibility-timeout is given.
    #[arg(long, help_heading = LAMBDA, default_value_t = defaults::FUNCTION_TIMEOUT, value_parser = function_timeout)]
    pub function_timeout: u64,
    /// DeadlineMarginMs: no message starts closer than this to the timeout.
    #[arg(long, help_heading = LAMBDA, default_value_t = defaults::DEADLINE_MARGIN_MS, value_parser = clap::value_parser!(u64).range(100..=900_000))]
    pub deadline_margin_ms: u64,
    /// ConsumerMemorySize, MB: GB-seconds billed per second of duration.
    #[arg(long, help_heading = LAMBDA, default_value_t = defaults::MEMORY_MB, value_parser = clap::value_parser!(u32).range(128..=10_240))]
    pub memory_mb: u32,
    /// DownstreamMaxRps: requests per second one function instance sends, at most.
    #[arg(long, help_heading = LAMBDA, value_parser = positive)]
    pub downstream_max_rps: Option<f64>,
    /// Requests per second the downstream takes at its usual speed; beyond it each request
    /// slows in proportion, and recommend rejects a setting that exceeds it.
    #[arg(long, help_heading = LAMBDA, value_parser = positive)]
    pub downstream_capacity: Option<f64>,
}

impl LambdaArgs {
    /// The event source mapping's own rules on combining its settings.
    pub(crate) fn check(&self) -> Result<(), ArgsError> {
        check(
            self.batch_size <= 10 || self.batching_window >= 1,
            "batch-size",
            self.batch_size,
            "must be at most 10 unless --batching-window is 1 s or more (the mapping's rule \
             for standard queues)",
        )?;
        let (min, max) = (self.provisioned_min_pollers, self.provisioned_max_pollers);
        check(
            min.is_none() || max.is_some(),
            "provisioned-min-pollers",
            min.unwrap_or_default(),
            "needs --provisioned-max-pollers too (provisioned mode takes both)",
        )?;
        check(
            min.zip(max).is_none_or(|(min, max)| min <= max),
            "provisioned-min-pollers",
            min.unwrap_or_default(),
            "must be at most --provisioned-max-pollers",
        )?;
        check(
            max.is_none() || self.maximum_concurrency.is_none(),
            "maximum-concurrency",
            self.maximum_concurrency.unwrap_or_default(),
            "cannot be given with provisioned pollers (AWS makes the two mutually exclusive)",
        )?;
        check(
            (self.deadline_margin_ms / 1_000) < self.function_timeout,
            "deadline-margin-ms",
            self.deadline_margin_ms,
            "must be shorter than --function-timeout",
        )
    }
}

/// The `ConsumerTimeout` values the template allows.
pub const FUNCTION_TIMEOUTS: [u64; 8] = [10, 15, 30, 60, 120, 300, 600, 900];

/// `--function-timeout`: one the template can deploy.
fn function_timeout(text: &str) -> Result<u64, String> {
    match text.parse::<u64>() {
        Ok(value) if FUNCTION_TIMEOUTS.contains(&value) => Ok(value),
        _ => Err(format!("{text:?} is not one of ConsumerTimeout's {FUNCTION_TIMEOUTS:?}")),
    }
}

/// `--maximum-concurrency`: 0 (none) or the mapping's 2–1,000.
fn maximum_concurrency(text: &str) -> Result<u32, String> {
    match text.parse::<u32>() {
        Ok(value) if value == 0 || (2..=1_000).contains(&value) => Ok(value),
        _ => Err(format!("{text:?} is not 0 (none) or from 2 to 1000, the mapping's range")),
    }
}

/// A positive, finite number of requests per second.
fn positive(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(value) if value.is_finite() && value > 0.0 && value <= 1e9 => Ok(value),
        _ => Err(format!("{text:?} is not a number of requests per second above 0")),
    }
}
