//! The Lambda side: the handler `lambda_runtime` runs, its error types, and
//! [`serve`], the whole start-up of an SQS-triggered function.

use std::error::Error;
use std::process::ExitCode;
use std::time::SystemTime;

use crate::body::Body;
use crate::config::ConsumerConfig;
use crate::event::IncomingEvent;
use crate::processor::Processor;
use crate::quarantine::QuarantineStore;
use crate::report::BatchError;
use aws_lambda_events::sqs::SqsBatchResponse;
use backpressure_core::config::ConfigError;
use backpressure_core::deadline;
use backpressure_core::error::error_chain;
use lambda_runtime::{Diagnostic, LambdaEvent, Service, service_fn};
use tokio::time::Instant;
use tracing::{error, info};

use crate::batch_processor::BatchProcessor;
use crate::idempotency::ClaimLease;
use crate::start::{ConsumerClients, Reach};
use backpressure_startup as startup;

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
        Ok(self.process(&event.records, Instant::now() + remaining).await?.response())
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
/// backoff, metrics) plus whatever `processor` reads, the consumer built by
/// [`ConsumerConfig::consumer`] with clients built on first use, then
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
        crate::start::warn_of_idempotency_without_table(vars);
        // The engine's errors and the processor's together, so one start says them all.
        match (ConsumerConfig::from_vars(vars), processor(vars)) {
            (Ok(config), Ok(processor)) => Ok((config, processor)),
            (Err(config), Ok(_)) => Err(ServeError::Config(config)),
            (Ok(_), Err(processor)) => Err(ServeError::Processor(processor)),
            (Err(config), Err(processor)) => Err(ServeError::Both(config, processor)),
        }
    };
    let Some((config, processor)) = startup::init(load) else { return ExitCode::FAILURE };
    let clients = ConsumerClients::new(&startup::sdk_config(config.api_call_timeout).await);
    let version = startup::handler_version(name, version);
    // A claim lasts until the invocation's deadline: nothing to renew.
    let lease = ClaimLease::UntilDeadline;
    match config.consumer(processor, &clients, Reach::OnFirstUse, version, lease).await {
        Ok(builder) => match builder.build() {
            Ok(batch) => startup::exit(lambda_runtime::run(batch.lambda_handler()).await),
            Err(error) => {
                error!(error = %error_chain(&error), "invalid configuration");
                ExitCode::FAILURE
            }
        },
        Err(error) => {
            error!(error = %error_chain(&error), "cannot start");
            ExitCode::FAILURE
        }
    }
}
