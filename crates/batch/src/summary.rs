//! Counts per batch, for the summary log line and the Embedded Metric
//! Format documents CloudWatch turns into metrics. No message content.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use crate::emf::Document;

use crate::outcome::{Outcome, RetryCause};

/// A batch's outcomes, counted.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct BatchSummary {
    /// Records in the batch.
    pub records: usize,
    /// Processed.
    pub done: usize,
    /// Quarantined (write confirmed).
    pub quarantined: usize,
    /// Returned to the queue.
    pub retried: usize,
    /// Acknowledged without processing: their idempotency keys were completed.
    pub duplicates: usize,
    /// Acknowledged without processing: nothing in them to process (S3's test event).
    pub skipped: usize,
    /// Retried because another consumer held their idempotency claims.
    pub claims_contended: usize,
    /// Idempotency store calls that failed or ran out of time.
    pub idempotency_store_errors: usize,
    /// Permanent failures per error code, quarantined or not (a failed
    /// quarantine write is retried, and still counted here).
    pub by_error_code: BTreeMap<String, usize>,
    /// Retries per cause.
    pub by_retry_cause: BTreeMap<&'static str, usize>,
}

impl BatchSummary {
    /// Counts the outcomes.
    pub(crate) fn new<'a>(outcomes: impl IntoIterator<Item = &'a Outcome>) -> Self {
        let mut summary = Self::default();
        for outcome in outcomes {
            summary.records += 1;
            match outcome {
                Outcome::Done => summary.done += 1,
                Outcome::Duplicate { .. } => summary.duplicates += 1,
                Outcome::Skipped => summary.skipped += 1,
                Outcome::Quarantined { code } => {
                    summary.quarantined += 1;
                    *summary.by_error_code.entry(code.as_str().to_owned()).or_default() += 1;
                }
                Outcome::Retry { cause, .. } => {
                    summary.retried += 1;
                    if *cause == RetryCause::ClaimContended {
                        summary.claims_contended += 1;
                    }
                    *summary.by_retry_cause.entry(cause.as_str()).or_default() += 1;
                }
                Outcome::QuarantineFailed { code, .. } => {
                    summary.retried += 1;
                    *summary.by_retry_cause.entry("quarantine_failed").or_default() += 1;
                    *summary.by_error_code.entry(code.as_str().to_owned()).or_default() += 1;
                }
            }
        }
        summary
    }

    /// With the batch's failed idempotency store calls.
    pub(crate) fn with_store_errors(mut self, errors: usize) -> Self {
        self.idempotency_store_errors = errors;
        self
    }

    /// Messages returned to the queue because the invocation's deadline came
    /// before their turn or their answer (retry cause `deadline`).
    pub(crate) fn deadline_cuts(&self) -> usize {
        self.by_retry_cause.get("deadline").copied().unwrap_or_default()
    }

    /// `code=count,...`, for one log field.
    pub(crate) fn error_codes_field(&self) -> String {
        join(self.by_error_code.iter().map(|(k, v)| (k.as_str(), *v)))
    }

    /// `cause=count,...`, for one log field.
    pub(crate) fn retry_causes_field(&self) -> String {
        join(self.by_retry_cause.iter().map(|(k, v)| (*k, *v)))
    }

    /// One EMF document for the outcome counts, dimensioned by queue, and one
    /// per error code, dimensioned by queue and code.
    pub(crate) fn emf_documents(
        &self,
        namespace: &str,
        queue: &str,
        duration: Duration,
        now: SystemTime,
    ) -> Vec<Document> {
        let mut documents = vec![
            Document::new(namespace, now)
                .dimension("QueueName", queue)
                .metric("MessagesProcessed", "Count", self.done)
                .metric("MessagesQuarantined", "Count", self.quarantined)
                .metric("MessagesRetried", "Count", self.retried)
                .metric("DuplicatesSkipped", "Count", self.duplicates)
                .metric("TestEventsSkipped", "Count", self.skipped)
                .metric("DeadlineCuts", "Count", self.deadline_cuts())
                .metric("ClaimsContended", "Count", self.claims_contended)
                .metric("IdempotencyStoreErrors", "Count", self.idempotency_store_errors)
                .metric("BatchSize", "Count", self.records)
                .metric("BatchDuration", "Milliseconds", duration.as_secs_f64() * 1000.0),
        ];
        documents.extend(self.by_error_code.iter().map(|(code, count)| {
            Document::new(namespace, now)
                .dimension("QueueName", queue)
                .dimension("ErrorCode", code)
                .metric("PermanentFailures", "Count", *count)
        }));
        documents
    }
}

/// `group=count,...` for the `n` groups with the most records (ties by
/// name), for one log field: which tenants filled the batch.
pub(crate) fn top_groups<'a>(
    records: impl Iterator<Item = &'a crate::record::SqsRecord>,
    n: usize,
) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for group in records.filter_map(|r| r.message_group_id()) {
        *counts.entry(group).or_default() += 1;
    }
    let mut counted: Vec<(&str, usize)> = counts.into_iter().collect();
    counted.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    join(counted.into_iter().take(n))
}

fn join<'a>(pairs: impl Iterator<Item = (&'a str, usize)>) -> String {
    pairs.map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(",")
}

#[cfg(test)]
mod tests {
    use std::time::UNIX_EPOCH;

    use serde_json::Value;

    use super::*;
    use crate::outcome::ErrorCode;

    #[test]
    fn the_top_groups_are_the_largest_first() {
        use crate::record::SqsRecord;
        let grouped = |id: &str, g: &str| SqsRecord::new(id).with_attribute("MessageGroupId", g);
        let records = [
            grouped("1", "b"),
            grouped("2", "a"),
            grouped("3", "a"),
            grouped("4", "c"),
            SqsRecord::new("5"),
            grouped("6", "d"),
            grouped("7", "a"),
        ];
        assert_eq!(top_groups(records.iter(), 3), "a=3,b=1,c=1");
        assert_eq!(top_groups(std::iter::empty(), 3), "");
    }

    #[test]
    fn counts_every_outcome_once() {
        let outcomes = [
            Outcome::Done,
            Outcome::Done,
            Outcome::Quarantined { code: ErrorCode::InvalidJson },
            Outcome::Quarantined { code: ErrorCode::InvalidJson },
            Outcome::Quarantined { code: ErrorCode::DownstreamRejected },
            Outcome::retry(RetryCause::Deadline, "late"),
            Outcome::QuarantineFailed { code: ErrorCode::InvalidJson, detail: "refused".into() },
            Outcome::Duplicate { result: None },
            Outcome::retry(RetryCause::ClaimContended, "held"),
        ];
        let summary = BatchSummary::new(&outcomes).with_store_errors(4);
        assert_eq!(
            (summary.records, summary.done, summary.quarantined, summary.retried),
            (9, 2, 3, 3)
        );
        assert_eq!(
            (summary.duplicates, summary.claims_contended, summary.idempotency_store_errors),
            (1, 1, 4)
        );
        assert_eq!(
            summary.error_codes_field(),
            "downstream_rejected=1,invalid_json=3",
            "every permanent verdict counts, its quarantine write confirmed or not"
        );
        assert_eq!(
            summary.retry_causes_field(),
            "claim_contended=1,deadline=1,quarantine_failed=1"
        );

        let docs: Vec<Value> = summary
            .emf_documents("Ns", "orders", Duration::from_millis(1500), UNIX_EPOCH)
            .iter()
            .map(Document::to_json)
            .collect();
        assert_eq!(docs.len(), 3);
        assert_eq!(docs[0]["_aws"]["CloudWatchMetrics"][0]["Namespace"], "Ns");
        assert_eq!(docs[0]["MessagesQuarantined"], 3);
        assert_eq!(docs[0]["DeadlineCuts"], 1);
        assert_eq!(docs[0]["BatchDuration"], 1500.0);
        assert_eq!(
            (
                &docs[0]["DuplicatesSkipped"],
                &docs[0]["ClaimsContended"],
                &docs[0]["IdempotencyStoreErrors"]
            ),
            (&Value::from(1), &Value::from(1), &Value::from(4))
        );
        assert_eq!(docs[1]["ErrorCode"], "downstream_rejected");
        assert_eq!(docs[2]["PermanentFailures"], 3);
        for doc in &docs {
            let names = doc["_aws"]["CloudWatchMetrics"][0]["Metrics"].as_array().unwrap();
            for name in names {
                assert!(
                    doc.get(name["Name"].as_str().unwrap()).is_some(),
                    "every declared metric has a value"
                );
            }
        }
    }
}
