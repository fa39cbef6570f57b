//! The Lambda side: the handler `lambda_runtime` runs, and the `errorType` of
//! an invocation that fails as a whole.
//! The start-up from the template's variables (`serve`) is the
//! `backpressure-app` crate's.

use std::time::SystemTime;

use crate::body::Body;
use crate::processor::Processor;
use crate::quarantine::QuarantineStore;
use crate::record::IncomingEvent;
use crate::report::BatchError;
use crate::trace::{TraceContext, within_invocation};
use aws_lambda_events::sqs::SqsBatchResponse;
use backpressure_core::deadline;
use lambda_runtime::{Diagnostic, LambdaEvent, Service, service_fn};
use serde_json::Value;
use tokio::time::Instant;
use tracing::{error, info};

use crate::batch_processor::BatchProcessor;

/// The `errorType` Lambda records for an invocation that failed as a whole.
impl From<BatchError> for Diagnostic {
    fn from(error: BatchError) -> Self {
        let error_type = match &error {
            BatchError::InvalidEvent(_) => "InvalidEvent",
            BatchError::MissingMessageId { .. } => "MissingMessageId",
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
    ) -> impl Service<LambdaEvent<Value>, Response = SqsBatchResponse, Error = BatchError> + '_
    {
        service_fn(move |event| self.handle(event))
    }

    /// One invocation: the batch, processed within the invocation's deadline,
    /// traced by the invocation's own X-Ray trace (never the process's
    /// `_X_AMZN_TRACE_ID`, which concurrent invocations would share).
    pub async fn handle(&self, event: LambdaEvent<Value>) -> Result<SqsBatchResponse, BatchError> {
        let LambdaEvent { payload, context } = event;
        let remaining = deadline::remaining(context.deadline, SystemTime::now());
        let event = match IncomingEvent::from(payload) {
            IncomingEvent::Sqs(sqs) => sqs,
            IncomingEvent::NotSqs(what) => {
                error!(request_id = %context.request_id, error = %what, "invalid event");
                return Err(BatchError::InvalidEvent(what));
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
