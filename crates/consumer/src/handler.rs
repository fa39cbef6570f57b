//! One SQS batch: run the engine, push retried messages back with backoff,
//! report the counts, return the partial batch response.

use std::io::Write;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use backpressure_core::consumer::backoff::{Backoff, VisibilityChange, VisibilityPort};
use backpressure_core::consumer::engine::{
    BatchError, BatchReport, Engine, Processor, QuarantineStore,
};
use backpressure_core::consumer::event::SqsEvent;
use backpressure_core::consumer::outcome::Outcome;
use backpressure_core::consumer::response::BatchResponse;
use backpressure_core::consumer::summary::BatchSummary;
use backpressure_core::deadline;
use backpressure_core::error::error_chain;
use lambda_runtime::{Diagnostic, LambdaEvent};
use tokio::time::{Instant, timeout_at};
use tracing::{info, warn};

/// The visibility calls are best effort and must not eat the response's time.
const VISIBILITY_RESERVE: Duration = Duration::from_millis(50);

#[derive(Debug)]
pub struct Consumer<P, Q, V> {
    engine: Engine<P, Q>,
    visibility: V,
    backoff: Backoff,
    namespace: String,
}

impl<P: Processor, Q: QuarantineStore, V: VisibilityPort> Consumer<P, Q, V> {
    pub fn new(engine: Engine<P, Q>, visibility: V, backoff: Backoff, namespace: String) -> Self {
        Self { engine, visibility, backoff, namespace }
    }

    pub fn engine(&self) -> &Engine<P, Q> {
        &self.engine
    }

    /// Processes one batch; the deadline is the invocation's.
    pub async fn consume(
        &self,
        event: &SqsEvent,
        deadline: Instant,
    ) -> Result<BatchResponse, BatchError> {
        let started = Instant::now();
        let report = self.engine.run(event, deadline).await?;
        self.back_off(event, &report, deadline).await;
        let summary = BatchSummary::new(&report.outcomes);
        let duration = started.elapsed();
        let queue = report.source.as_ref().map_or("unknown", |s| s.name.as_str());
        info!(
            queue,
            records = summary.records,
            done = summary.done,
            quarantined = summary.quarantined,
            retried = summary.retried,
            error_codes = %summary.error_codes_field(),
            retry_causes = %summary.retry_causes_field(),
            duration_ms = duration.as_millis() as u64,
            "batch summary"
        );
        emit_metrics(&summary.emf_documents(&self.namespace, queue, duration, SystemTime::now()));
        Ok(BatchResponse::new(&report.batch_item_failures))
    }

    /// Standard queues: retried messages come back after an exponential,
    /// jittered delay instead of the queue's full visibility timeout. FIFO
    /// queues keep their order, so their visibility is left alone.
    async fn back_off(&self, event: &SqsEvent, report: &BatchReport, deadline: Instant) {
        let Some(source) = report.source.as_ref().filter(|s| !s.is_fifo()) else { return };
        if !self.backoff.is_enabled() {
            return;
        }
        let now = SystemTime::now();
        let changes: Vec<VisibilityChange> = event
            .records
            .iter()
            .zip(&report.outcomes)
            .filter_map(|(record, outcome)| {
                let retry_after = match outcome {
                    Outcome::Retry { retry_after, .. } => *retry_after,
                    Outcome::QuarantineFailed { .. } => None,
                    Outcome::Done | Outcome::Quarantined { .. } => return None,
                };
                let since_first_receive = record.first_receive_timestamp_ms().map(|ms| {
                    now.duration_since(UNIX_EPOCH + Duration::from_millis(ms)).unwrap_or_default()
                });
                let timeout = self.backoff.visibility_timeout(
                    record.receive_count().unwrap_or(1),
                    retry_after,
                    fastrand::f64(),
                    since_first_receive,
                )?;
                Some(VisibilityChange { receipt_handle: record.receipt_handle.clone()?, timeout })
            })
            .collect();
        if changes.is_empty() {
            return;
        }
        let until = deadline.checked_sub(VISIBILITY_RESERVE).unwrap_or(deadline);
        match timeout_at(until, self.visibility.change_visibility(&source.url(), &changes)).await {
            Ok(Ok(0)) => {}
            Ok(Ok(failed)) => warn!(
                failed,
                "some visibility changes were refused; those messages return on the queue's own timeout"
            ),
            Ok(Err(error)) => {
                warn!(error = %error_chain(&error), "visibility backoff failed; retried messages return on the queue's own timeout")
            }
            Err(_) => warn!("visibility backoff did not finish before the deadline"),
        }
    }
}

/// CloudWatch Embedded Metric Format: one JSON document per line on stdout.
fn emit_metrics(documents: &[serde_json::Value]) {
    let mut stdout = std::io::stdout().lock();
    for document in documents {
        let _ = writeln!(stdout, "{document}");
    }
}

pub async fn handle<P: Processor, Q: QuarantineStore, V: VisibilityPort>(
    consumer: &Consumer<P, Q, V>,
    event: LambdaEvent<SqsEvent>,
) -> Result<BatchResponse, ConsumerError> {
    let remaining = deadline::remaining(event.context.deadline, SystemTime::now());
    info!(
        request_id = %event.context.request_id,
        records = event.payload.records.len(),
        remaining_ms = remaining.as_millis() as u64,
        "batch received"
    );
    Ok(consumer.consume(&event.payload, Instant::now() + remaining).await?)
}

#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct ConsumerError(#[from] BatchError);

impl From<ConsumerError> for Diagnostic {
    fn from(error: ConsumerError) -> Self {
        let error_type = match error.0 {
            BatchError::MissingMessageId { .. } => "MissingMessageId",
            BatchError::Invariant(_) => "BatchInvariantViolated",
        };
        Diagnostic { error_type: error_type.to_owned(), error_message: error.to_string() }
    }
}
