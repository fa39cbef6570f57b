//! Pure logic shared by the sqs-backpressure functions: backlog maths, metric
//! datums, configuration parsing and the narrow ports the AWS adapters implement.
//! Nothing in this crate performs I/O.

pub mod backlog;
pub mod config;
pub mod consumer;
pub mod deadline;
#[cfg(feature = "fixtures")]
pub mod fixtures;
#[cfg(feature = "subscriber")]
pub mod logging;
pub mod metrics;
pub mod ports;
pub mod redrive;
pub mod target;

pub use backlog::{BacklogIncludes, BacklogSample, QueueCounts, ServiceCounts, TaskCountMode};
pub use target::{BacklogTarget, QueueRef, Target};
