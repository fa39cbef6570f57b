use crate::backoff::VisibilityChange;
use crate::sqs::calls::{self, EntryResult, MAX_ENTRIES};
use aws_sdk_sqs::Client;
use backpressure_core::error::{ApiError, error_chain};
use futures::future::join_all;
use tracing::warn;

/// `ChangeMessageVisibilityBatch` on the source queue.
#[derive(Debug, Clone)]
pub struct SqsVisibility {
    client: Client,
}

impl SqsVisibility {
    /// Changes visibility with this client.
    pub fn new(client: Client) -> Self {
        Self { client }
    }

    /// Applies the changes, ten a call; returns how many SQS did not confirm.
    pub async fn change_visibility(
        &self,
        queue_url: &str,
        changes: &[VisibilityChange],
    ) -> Result<usize, ApiError> {
        let mut failed = 0;
        for result in self.calls(queue_url, changes).await {
            failed += result?.iter().filter(|r| !r.is_done()).count();
        }
        Ok(failed)
    }

    /// Applies the changes, ten a call; returns the receipt handles not
    /// changed: the entries SQS did not confirm, and every entry of a call
    /// that failed (logged with its cause).
    pub async fn refused(&self, queue_url: &str, changes: &[VisibilityChange]) -> Vec<String> {
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
