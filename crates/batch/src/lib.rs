//! SQS batch processing for Rust — what Powertools' `BatchProcessor` is in
//! Python — with the operational edge cases handled: partial batch responses
//! (`ReportBatchItemFailures`), durable quarantine of poison messages, FIFO
//! group order, a deadline guard, visibility backoff for retries, and an HTTP
//! delivery processor. TODO crate docs
#![warn(missing_docs)]

pub mod delivery;
pub mod lambda;
pub mod prelude;
mod processor;
pub mod sqs;
pub mod startup;

pub use aws_lambda_events::sqs::SqsBatchResponse;
pub use backpressure_core::consumer::ConsumerConfig;
pub use backpressure_core::consumer::backoff::Backoff;
pub use backpressure_core::consumer::body::{Body, Validate};
pub use backpressure_core::consumer::contract::{ContractViolation, WorkRequest};
pub use backpressure_core::consumer::engine::{
    BatchError, BatchReport, Message, Processor, QuarantineError, QuarantineStore, RecordOutcome,
};
pub use backpressure_core::consumer::event::{IncomingEvent, SqsEvent, SqsRecord};
pub use backpressure_core::consumer::outcome::{ErrorCode, Outcome, RetryCause, Verdict};
pub use backpressure_core::consumer::quarantine::QuarantineRecord;
pub use backpressure_core::consumer::trace::TraceContext;
pub use delivery::HttpDelivery;
pub use lambda::{HandlerError, serve};
pub use processor::{BatchProcessor, BuildError, Builder, Unset};
pub use sqs::{SqsQuarantine, SqsVisibility, record_from_message};
