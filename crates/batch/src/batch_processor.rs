//! [`BatchProcessor`]: the engine, visibility backoff for retried messages,
//! the batch summary (log line and Embedded Metric Format), and the partial
//! batch response — for one batch, from Lambda or from a worker's poll.

use std::time::SystemTime;

use crate::body::Body;
use crate::engine::Engine;
use crate::outcome::Outcome;
use crate::processor::Processor;
use crate::quarantine::QuarantineStore;
use crate::record::SqsRecord;
use crate::report::{BatchError, BatchReport, RecordOutcome};
use crate::summary::BatchSummary;
use tokio::time::Instant;
use tracing::info;

#[cfg(feature = "sqs")]
use crate::backoff::policy::VisibilityPolicy;
#[cfg(feature = "sqs")]
use crate::sqs::SqsVisibility;
#[cfg(feature = "sqs")]
use std::collections::HashSet;
#[cfg(feature = "sqs")]
use tokio::time::timeout_at;
#[cfg(feature = "sqs")]
use tracing::warn;

/// The visibility calls are best effort and must not eat the response's time.
#[cfg(feature = "sqs")]
const VISIBILITY_RESERVE: std::time::Duration = std::time::Duration::from_millis(50);

/// Processes SQS batches with a processor of the user's: every message ends
/// processed, durably quarantined, or retried, and only the retried ones are
/// reported. Build one per process with [`BatchProcessor::builder`] and reuse it.
#[derive(Debug)]
pub struct BatchProcessor<P, Q, B> {
    pub(crate) engine: Engine<P, Q, B>,
    #[cfg(feature = "sqs")]
    pub(crate) visibility: Option<(VisibilityPolicy, SqsVisibility)>,
    pub(crate) namespace: Option<String>,
}

impl<B: Body, P: Processor<B>, Q: QuarantineStore> BatchProcessor<P, Q, B> {
    /// Renews the idempotency claims of the work in flight, one lease more
    /// each ([`crate::idempotency::ClaimLease::Renewed`]; a worker calls it
    /// from its heartbeat). Returns how many renewals failed: those messages'
    /// processors are cut before their leases lapse, and retried.
    pub(crate) async fn renew_claims(&self) -> usize {
        match self.engine.guard() {
            Some(guard) => guard.renew().await,
            None => 0,
        }
    }

    /// Processes one batch that must be settled by `deadline`: every
    /// record's outcome ([`BatchReport::response`] is the partial batch
    /// response).
    pub async fn process<'r>(
        &self,
        records: &'r [SqsRecord],
        deadline: Instant,
    ) -> Result<BatchReport<'r>, BatchError> {
        self.process_acknowledging(records, deadline, &|_| {}).await
    }

    /// As [`BatchProcessor::process`], calling `on_acknowledged` with a
    /// record's index as soon as its outcome acknowledges it (done, a
    /// duplicate, or quarantined and confirmed), before the rest of the batch
    /// is over: a long-running consumer deletes the message then.
    pub(crate) async fn process_acknowledging<'r>(
        &self,
        records: &'r [SqsRecord],
        deadline: Instant,
        on_acknowledged: &(dyn Fn(usize) + Sync),
    ) -> Result<BatchReport<'r>, BatchError> {
        let started = Instant::now();
        #[cfg_attr(not(feature = "sqs"), allow(unused_mut))]
        let mut report = self.engine.run(records, deadline, on_acknowledged).await?;
        #[cfg(feature = "sqs")]
        self.change_retried_visibility(&mut report, deadline).await;
        let summary = BatchSummary::new(report.outcomes.iter().map(|o| &o.outcome))
            .with_store_errors(report.idempotency_store_errors);
        let duration = started.elapsed();
        let queue = report.source.as_ref().map_or("unknown", |s| s.name.as_str());
        info!(
            queue,
            records = summary.records,
            done = summary.done,
            quarantined = summary.quarantined,
            retried = summary.retried,
            duplicates = summary.duplicates,
            skipped = summary.skipped,
            claims_contended = summary.claims_contended,
            idempotency_store_errors = summary.idempotency_store_errors,
            error_codes = %summary.error_codes_field(),
            retry_causes = %summary.retry_causes_field(),
            top_groups = %crate::summary::top_groups(records.iter(), 3),
            failed = %failed_records_field(&report.outcomes),
            duration_ms = duration.as_millis() as u64,
            "batch summary"
        );
        if let Some(namespace) = &self.namespace {
            crate::emf::emit(&summary.emf_documents(namespace, queue, duration, SystemTime::now()));
        }
        Ok(report)
    }
}

/// `messageId:outcome[:code][:trace=…]` for every record not processed, so a
/// failed message can be followed from its producer (its X-Ray trace id) to
/// the downstream call that failed. No message content.
fn failed_records_field(outcomes: &[RecordOutcome<'_>]) -> String {
    let mut field = String::new();
    for processed in outcomes {
        let what = match &processed.outcome {
            Outcome::Done | Outcome::Skipped | Outcome::Duplicate { .. } => continue,
            Outcome::Quarantined { code } => format!("quarantined:{code}"),
            Outcome::Retry { cause, .. } => format!("retry:{}", cause.as_str()),
            Outcome::QuarantineFailed { code, .. } => format!("quarantine_failed:{code}"),
        };
        if !field.is_empty() {
            field.push(',');
        }
        field.push_str(processed.message_id);
        field.push(':');
        field.push_str(&what);
        if let Some(trace) = processed.record.trace_context() {
            field.push_str(":trace=");
            field.push_str(trace.trace_id());
        }
    }
    field
}

#[cfg(feature = "sqs")]
#[cfg_attr(docsrs, doc(cfg(feature = "sqs")))]
impl<B: Body, P: Processor<B>, Q: QuarantineStore> BatchProcessor<P, Q, B> {
    /// Makes the visibility changes the policy decides for the retried
    /// messages ([`VisibilityPolicy::changes`]) and lists them in the report.
    pub(crate) async fn change_retried_visibility(
        &self,
        report: &mut BatchReport<'_>,
        deadline: Instant,
    ) {
        let Some((policy, visibility)) = &self.visibility else { return };
        let Some(source) = report.source.clone() else { return };
        let changes = policy.changes(report, SystemTime::now(), fastrand::f64);
        if changes.is_empty() {
            return;
        }
        let until = deadline.checked_sub(VISIBILITY_RESERVE).unwrap_or(deadline);
        // A call that fails is logged by `refused`, its entries counted as refused.
        let Ok(refused) = timeout_at(until, visibility.apply(&source.url(), &changes)).await else {
            warn!(
                "the visibility changes did not finish before the deadline; retried messages return on the queue's own timeout"
            );
            return;
        };
        if !refused.is_empty() {
            warn!(
                count = refused.len(),
                "some visibility changes were not made; those messages return on the queue's own timeout"
            );
        }
        // The report lists only what SQS confirmed.
        let refused: HashSet<&str> = refused.iter().map(String::as_str).collect();
        report.visibility_changes =
            changes.into_iter().filter(|c| !refused.contains(c.receipt_handle.as_str())).collect();
    }
}

#[cfg(test)]
mod tests {

    use crate::builder::BuildError;
    use crate::outcome::{ErrorCode, RetryCause, Verdict};
    use crate::processor::Message;
    use crate::quarantine::QuarantineError;
    use crate::quarantine::QuarantineRecord;
    use crate::test_request::TestRequest;
    use serde_json::json;

    use super::*;

    struct Accept;

    impl Processor<TestRequest> for Accept {
        async fn process(&self, _: &Message<'_, TestRequest>) -> Verdict {
            Verdict::Done
        }
    }

    struct Refuse;

    impl QuarantineStore for Refuse {
        async fn store(&self, records: &[QuarantineRecord]) -> Vec<Result<(), QuarantineError>> {
            records.iter().map(|_| Err(QuarantineError::Unreported)).collect()
        }
    }

    #[test]
    fn settings_that_cannot_work_are_refused_at_build() {
        let zero = BatchProcessor::builder(Accept).quarantine(Refuse).concurrency(0);
        assert_eq!(zero.build().map(|_| ()), Err(BuildError::ZeroConcurrency));
    }

    #[cfg(feature = "sqs")]
    #[test]
    fn retries_come_with_their_client_so_every_setting_builds() {
        use crate::backoff::Backoff;
        use std::time::Duration;

        let sqs = || {
            let config = aws_sdk_sqs::Config::builder()
                .behavior_version(aws_sdk_sqs::config::BehaviorVersion::latest())
                .region(aws_sdk_sqs::config::Region::new("us-east-1"))
                .build();
            aws_sdk_sqs::Client::from_conf(config)
        };
        let backoff = Backoff { base: Duration::from_secs(1), max: Duration::from_secs(60) };
        let retried = BatchProcessor::builder(Accept).quarantine(Refuse).retries(sqs(), backoff);
        assert!(retried.build().is_ok_and(|batch| batch.visibility.is_some()));
        let off = Backoff { base: Duration::ZERO, max: Duration::from_secs(60) };
        let disabled = BatchProcessor::builder(Accept).quarantine(Refuse).retries(sqs(), off);
        assert!(
            disabled.build().is_ok_and(|batch| batch.visibility.is_none()),
            "nothing to change"
        );
        let fifo = BatchProcessor::builder(Accept).quarantine(Refuse).fifo_retries_at_once(sqs());
        assert!(fifo.build().is_ok_and(|batch| batch.visibility.is_some()));
    }

    #[test]
    fn failed_records_name_their_outcome_and_trace() {
        let mut traced = SqsRecord { message_id: Some("a".into()), ..Default::default() };
        traced.attributes.insert(
            "AWSTraceHeader".into(),
            json!("Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"),
        );
        let plain = SqsRecord { message_id: Some("b".into()), ..Default::default() };
        let outcomes = [
            RecordOutcome { record: &plain, message_id: "ok", outcome: Outcome::Done },
            RecordOutcome {
                record: &traced,
                message_id: "a",
                outcome: Outcome::retry(RetryCause::Deadline, "late"),
            },
            RecordOutcome {
                record: &plain,
                message_id: "b",
                outcome: Outcome::Quarantined { code: ErrorCode::InvalidJson },
            },
            RecordOutcome {
                record: &plain,
                message_id: "c",
                outcome: Outcome::QuarantineFailed {
                    code: ErrorCode::SchemaViolation,
                    detail: "refused".into(),
                },
            },
        ];
        assert_eq!(
            failed_records_field(&outcomes),
            "a:retry:deadline:trace=5759e988bd862e3fe1be46a994272793,b:quarantined:invalid_json,\
             c:quarantine_failed:schema_violation"
        );
    }
}
