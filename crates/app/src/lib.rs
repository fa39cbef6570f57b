//! The start-up `template.yaml` gives an SQS consumer, for any processor
//! built with [`backpressure_batch`]: the variables the template sets
//! (`QUARANTINE_QUEUE_URL`, `IDEMPOTENCY_TABLE`, `QUEUE_URL`, …) read and
//! checked all at once, the queues and the idempotency store wired, then
//!
//! - [`serve`] (feature `lambda`): the function an event source mapping
//!   invokes, with partial batch responses;
//! - [`run_worker`] and [`healthcheck`] (feature `worker`): the ECS service,
//!   with long polls, the lease heartbeat, the SIGTERM drain and task protection.
//!
//! Bring the processor; the template brings the queues, the quarantine, the
//! idempotency table, the alarms, the dashboard and the scaling
//! (`docs/your-code.md`). A whole function:
//!
//! ```no_run
//! use backpressure_batch::{Message, Processor, JsonBody, Verdict};
//! use serde::Deserialize;
//!
//! #[derive(Deserialize)]
//! struct Refund { order: String, cents: i64 }
//! impl JsonBody for Refund {}
//!
//! struct Refunds;
//! impl Processor<Refund> for Refunds {
//!     async fn process(&self, _message: &Message<'_, Refund>) -> Verdict { Verdict::Done }
//! }
//!
//! #[tokio::main(flavor = "current_thread")]
//! async fn main() -> std::process::ExitCode {
//!     let refunds = |_env: &backpressure_app::Env| Ok::<_, std::convert::Infallible>(Refunds);
//!     backpressure_app::serve("refunds", "1.0.0", refunds).await
//! }
//! ```
//!
//! The same processor as a worker: `run_worker("refunds", "1.0.0", refunds)`.
//! Without features the crate is this project's queue contract alone
//! ([`WorkRequest`]).
//! The feature `forwarder` adds this project's own processor ([`delivery`]):
//! each message POSTed to `DOWNSTREAM_URL`, as batch-consumer and sqs-worker run it.
#![warn(missing_docs, unreachable_pub)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(any(feature = "lambda", feature = "worker"))]
// Hidden: the start-up's reading of the variables, public only for the tests of the
// binaries and templates and for the fuzzer, which check what the variables give.
#[doc(hidden)]
pub mod config;
#[cfg(feature = "forwarder")]
#[cfg_attr(docsrs, doc(cfg(feature = "forwarder")))]
pub mod delivery;
#[cfg(feature = "worker")]
mod healthcheck;
#[cfg(any(feature = "lambda", feature = "worker"))]
mod idempotency;
#[cfg(feature = "lambda")]
mod lambda;
#[cfg(any(feature = "lambda", feature = "worker"))]
mod start;
mod work_request;
#[cfg(feature = "worker")]
mod worker;
#[cfg(feature = "worker")]
// Hidden: the start-up's reading of the variables, public only for the tests of the
// binaries and templates and for the fuzzer, which check what the variables give.
#[doc(hidden)]
pub mod worker_config;
#[cfg(feature = "worker")]
mod worker_help;

#[cfg(any(feature = "lambda", feature = "worker"))]
#[cfg_attr(docsrs, doc(cfg(any(feature = "lambda", feature = "worker"))))]
pub use backpressure_startup::Env;
#[cfg(feature = "worker")]
// Hidden: the start-up's reading of the variables, public only for the tests of the
// binaries and templates and for the fuzzer, which check what the variables give.
#[doc(hidden)]
pub use healthcheck::HealthConfig;
#[cfg(feature = "worker")]
#[cfg_attr(docsrs, doc(cfg(feature = "worker")))]
pub use healthcheck::healthcheck;
#[cfg(feature = "lambda")]
#[cfg_attr(docsrs, doc(cfg(feature = "lambda")))]
pub use lambda::{serve, tokio_runtime};
pub use work_request::WorkRequest;
#[cfg(feature = "worker")]
#[cfg_attr(docsrs, doc(cfg(feature = "worker")))]
pub use worker::{StartError, run_worker};
