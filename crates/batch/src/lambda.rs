//! The Lambda side: the handler `lambda_runtime` runs, its error types, and
//! [`serve`], the whole start-up of an SQS-triggered function.

use std::error::Error;
use std::process::ExitCode;
use std::time::SystemTime;

use crate::body::Body;
use crate::config::ConsumerConfig;
use crate::engine::BatchError;
use crate::event::IncomingEvent;
use crate::message::Processor;
use crate::quarantine::QuarantineStore;
use aws_lambda_events::sqs::SqsBatchResponse;
use backpressure_core::config::ConfigError;
use backpressure_core::deadline;
use backpressure_core::error::error_chain;
use lambda_runtime::{Diagnostic, LambdaEvent, Service, service_fn};
use tokio::time::Instant;
use tracing::{error, info, warn};

use crate::processor::BatchProcessor;
use backpressure_startup::{self as startup, LazyClient};

/// Why an invocation failed as a whole (Lambda then retries the whole batch).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HandlerError {
    /// The payload is not an SQS event (`errorType` `InvalidEvent`).
    #[error("{0}")]
    InvalidEvent(String),
    /// The batch cannot be reported record by record.
    #[error(transparent)]
    Batch(#[from] BatchError),
}

impl From<HandlerError> for Diagnostic {
    fn from(error: HandlerError) -> Self {
        let error_type = match &error {
            HandlerError::InvalidEvent(_) => "InvalidEvent",
            HandlerError::Batch(BatchError::MissingMessageId { .. }) => "MissingMessageId",
        };
        Diagnostic { error_type: error_type.to_owned(), error_message: error.to_string() }
    }
}

impl<B: Body, P: Processor<B>, Q: QuarantineStore> BatchProcessor<P, Q, B> {
    /// The handler for `lambda_runtime::run`.
    pub fn lambda_handler(
        &self,
    ) -> impl Service<LambdaEvent<IncomingEvent>, Response = SqsBatchResponse, Error = HandlerError> + '_
    {
        service_fn(move |event| self.handle(event))
    }

    /// One invocation: the batch, processed within the invocation's deadline.
    pub async fn handle(
        &self,
        event: LambdaEvent<IncomingEvent>,
    ) -> Result<SqsBatchResponse, HandlerError> {
        let LambdaEvent { payload, context } = event;
        let remaining = deadline::remaining(context.deadline, SystemTime::now());
        let event = match payload {
            IncomingEvent::Sqs(sqs) => sqs,
            IncomingEvent::NotSqs(what) => {
                error!(request_id = %context.request_id, error = %what, "invalid event");
                return Err(HandlerError::InvalidEvent(what));
            }
        };
        info!(
            request_id = %context.request_id,
            records = event.records.len(),
            remaining_ms = remaining.as_millis() as u64,
            "batch received"
        );
        Ok(self.process(&event.records, Instant::now() + remaining).await?)
    }
}

/// A configuration the engine or the processor refused.
#[derive(Debug, thiserror::Error)]
enum ServeError<E> {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Processor(E),
    #[error("{0}; {1}")]
    Both(ConfigError, #[source] E),
}

/// The Lambda start-up for an SQS batch processor: [`startup::init`] with a
/// [`ConsumerConfig`] (quarantine queue, concurrency, deadline margin,
/// backoff, metrics) plus whatever `processor` reads, one SQS client, then
/// `lambda_runtime` until it stops. `name` and `version` go into quarantine records.
pub async fn serve<B, P, E>(
    name: &str,
    version: &str,
    processor: impl FnOnce(&startup::Env) -> Result<P, E>,
) -> ExitCode
where
    B: Body,
    P: Processor<B>,
    E: Error + Send + Sync + 'static,
{
    if !startup::in_lambda(name) {
        return ExitCode::from(backpressure_startup::exit::USAGE);
    }
    let load = |vars: &startup::Env| -> Result<_, ServeError<E>> {
        for name in crate::config::idempotency_without_table(vars) {
            warn!(variable = name, "set, but IDEMPOTENCY_TABLE is not: idempotency is off");
        }
        // The engine's errors and the processor's together, so one start says them all.
        match (ConsumerConfig::from_vars(vars), processor(vars)) {
            (Ok(config), Ok(processor)) => Ok((config, processor)),
            (Err(config), Ok(_)) => Err(ServeError::Config(config)),
            (Ok(_), Err(processor)) => Err(ServeError::Processor(processor)),
            (Err(config), Err(processor)) => Err(ServeError::Both(config, processor)),
        }
    };
    let Some((config, processor)) = startup::init(load) else { return ExitCode::FAILURE };
    let sdk = startup::sdk_config(config.api_call_timeout).await;
    // Each client is built by the first call that needs it: an environment
    // that quarantines nothing never builds the S3 client, nor, with nothing
    // to retry either, the SQS one.
    let sqs = LazyClient::new(&sdk, aws_sdk_sqs::Client::new);
    let mut quarantine = config.sqs_quarantine(sqs.clone());
    if let Some(overflow) = config.s3_overflow(LazyClient::new(&sdk, aws_sdk_s3::Client::new)) {
        quarantine = quarantine.overflow(overflow);
    }
    // The quarantine queue's MaximumMessageSize is read before the first record
    // is written, not here: an environment that quarantines nothing never
    // reads it, and the init opens no connection of its own.
    let builder = BatchProcessor::builder(processor)
        .quarantine(quarantine)
        .visibility(crate::sqs::SqsVisibility::new(sqs))
        .config(&config)
        .handler_version(startup::handler_version(name, version));
    // A claim lasts until the invocation's deadline: nothing to renew.
    let built = match &config.idempotency {
        Some(idempotency) => builder
            .idempotency(idempotency.store(LazyClient::new(&sdk, aws_sdk_dynamodb::Client::new)))
            .build(),
        None => builder.build(),
    };
    match built {
        Ok(batch) => startup::exit(lambda_runtime::run(batch.lambda_handler()).await),
        Err(error) => {
            error!(error = %error_chain(&error), "invalid configuration");
            ExitCode::FAILURE
        }
    }
}
