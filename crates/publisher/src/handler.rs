use std::time::SystemTime;

use crate::services::MetricSink;
use backpressure_core::deadline;
use backpressure_core::error::error_chain;
use lambda_runtime::{Diagnostic, LambdaEvent};
use serde_json::Value;
use tokio::time::Instant;
use tracing::{error, info};

use crate::publisher::{InvocationError, Publisher, Summary};

/// The scheduled event carries nothing the publisher needs, so any JSON is
/// accepted: a manual test invoke with `{}` works the same as the schedule.
pub async fn handle<M: MetricSink>(
    publisher: &Publisher<M>,
    event: LambdaEvent<Value>,
) -> Result<Summary, InvocationError> {
    let remaining = deadline::remaining(event.context.deadline, SystemTime::now());
    info!(
        request_id = %event.context.request_id,
        scheduled_time = event.payload.get("time").and_then(serde_json::Value::as_str).unwrap_or("none"),
        deadline_ms = event.context.deadline,
        remaining_ms = remaining.as_millis() as u64,
        targets = publisher.config().targets.len(),
        "publishing backlog per task"
    );
    let result = publisher.run(Instant::now() + remaining).await;
    if let Err(error) = &result {
        error!(error = %error_chain(error), error_type = error.error_type(), "invocation failed");
    }
    result
}

impl From<InvocationError> for Diagnostic {
    fn from(error: InvocationError) -> Self {
        Diagnostic { error_type: error.error_type().to_owned(), error_message: error_chain(&error) }
    }
}
