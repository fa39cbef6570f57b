//! The Lambda side: the handler `lambda_runtime` runs and its error types.
//! The start-up from the template's variables (`serve`) is the
//! `backpressure-app` crate's.

use std::time::SystemTime;

use crate::body::Body;
use crate::event::IncomingEvent;
use crate::processor::Processor;
use crate::quarantine::QuarantineStore;
use crate::report::BatchError;
use crate::trace::{TraceContext, within_invocation};
use aws_lambda_events::sqs::SqsBatchResponse;
use backpressure_core::deadline;
use lambda_runtime::{Diagnostic, LambdaEvent, Service, service_fn};
use tokio::time::Instant;
use tracing::{error, info};

use crate::batch_processor::BatchProcessor;

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
    /// The handler for `lambda_runtime::run`, one invocation at a time. For
    /// Lambda Managed Instances, share the processor in an [`Arc`](std::sync::Arc) and give
    /// `lambda_runtime::run_concurrent` a handler that clones it, as `backpressure_app::serve` does.
    pub fn lambda_handler(
        &self,
    ) -> impl Service<LambdaEvent<IncomingEvent>, Response = SqsBatchResponse, Error = HandlerError> + '_
    {
        service_fn(move |event| self.handle(event))
    }

    /// One invocation: the batch, processed within the invocation's deadline,
    /// traced by the invocation's own X-Ray trace (never the process's
    /// `_X_AMZN_TRACE_ID`, which concurrent invocations would share).
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
        let trace = context.xray_trace_id.as_deref().and_then(TraceContext::from_aws_trace_header);
        info!(
            request_id = %context.request_id,
            trace_id = trace.as_ref().map_or("", TraceContext::trace_id),
            records = event.records.len(),
            remaining_ms = remaining.as_millis() as u64,
            "batch received"
        );
        let processing = self.process(&event.records, Instant::now() + remaining);
        Ok(within_invocation(trace, processing).await?.response())
    }
}
