//! The values a few flags take, and how they are read.

use clap::ValueEnum;

/// `--margin`: a fraction of the SLO from 0.1 to 1.
pub(crate) fn margin(text: &str) -> Result<f64, String> {
    let value: f64 = text.parse().map_err(|_| format!("{text:?} is not a number"))?;
    if (0.1..=1.0).contains(&value) {
        Ok(value)
    } else {
        Err(format!("{value} is not a fraction of the SLO from 0.1 to 1"))
    }
}

/// `--metric-period`: a period CloudWatch alarms accept for target tracking.
pub(crate) fn metric_period(text: &str) -> Result<u64, String> {
    match text.parse::<u64>() {
        Ok(value @ (10 | 20 | 30 | 60)) => Ok(value),
        _ => Err(format!("{text:?} is not 10, 20, 30 or 60 seconds")),
    }
}

/// The service-time distribution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Distribution {
    /// Always the mean.
    Fixed,
    /// Exponential.
    Exponential,
    /// Log-normal, coefficient of variation 1.5: a long tail.
    Lognormal,
}

/// What consumes the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ConsumerKind {
    /// sqs-worker tasks on ECS, scaled by the policies compared (`ConsumerType=ecs`).
    Ecs,
    /// batch-consumer on Lambda, scaled by its SQS event source mapping (`ConsumerType=lambda`).
    Lambda,
}
