//! The batch processor as a long-running ECS (or any) service, around a
//! processor of your own.
//!
//! A [`Worker`] long-polls one queue with several pollers, at most
//! `max_in_flight` messages in work at once; runs each received batch through
//! your [`crate::BatchProcessor`] (quarantine, idempotency, FIFO order,
//! backoff as set there); deletes each message as soon as it settles; renews
//! the lease (the visibility timeout, and an idempotency claim's) of every
//! message still in work; stamps a health file after every successful poll;
//! holds ECS task scale-in protection while busy; and on SIGTERM stops
//! receiving and drains. A second signal releases the work in hand at once, a
//! third ends the wait for the receives under way.
//!
//! ```no_run
//! use backpressure_batch::{BatchProcessor, Message, Processor, JsonBody, Verdict};
//! use backpressure_batch::worker::{Ended, QueueRef, Worker};
//! use serde::Deserialize;
//! use std::time::Duration;
//!
//! #[derive(Deserialize)]
//! struct Resize { image: String }
//! impl JsonBody for Resize {}
//!
//! struct Resizer;
//! impl Processor<Resize> for Resizer {
//!     async fn process(&self, message: &Message<'_, Resize>) -> Verdict {
//!         # let _ = &message.decoded.image;
//!         Verdict::Done
//!     }
//! }
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//! let sqs = aws_sdk_sqs::Client::new(&aws_config::load_from_env().await);
//! let queue = QueueRef::parse("https://sqs.eu-west-1.amazonaws.com/123456789012/resize")?;
//! let batch = BatchProcessor::builder(Resizer).concurrency(16);
//! let worker = Worker::builder(batch, sqs, queue).drain(Duration::from_secs(60)).build().await?;
//! match worker.run().await? {
//!     Ended::Drained => {}
//!     _ => std::process::exit(1),
//! }
//! # Ok(()) }
//! ```
//!
//! In a container, stamp the health file where the task definition's health
//! check reads it ([`WorkerBuilder::health_file`], [`health_check`]).

// The lease table is compiled without the worker too: a batch processor's
// renewed claims are held in one. The rest is the worker's alone.
pub(crate) mod leases;

/// Each item only with the `worker` feature.
macro_rules! with_the_worker {
    ($($item:item)*) => { $( #[cfg(feature = "worker")] $item )* };
}

with_the_worker! {
    mod deleter;
    mod groups;
    mod health;
    mod metrics;
    mod protection;
    mod queue;
    mod runtime;
    mod settings;
    mod setup;
    mod signals;

    pub use backpressure_core::queue::QueueRef;
    pub use health::{Unhealthy, health_check};
    pub use runtime::{Ended, Worker};
    pub use setup::{WorkerBuilder, WorkerError};
}
