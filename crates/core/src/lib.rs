//! Pure logic shared by the sqs-backpressure functions, free of the AWS SDK
//! and of the Lambda runtime. The two domains sit side by side —
//! [`publisher`] (backlog per task) and [`consumer`] (the batch engine) — with
//! what both use beside them: [`config`], [`queue`], [`deadline`], [`error`].
//! Nothing in this crate performs I/O.
#![warn(missing_docs)]

pub mod config;
pub mod consumer;
pub mod deadline;
pub mod error;
#[cfg(feature = "fixtures")]
pub mod fixtures;
#[cfg(feature = "subscriber")]
pub mod logging;
pub mod publisher;
pub mod queue;
