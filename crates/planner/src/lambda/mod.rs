//! The Lambda consumer (`ConsumerType=lambda`): batch-consumer invoked by the
//! SQS event source mapping, which scales it by its own rules rather than
//! by a scaling policy.

pub mod args;
pub mod commands;
pub mod esm;
pub mod invoke;
pub mod report;
pub mod run;
pub mod search;

use crate::defaults;
use crate::random::ServiceTime;

/// The function, its mapping and its downstream.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LambdaModel {
    /// The event source mapping.
    pub esm: esm::EsmModel,
    /// What one invocation does.
    pub invocation: invoke::InvocationModel,
    /// `ConsumerMemorySize`, MB: the GB-seconds billed per second of duration.
    pub memory_mb: u32,
}

impl LambdaModel {
    /// The template's defaults, with `service`.
    pub fn new(service: ServiceTime) -> Self {
        Self {
            esm: esm::EsmModel {
                mode: esm::Mode::Standard {
                    maximum_concurrency: Some(defaults::MAXIMUM_CONCURRENCY),
                },
                batch_size: defaults::BATCH_SIZE,
                batching_window: defaults::BATCHING_WINDOW,
                account_concurrency: esm::ACCOUNT_CONCURRENCY,
            },
            invocation: invoke::InvocationModel {
                slots: defaults::SLOTS,
                service,
                timeout: defaults::FUNCTION_TIMEOUT as f64,
                deadline_margin: defaults::DEADLINE_MARGIN_MS as f64 / 1_000.0,
                downstream: invoke::DownstreamModel {
                    max_rps_per_instance: None,
                    capacity_rps: None,
                },
            },
            memory_mb: defaults::MEMORY_MB,
        }
    }
}
