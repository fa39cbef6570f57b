use crate::backoff::VisibilityChange;
use aws_sdk_sqs::Client;
use aws_sdk_sqs::types::ChangeMessageVisibilityBatchRequestEntry;
use backpressure_core::error::{ApiError, error_chain};
use backpressure_startup::LazyClient;
use futures::future::join_all;
use tracing::warn;

/// `ChangeMessageVisibilityBatch` takes at most 10 entries.
const MAX_ENTRIES: usize = 10;

/// `ChangeMessageVisibilityBatch` on the source queue.
#[derive(Debug, Clone)]
pub struct SqsVisibility {
    client: LazyClient<Client>,
}

impl SqsVisibility {
    /// Changes visibility with this client.
    pub fn new(client: impl Into<LazyClient<Client>>) -> Self {
        Self { client: client.into() }
    }

    /// Applies the changes, ten a call; returns how many SQS reported as failed.
    pub async fn change_visibility(
        &self,
        queue_url: &str,
        changes: &[VisibilityChange],
    ) -> Result<usize, ApiError> {
        let mut failed = 0;
        for result in self.calls(queue_url, changes).await {
            failed += result?.len();
        }
        Ok(failed)
    }

    /// Applies the changes, ten a call; returns the receipt handles not
    /// changed: the entries SQS refused, and every entry of a call that failed
    /// (logged with its cause).
    pub async fn refused(&self, queue_url: &str, changes: &[VisibilityChange]) -> Vec<String> {
        let results = self.calls(queue_url, changes).await;
        let handles = |chunk: &[VisibilityChange], positions: Vec<usize>| -> Vec<String> {
            positions
                .iter()
                .filter_map(|&i| chunk.get(i))
                .map(|c| c.receipt_handle.clone())
                .collect()
        };
        changes
            .chunks(MAX_ENTRIES)
            .zip(results)
            .flat_map(|(chunk, result)| match result {
                Ok(failed) => handles(chunk, failed),
                Err(error) => {
                    warn!(error = %error_chain(&error), count = chunk.len(), "ChangeMessageVisibilityBatch failed");
                    handles(chunk, (0..chunk.len()).collect())
                }
            })
            .collect()
    }

    /// One call per ten changes, all at once: for each, the positions in its
    /// chunk that SQS reported as failed (entry ids `v0` … `v9`).
    async fn calls(
        &self,
        queue_url: &str,
        changes: &[VisibilityChange],
    ) -> Vec<Result<Vec<usize>, ApiError>> {
        let calls = changes.chunks(MAX_ENTRIES).map(|chunk| async move {
            let entries = chunk
                .iter()
                .enumerate()
                .filter_map(|(i, change)| {
                    ChangeMessageVisibilityBatchRequestEntry::builder()
                        .id(format!("v{i}"))
                        .receipt_handle(&change.receipt_handle)
                        .visibility_timeout(
                            i32::try_from(change.timeout.as_secs()).unwrap_or(i32::MAX),
                        )
                        .build()
                        .ok()
                })
                .collect::<Vec<_>>();
            let output = self
                .client
                .get()
                .change_message_visibility_batch()
                .queue_url(queue_url)
                .set_entries(Some(entries))
                .send()
                .await
                .map_err(|e| ApiError::new("ChangeMessageVisibilityBatch", e))?;
            Ok(output.failed.iter().filter_map(|f| f.id.strip_prefix('v')?.parse().ok()).collect())
        });
        join_all(calls).await
    }
}
