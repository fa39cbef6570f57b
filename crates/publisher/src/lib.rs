//! backlog-publisher: reads SQS backlog and ECS task counts and publishes
//! backlog per task to CloudWatch for a target-tracking scaling policy.
//!
//! The pure half — what it measures ([`target`]), the backlog-per-task
//! arithmetic ([`backlog`]), the metric datums ([`metrics`]), what its AWS
//! reads return ([`services`]) and its configuration ([`config`]) — builds
//! without the AWS SDK (`default-features = false`), which is how the
//! capacity planner uses it. The `lambda` feature (on by default) adds the
//! AWS adapters, the collection and publishing over them, the handler and the binary.

#[cfg(feature = "lambda")]
pub mod aws;
pub mod backlog;
#[cfg(feature = "lambda")]
pub mod collect;
/// The variables backlog-publisher reads, parsed.
pub mod config;
mod config_load;
#[cfg(feature = "lambda")]
pub mod handler;
pub mod load;
pub mod metrics;
#[cfg(feature = "lambda")]
pub mod publisher;
pub mod redrive;
pub mod services;
pub mod target;

pub use backlog::{
    BacklogIncludes, BacklogSample, QueueCounts, ServiceCounts, SettingError, TaskCountMode,
};
pub use config::{PublisherConfig, Sampling, StorageResolution};
pub use target::{BacklogTarget, Target};
