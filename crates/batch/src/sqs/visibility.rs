use aws_sdk_sqs::Client;
use aws_sdk_sqs::types::ChangeMessageVisibilityBatchRequestEntry;
use backpressure_core::consumer::backoff::VisibilityChange;
use backpressure_core::error::ApiError;
use futures::future::join_all;

/// `ChangeMessageVisibilityBatch` takes at most 10 entries.
const MAX_ENTRIES: usize = 10;

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

    /// Applies the changes, ten a call; returns how many SQS reported as failed.
    pub async fn change_visibility(
        &self,
        queue_url: &str,
        changes: &[VisibilityChange],
    ) -> Result<usize, ApiError> {
        let calls = changes.chunks(MAX_ENTRIES).map(|chunk| {
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
            self.client
                .change_message_visibility_batch()
                .queue_url(queue_url)
                .set_entries(Some(entries))
                .send()
        });
        let mut failed = 0;
        for result in join_all(calls.collect::<Vec<_>>()).await {
            failed +=
                result.map_err(|e| ApiError::new("ChangeMessageVisibilityBatch", e))?.failed.len();
        }
        Ok(failed)
    }
}
