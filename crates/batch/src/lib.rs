//! SQS batch processing for Rust — what Powertools' `BatchProcessor` is in
//! Python — with the operational edge cases handled: every message ends
//! **processed**, **durably quarantined**, or **returned to its queue**, and
//! only the returned ones are reported (`ReportBatchItemFailures`).
//!
//! - Partial batch responses ([`report::BatchReport::response`]); one bad message never
//!   retries the batch, and one record with an odd field never fails it.
//! - Poison messages (a body that does not decode, a [`JsonBody`] failure, a
//!   processor's [`Verdict::Permanent`]) go to a quarantine queue
//!   ([`quarantine::SqsQuarantine`]) with everything needed to fix and replay them, and
//!   are acknowledged only once SQS confirmed the write.
//! - FIFO queues keep message group order: after a failure, the rest of its
//!   group is retried, not processed.
//! - A deadline guard settles every message before Lambda's timeout.
//! - Retried messages on standard queues come back after an exponential,
//!   jittered [`Backoff`], or the downstream's `Retry-After`.
//! - A panic in the processor retries its own message only.
//! - The producer's trace (`AWSTraceHeader`) is passed downstream as
//!   `X-Amzn-Trace-Id` and W3C `traceparent`, and logged per failed record.
//! - Records are source-neutral ([`record::SqsRecord`]): a Lambda event record and a
//!   `ReceiveMessage` message ([`record::from_message`]) run the same engine.
//!
//! # Your own body type and processor
//!
//! Any `serde::Deserialize` type is a body once it implements [`JsonBody`]
//! (whose default accepts everything). A body that is not JSON is
//! quarantined as `invalid_json`, JSON of the wrong shape as
//! `schema_violation`, and a failed validation with its own code. The
//! builder puts the processor together with what it needs:
//!
//! ```no_run
//! use backpressure_batch::quarantine::{QueueRef, SqsQuarantine};
//! use backpressure_batch::{
//!     Backoff, BatchProcessor, ContractViolation, ErrorCode, JsonBody, Message, Processor, Verdict,
//! };
//! use serde::Deserialize;
//! use std::time::Duration;
//!
//! #[derive(Deserialize)]
//! struct Refund { order: String, cents: i64 }
//!
//! impl JsonBody for Refund {
//!     fn validate(&self) -> Result<(), ContractViolation> {
//!         if self.cents > 0 { return Ok(()) }
//!         Err(ContractViolation::new(ErrorCode::Custom("non_positive".into()), "cents must be above 0"))
//!     }
//! }
//!
//! struct Refunds;
//!
//! impl Processor<Refund> for Refunds {
//!     async fn process(&self, message: &Message<'_, Refund>) -> Verdict {
//!         match refund(&message.decoded.order, message.decoded.cents).await {
//!             Ok(()) => Verdict::Done,
//!             Err(Failure::Unavailable) => Verdict::retry("payments are unavailable"),
//!             Err(Failure::UnknownOrder) => {
//!                 Verdict::permanent(ErrorCode::Custom("unknown_order".into()), "no such order")
//!             }
//!         }
//!     }
//! }
//! # enum Failure { Unavailable, UnknownOrder }
//! # async fn refund(_: &str, _: i64) -> Result<(), Failure> { Ok(()) }
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//! let sqs = aws_sdk_sqs::Client::new(&aws_config::load_from_env().await);
//! let quarantine = QueueRef::parse("https://sqs.eu-west-1.amazonaws.com/123456789012/quarantine")?;
//! let batch = BatchProcessor::builder(Refunds)
//!     .quarantine(SqsQuarantine::new(sqs.clone(), quarantine, 262_144))
//!     .retries(sqs, Backoff { base: Duration::from_secs(10), max: Duration::from_secs(900) })
//!     .build()?;
//! lambda_runtime::run(batch.lambda_handler()).await?;
//! # Ok(()) }
//! ```
//!
//! The `backpressure-app` crate starts the same processor from the
//! variables `template.yaml` gives a consumer, on Lambda
//! (`backpressure_app::serve`) or as an ECS service
//! (`backpressure_app::run_worker`); `crates/app/examples/` has one of each,
//! run against the emulators by the end-to-end tests.
//!
//! # No side effect before a claim
//!
//! With an [`idempotency`] store, each body's key ([`Body::idempotency_key`],
//! from [`JsonBody::idempotency_key`]) is claimed before its processor runs:
//! a completed key is acknowledged as [`report::Outcome::Duplicate`], a key another
//! consumer holds is retried after that holder's lease, the same key with
//! another body is quarantined as `idempotency_key_reused`. On top of the
//! example above:
//!
//! ```no_run
//! # use backpressure_batch::{BatchProcessor, Body, Processor};
//! use backpressure_batch::idempotency::Idempotency;
//! # async fn run<B: Body, P: Processor<B>>(processor: P) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//! let config = aws_config::load_from_env().await;
//! let claims = Idempotency::dynamodb(aws_sdk_dynamodb::Client::new(&config), "idempotency");
//! let batch = BatchProcessor::builder(processor).idempotency(claims).build()?;
//! # Ok(()) }
//! ```
//!
//! # Outside Lambda
//!
//! [`BatchProcessor::process`] takes records and a deadline, whatever
//! delivered them: convert `ReceiveMessage` messages with
//! [`record::from_message`] and delete those not listed in the response.
//! Without a quarantine ([`Builder::quarantine`]), a permanent failure is
//! reported as a batch item failure, and the queue's redrive policy moves the
//! message to its dead-letter queue after `maxReceiveCount`. With the
//! `worker` feature, [`worker::Worker`] does all of that as an ECS service:
//! long polls, the lease heartbeat, the SIGTERM drain, task protection.
//!
//! # Features
//!
//! None is on by default: the engine and the Lambda event types build no AWS
//! SDK crate. `lambda` (the handler for `lambda_runtime`), `sqs` (the
//! quarantine queue, visibility backoff), `s3-overflow`, `dynamodb` and
//! `redis` (idempotency stores), and `worker` add what they name.
#![warn(missing_docs, unreachable_pub)]
// Internals serve the features that use them (the worker renews claims, the stores read
// statuses): a build with fewer features leaves some unused. With every feature on, as clippy
// runs, dead code is still an error.
#![cfg_attr(
    not(all(
        feature = "worker",
        feature = "redis",
        feature = "dynamodb",
        feature = "s3-overflow",
        feature = "offloaded-payloads"
    )),
    allow(dead_code)
)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod backoff;
mod batch_processor;
mod body;
mod builder;
mod emf;
mod engine;
pub mod envelope;
pub mod idempotency;
#[cfg(feature = "lambda")]
mod lambda;
#[cfg(feature = "offloaded-payloads")]
mod offloaded;
mod outcome;
mod processor;
pub mod quarantine;
pub mod record;
pub mod report;
mod schedule;
mod settled;
mod source;
#[cfg(feature = "sqs")]
mod sqs;
mod summary;
#[cfg(test)]
mod test_request;
mod trace;
#[cfg(feature = "worker")]
#[cfg_attr(docsrs, doc(cfg(feature = "worker")))]
pub mod worker;
// Without the worker, only its lease table, where renewed claims are held.
#[cfg(not(feature = "worker"))]
mod worker;

/// The README's examples, compiled by `cargo test --doc`.
#[cfg(all(doctest, feature = "lambda"))]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

pub use backoff::Backoff;
pub use batch_processor::BatchProcessor;
pub use body::{Body, ContractViolation, JsonBody, Labels};
pub use builder::{BuildError, Builder};
pub use outcome::{ErrorCode, Verdict};
pub use processor::{Message, Processor};
