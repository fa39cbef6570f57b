//! The backlog publisher's pure side: what it measures (targets), the
//! backlog-per-task arithmetic, the metric datums, its configuration, and what
//! its AWS reads return.

pub mod backlog;
/// `PUBLISHER_VARIABLES` and their parsing.
pub mod config;
pub mod metrics;
pub mod redrive;
pub mod services;
pub mod target;

pub use backlog::{
    BacklogIncludes, BacklogSample, QueueCounts, ServiceCounts, SettingError, TaskCountMode,
};
pub use config::{PublisherConfig, Sampling, StorageResolution};
pub use target::{BacklogTarget, Target};
