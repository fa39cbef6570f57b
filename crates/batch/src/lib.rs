//! SQS batch processing for Rust — what Powertools' `BatchProcessor` is in
//! Python — with the operational edge cases handled: every message ends
//! **processed**, **durably quarantined**, or **returned to its queue**, and
//! only the returned ones are reported (`ReportBatchItemFailures`).
//!
//! - Partial batch responses ([`report::SqsBatchResponse`]); one bad message never
//!   retries the batch, and one record Lambda cannot decode never fails it.
//! - Poison messages (a body that does not decode, a [`Validate`] failure, a
//!   processor's [`Verdict::Permanent`]) go to a quarantine queue
//!   ([`SqsQuarantine`]) with everything needed to fix and replay them, and
//!   are acknowledged only once SQS confirmed the write.
//! - FIFO queues keep message group order: after a failure, the rest of its
//!   group is retried, not processed.
//! - A deadline guard settles every message before Lambda's timeout.
//! - Retried messages on standard queues come back after an exponential,
//!   jittered [`Backoff`], or the downstream's `Retry-After`.
//! - A panic in the processor retries its own message only.
//! - The producer's trace (`AWSTraceHeader`) is passed downstream as
//!   `X-Amzn-Trace-Id` and W3C `traceparent`, and logged per failed record.
//! - Records are source-neutral ([`SqsRecord`]): a Lambda event record and a
//!   `ReceiveMessage` message ([`sqs::record_from_message`]) run the same engine.
//!
//! # The default processor: HTTP delivery
//!
//! [`delivery::HttpDelivery`] POSTs each [`delivery::WorkRequest`] (this project's queue
//! contract) to a downstream service; 2xx is done, 408/425/429/5xx retried,
//! any other 4xx quarantined. The whole `batch-consumer` function is:
//!
//! ```no_run
//! use backpressure_batch::delivery::HttpDelivery;
//! use backpressure_batch::serve;
//!
//! #[tokio::main(flavor = "current_thread")]
//! async fn main() -> std::process::ExitCode {
//!     serve("batch-consumer", "1.0.0", HttpDelivery::from_vars).await
//! }
//! ```
//!
//! [`serve`] reads `QUARANTINE_QUEUE_URL` and the engine's settings from the
//! environment; with the builder, everything is explicit:
//!
//! ```no_run
//! use backpressure_batch::delivery::{Downstream, HttpDelivery};
//! use backpressure_batch::sqs::{QueueRef, SqsVisibility};
//! use backpressure_batch::{Backoff, BatchProcessor, SqsQuarantine};
//! use std::time::Duration;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//! let sqs = aws_sdk_sqs::Client::new(&aws_config::load_from_env().await);
//! let quarantine = QueueRef::parse("https://sqs.eu-west-1.amazonaws.com/123456789012/quarantine")?;
//! let downstream = Downstream {
//!     url: "https://orders.internal/work".into(),
//!     timeout: Duration::from_secs(5),
//!     max_rps: Some(200.0),
//! };
//! let batch = BatchProcessor::builder(HttpDelivery::new(&downstream)?)
//!     .quarantine(SqsQuarantine::new(sqs.clone(), quarantine, 262_144))
//!     .backoff(Backoff { base: Duration::from_secs(10), max: Duration::from_secs(900) })
//!     .visibility(SqsVisibility::new(sqs))
//!     .build()?;
//! lambda_runtime::run(batch.lambda_handler()).await?;
//! # Ok(()) }
//! ```
//!
//! # No side effect before a claim
//!
//! With an [`idempotency`] store, each body's key ([`Body::idempotency_key`];
//! `idempotencyKey` for `WorkRequest`) is claimed before its processor runs:
//! a completed key is acknowledged as [`Outcome::Duplicate`], a key another
//! consumer holds is retried after that holder's lease, the same key with
//! another body is quarantined as `idempotency_key_reused`. On top of the
//! example above:
//!
//! ```no_run
//! # use backpressure_batch::{BatchProcessor, delivery::{Downstream, HttpDelivery}};
//! use backpressure_batch::idempotency::{DynamoDbStore, Idempotency};
//! # async fn run(downstream: Downstream) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//! let config = aws_config::load_from_env().await;
//! let store = DynamoDbStore::new(aws_sdk_dynamodb::Client::new(&config), "idempotency");
//! let batch = BatchProcessor::builder(HttpDelivery::new(&downstream)?)
//!     .idempotency(Idempotency::new(store))
//!     .build()?;
//! # Ok(()) }
//! ```
//!
//! [`serve`] does this when `IDEMPOTENCY_TABLE` is set.
//!
//! # Your own body type and processor
//!
//! Any `serde::Deserialize` type is a body once it implements [`Validate`]
//! (whose default accepts everything). A body that is not JSON is
//! quarantined as `invalid_json`, JSON of the wrong shape as
//! `schema_violation`, and a failed validation with its own code:
//!
//! ```no_run
//! use backpressure_batch::prelude::*;
//! use serde::Deserialize;
//!
//! #[derive(Deserialize)]
//! struct Refund { order: String, cents: i64 }
//!
//! impl Validate for Refund {
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
//!         match refund(&message.request.order, message.request.cents).await {
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
//! #[tokio::main(flavor = "current_thread")]
//! async fn main() -> std::process::ExitCode {
//!     serve("refunds", "1.0.0", |_env: &Env| Ok::<_, std::convert::Infallible>(Refunds)).await
//! }
//! ```
//!
//! `crates/batch/examples/ledger.rs` is a complete function of this kind,
//! run against the emulators by the end-to-end tests.
//!
//! # Outside Lambda
//!
//! [`BatchProcessor::process`] takes records and a deadline, whatever
//! delivered them: convert `ReceiveMessage` messages with
//! [`sqs::record_from_message`] and delete those not listed in the response.
//! Without a quarantine ([`builder::Builder::quarantine`]), a permanent failure is
//! reported as a batch item failure, and the queue's redrive policy moves the
//! message to its dead-letter queue after `maxReceiveCount`.
#![warn(missing_docs, unreachable_pub)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod backoff;
mod batch_processor;
pub mod body;
pub mod builder;
pub mod config;
#[cfg(feature = "http-delivery")]
#[cfg_attr(docsrs, doc(cfg(feature = "http-delivery")))]
pub mod delivery;
mod engine;
pub mod event;
pub mod idempotency;
#[cfg(feature = "lambda")]
#[cfg_attr(docsrs, doc(cfg(feature = "lambda")))]
pub mod lambda;
pub mod outcome;
#[cfg(all(feature = "lambda", feature = "http-delivery"))]
#[cfg_attr(docsrs, doc(cfg(all(feature = "lambda", feature = "http-delivery"))))]
pub mod prelude;
mod processor;
pub mod quarantine;
pub mod report;
mod schedule;
mod source;
#[cfg(feature = "sqs")]
#[cfg_attr(docsrs, doc(cfg(feature = "sqs")))]
pub mod sqs;
#[cfg(all(feature = "sqs", feature = "s3-overflow", feature = "dynamodb", feature = "redis"))]
#[cfg_attr(
    docsrs,
    doc(cfg(all(
        feature = "sqs",
        feature = "s3-overflow",
        feature = "dynamodb",
        feature = "redis"
    )))
)]
pub mod start;
mod summary;
pub mod trace;
#[cfg(feature = "sqs")]
mod visibility;
#[cfg(feature = "http-delivery")]
mod work_request;
#[cfg(feature = "worker")]
#[cfg_attr(docsrs, doc(cfg(feature = "worker")))]
pub mod worker;

pub use backoff::Backoff;
#[cfg(feature = "lambda")]
#[cfg_attr(docsrs, doc(cfg(feature = "lambda")))]
pub use backpressure_startup::Env;

/// The README's examples, compiled by `cargo test --doc`.
#[cfg(all(doctest, feature = "lambda"))]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
pub use batch_processor::{BatchProcessor, Processing};
pub use body::{Body, ContractViolation, Validate};
pub use event::SqsRecord;
#[cfg(feature = "lambda")]
#[cfg_attr(docsrs, doc(cfg(feature = "lambda")))]
pub use lambda::serve;
pub use outcome::{ErrorCode, Outcome, Verdict};
pub use processor::{Message, Processor};
pub use report::BatchReport;
#[cfg(feature = "sqs")]
#[cfg_attr(docsrs, doc(cfg(feature = "sqs")))]
pub use sqs::SqsQuarantine;
