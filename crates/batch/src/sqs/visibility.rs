use crate::backoff::VisibilityChange;
use crate::sqs::calls::{self, EntryResult, MAX_ENTRIES};
use aws_sdk_sqs::Client;
use backpressure_core::error::{ApiError, error_chain};
use futures::future::join_all;
use tracing::warn;

/// `ChangeMessageVisibilityBatch` on the source queue.
#[derive(Debug, Clone)]
pub(crate) struct SqsVisibility {
    client: Client,
}

impl SqsVisibility {
    /// Changes visibility with this client.
    pub(crate) fn new(client: Client) -> Self {
        Self { client }
    }

    /// Applies the changes, ten a call; returns the receipt handles not
    /// changed: the entries SQS did not confirm, and every entry of a call
    /// that failed (logged with its cause).
    pub(crate) async fn apply(&self, queue_url: &str, changes: &[VisibilityChange]) -> Vec<String> {
        let results = self.calls(queue_url, changes).await;
        changes
            .chunks(MAX_ENTRIES)
            .zip(results)
            .flat_map(|(chunk, result)| match result {
                Ok(results) => calls::unconfirmed(chunk, &results)
                    .map(|change| change.receipt_handle.clone())
                    .collect::<Vec<_>>(),
                Err(error) => {
                    warn!(error = %error_chain(&error), count = chunk.len(), "ChangeMessageVisibilityBatch failed");
                    chunk.iter().map(|change| change.receipt_handle.clone()).collect()
                }
            })
            .collect()
    }

    /// One call per ten changes, all at once: each change's result.
    async fn calls(
        &self,
        queue_url: &str,
        changes: &[VisibilityChange],
    ) -> Vec<Result<Vec<EntryResult<()>>, ApiError>> {
        let client = &self.client;
        let calls = changes.chunks(MAX_ENTRIES).map(|chunk| async move {
            let entries: Vec<(&str, i32)> = chunk
                .iter()
                .map(|c| {
                    let seconds = i32::try_from(c.timeout.as_secs()).unwrap_or(i32::MAX);
                    (c.receipt_handle.as_str(), seconds)
                })
                .collect();
            calls::change_visibility(client, queue_url, &entries)
                .await
                .map_err(|e| ApiError::new("ChangeMessageVisibilityBatch", e))
        });
        join_all(calls).await
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a failed unwrap is a failed test
mod tests {
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use aws_sdk_sqs::operation::change_message_visibility_batch::{
        ChangeMessageVisibilityBatchError, ChangeMessageVisibilityBatchInput,
        ChangeMessageVisibilityBatchOutput,
    };
    use aws_sdk_sqs::types::{BatchResultErrorEntry, ChangeMessageVisibilityBatchResultEntry};
    use aws_smithy_mocks::{RuleMode, mock, mock_client};

    use super::SqsVisibility;
    use crate::backoff::VisibilityChange;

    /// A `ChangeMessageVisibilityBatch` answer refusing the entry `id`, the rest
    /// of `input`'s entries changed.
    fn refusing_entry(
        input: &ChangeMessageVisibilityBatchInput,
        id: &str,
    ) -> ChangeMessageVisibilityBatchOutput {
        let changed = input
            .entries()
            .iter()
            .filter(|e| e.id() != id)
            .map(|e| ChangeMessageVisibilityBatchResultEntry::builder().id(e.id()).build().unwrap())
            .collect();
        ChangeMessageVisibilityBatchOutput::builder()
            .failed(
                BatchResultErrorEntry::builder()
                    .id(id)
                    .code("ReceiptHandleIsInvalid")
                    .sender_fault(true)
                    .build()
                    .unwrap(),
            )
            .set_successful(Some(changed))
            .build()
            .unwrap()
    }

    #[tokio::test]
    async fn visibility_changes_go_ten_a_call_and_name_refusals() {
        /// (entries in the call, their visibility timeouts)
        type Seen = Arc<Mutex<Vec<(usize, Vec<i32>)>>>;
        let seen: Seen = Arc::default();
        let log = seen.clone();
        let rule = mock!(aws_sdk_sqs::Client::change_message_visibility_batch).then_compute_output(
            move |input| {
                let timeouts = input
                    .entries()
                    .iter()
                    .map(|e| e.visibility_timeout().unwrap_or_default())
                    .collect();
                log.lock().unwrap().push((input.entries().len(), timeouts));
                refusing_entry(input, "0")
            },
        );
        let client = mock_client!(aws_sdk_sqs, RuleMode::MatchAny, [&rule]);
        let changes: Vec<VisibilityChange> = (0..12)
            .map(|i| VisibilityChange {
                receipt_handle: format!("rh{i}"),
                timeout: Duration::from_secs(30),
            })
            .collect();
        let refused = SqsVisibility::new(client)
            .apply("https://sqs.us-east-1.amazonaws.com/1/q", &changes)
            .await;
        assert_eq!(refused.len(), 2, "one refusal reported per call");
        let mut sizes: Vec<usize> = seen.lock().unwrap().iter().map(|(n, _)| *n).collect();
        sizes.sort_unstable();
        assert_eq!(sizes, [2, 10]);
        assert!(seen.lock().unwrap().iter().all(|(_, t)| t.iter().all(|&s| s == 30)));
    }

    #[tokio::test]
    async fn apply_names_the_handles_sqs_did_not_change() {
        let refusing = mock!(aws_sdk_sqs::Client::change_message_visibility_batch)
            .then_compute_output(|input| refusing_entry(input, "1"));
        let changes: Vec<VisibilityChange> = (0..12)
            .map(|i| VisibilityChange { receipt_handle: format!("rh{i}"), timeout: Duration::ZERO })
            .collect();
        let client = mock_client!(aws_sdk_sqs, RuleMode::MatchAny, [&refusing]);
        let mut refused = SqsVisibility::new(client)
            .apply("https://sqs.us-east-1.amazonaws.com/1/q", &changes)
            .await;
        refused.sort();
        assert_eq!(refused, ["rh1", "rh11"], "the second entry of each call");

        let failing = mock!(aws_sdk_sqs::Client::change_message_visibility_batch)
            .then_error(|| ChangeMessageVisibilityBatchError::unhandled("denied"));
        let client = mock_client!(aws_sdk_sqs, RuleMode::MatchAny, [&failing]);
        let refused = SqsVisibility::new(client)
            .apply("https://sqs.us-east-1.amazonaws.com/1/q", &changes)
            .await;
        assert_eq!(refused.len(), 12, "a failed call refuses all its entries");
    }
}
