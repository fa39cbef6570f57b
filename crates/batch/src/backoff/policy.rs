//! The visibility of a settled batch's retried messages, decided in one
//! place for every consumer: on standard queues after the backoff (or the
//! downstream's `Retry-After`); on FIFO queues left alone (the group waits
//! for the queue's visibility timeout, as Lambda's event source mapping
//! does), or back at once for a consumer that releases its groups itself
//! (the worker).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::{Backoff, VisibilityChange, lease_left};
use crate::outcome::{Outcome, RetryCause};
use crate::report::BatchReport;

/// How a processor treats its retried messages' visibility.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct VisibilityPolicy {
    /// Standard queues: the backoff, when enabled.
    pub backoff: Option<Backoff>,
    /// FIFO queues: a retried message (and the rest of its group) visible again at once.
    pub fifo_at_once: bool,
}

impl VisibilityPolicy {
    /// The changes for `report`'s retried messages; `jitter` gives the backoff's random fraction.
    pub(crate) fn changes(
        &self,
        report: &BatchReport<'_>,
        now: SystemTime,
        mut jitter: impl FnMut() -> f64,
    ) -> Vec<VisibilityChange> {
        let Some(source) = report.source.as_ref() else { return Vec::new() };
        let retried = report.outcomes.iter().filter_map(|processed| match &processed.outcome {
            Outcome::Retry { retry_after, cause, .. } => {
                Some((processed.record, *retry_after, *cause == RetryCause::ClaimContended))
            }
            Outcome::QuarantineFailed { .. } => Some((processed.record, None, false)),
            _ => None,
        });
        let backoff = self.backoff.filter(|b| b.is_enabled());
        retried
            .filter_map(|(record, retry_after, contended)| {
                let receipt_handle = record.receipt_handle.clone()?;
                // Another consumer's idempotency claim: not back before its
                // lease ends, on every kind of queue this consumer releases.
                let timeout = match (source.is_fifo(), contended) {
                    (true, false) if self.fifo_at_once => Duration::ZERO,
                    (true, true) if self.fifo_at_once => retry_after?,
                    (true, _) => return None,
                    (false, _) => match backoff {
                        Some(backoff) => {
                            let since_first_receive =
                                record.first_receive_timestamp_ms().map(|ms| {
                                    now.duration_since(UNIX_EPOCH + Duration::from_millis(ms))
                                        .unwrap_or_default()
                                });
                            let delay = backoff.visibility_timeout(
                                record.receive_count().unwrap_or(1),
                                retry_after,
                                jitter(),
                                since_first_receive,
                            )?;
                            // The backoff's `max` caps a backoff, not another holder's lease: a
                            // contended message back before it would only be contended again,
                            // one receive nearer the dead-letter queue each time.
                            match retry_after.filter(|_| contended) {
                                Some(lease) => {
                                    delay.max(lease.min(lease_left(since_first_receive)))
                                }
                                None => delay,
                            }
                        }
                        None if contended => retry_after?,
                        None => return None,
                    },
                };
                Some(VisibilityChange { receipt_handle, timeout })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::ErrorCode;
    use crate::record::{SourceQueue, SqsRecord};
    use crate::report::RecordOutcome;

    fn record(handle: &str) -> SqsRecord {
        SqsRecord { receipt_handle: Some(handle.to_owned()), ..SqsRecord::default() }
    }

    fn report<'r>(records: &'r [SqsRecord], queue: &str) -> BatchReport<'r> {
        let outcomes = [
            Outcome::Done,
            Outcome::retry(RetryCause::Processor, "later"),
            Outcome::QuarantineFailed { code: ErrorCode::InvalidJson, detail: "refused".into() },
            Outcome::Quarantined { code: ErrorCode::InvalidJson },
        ];
        BatchReport {
            outcomes: records
                .iter()
                .zip(outcomes)
                .map(|(record, outcome)| RecordOutcome { record, message_id: "m", outcome })
                .collect(),
            batch_item_failures: Vec::new(),
            source: SourceQueue::from_arn(&format!("arn:aws:sqs:us-east-1:123456789012:{queue}")),
            visibility_changes: Vec::new(),
            idempotency_store_errors: 0,
        }
    }

    fn handles(changes: &[VisibilityChange]) -> Vec<(&str, u64)> {
        changes.iter().map(|c| (c.receipt_handle.as_str(), c.timeout.as_secs())).collect()
    }

    #[test]
    fn each_queue_kind_gets_its_own_decision_for_the_retried_messages_only() {
        let records = [record("done"), record("retry"), record("unwritten"), record("poison")];
        let backoff = Backoff { base: Duration::from_secs(10), max: Duration::from_secs(900) };
        let policy = VisibilityPolicy { backoff: Some(backoff), fifo_at_once: false };
        let now = SystemTime::now();
        let standard = policy.changes(&report(&records, "work"), now, || 0.5);
        assert_eq!(handles(&standard), [("retry", 8), ("unwritten", 8)]);
        assert!(policy.changes(&report(&records, "work.fifo"), now, || 0.5).is_empty());
        let worker = VisibilityPolicy { backoff: Some(backoff), fifo_at_once: true };
        let fifo = worker.changes(&report(&records, "work.fifo"), now, || 0.5);
        assert_eq!(handles(&fifo), [("retry", 0), ("unwritten", 0)]);
        let none = VisibilityPolicy::default().changes(&report(&records, "work"), now, || 0.5);
        assert!(none.is_empty(), "no backoff: the queue's own timeout");
    }

    #[test]
    fn a_contended_message_stays_away_for_the_holders_lease_whatever_the_backoffs_cap() {
        let records = [record("contended")];
        let contended = Outcome::Retry {
            cause: RetryCause::ClaimContended,
            detail: "held".into(),
            retry_after: Some(Duration::from_secs(40)),
        };
        let report = BatchReport {
            outcomes: vec![RecordOutcome {
                record: &records[0],
                message_id: "m",
                outcome: contended,
            }],
            batch_item_failures: Vec::new(),
            source: SourceQueue::from_arn("arn:aws:sqs:us-east-1:123456789012:work"),
            visibility_changes: Vec::new(),
            idempotency_store_errors: 0,
        };
        let short = Backoff { base: Duration::from_secs(1), max: Duration::from_secs(2) };
        let policy = VisibilityPolicy { backoff: Some(short), fifo_at_once: false };
        let changes = policy.changes(&report, SystemTime::now(), || 0.5);
        assert_eq!(handles(&changes), [("contended", 40)], "a 2 s backoff max does not cut it");
    }
}
