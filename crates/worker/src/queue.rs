//! The work queue's calls: long-poll receives, deletes and visibility
//! changes, ten entries a call, each entry's result checked.

use std::sync::Arc;
use std::time::Duration;

use aws_sdk_sqs::Client;
use aws_sdk_sqs::types::QueueAttributeName;
use backpressure_batch::{SqsRecord, SqsVisibility};
use backpressure_core::consumer::backoff::VisibilityChange;
use backpressure_core::error::{ApiError, error_chain};
use backpressure_core::queue::QueueRef;
use futures::future::join_all;
use tracing::warn;

use crate::sqs_json::{Budget, SqsJson};

/// SQS takes at most ten entries a batch call and ten messages a receive.
pub const MAX_BATCH: usize = 10;

/// The queue the worker drains.
#[derive(Debug, Clone)]
pub struct WorkQueue {
    /// Receives and deletes, the calls made for every ten messages.
    calls: Arc<SqsJson>,
    visibility_changes: SqsVisibility,
    url: String,
    arn: String,
    region: String,
    wait: Duration,
    visibility: Duration,
    poll_budget: Budget,
    call_budget: Budget,
}

impl WorkQueue {
    /// Reads the queue's ARN once (records carry it, and FIFO order depends on it).
    pub async fn connect(
        client: Client,
        calls: SqsJson,
        queue: &QueueRef,
        wait: Duration,
        visibility: Duration,
        call_timeout: Duration,
    ) -> Result<Self, ApiError> {
        let output = client
            .get_queue_attributes()
            .queue_url(queue.url())
            .attribute_names(QueueAttributeName::QueueArn)
            .send()
            .await
            .map_err(|e| ApiError::new("GetQueueAttributes", e))?;
        let arn = output
            .attributes
            .and_then(|a| a.get(&QueueAttributeName::QueueArn).cloned())
            .ok_or_else(|| ApiError::new("GetQueueAttributes", "the response has no QueueArn"))?;
        let region = arn.split(':').nth(3).unwrap_or_default().to_owned();
        // A long poll's budget is the call's plus the poll's wait: the call's
        // own (`API_CALL_TIMEOUT_MS`) would cut every empty long poll short,
        // and messages SQS handed to a cut request stay invisible.
        let poll_budget =
            Budget { attempt: wait + call_timeout / 2, operation: wait + call_timeout };
        let call_budget = Budget { attempt: call_timeout / 2, operation: call_timeout };
        let visibility_changes = SqsVisibility::new(client);
        let url = queue.url().to_owned();
        Ok(Self {
            calls: Arc::new(calls),
            visibility_changes,
            url,
            arn,
            region,
            wait,
            visibility,
            poll_budget,
            call_budget,
        })
    }

    /// Whether messages of one group must be worked in order.
    pub fn is_fifo(&self) -> bool {
        self.arn.ends_with(".fifo")
    }

    /// One long poll for up to `max` messages, with every system and message
    /// attribute, on the long poll's budget.
    pub async fn receive(&self, max: usize) -> Result<Vec<SqsRecord>, ApiError> {
        let max = max.clamp(1, MAX_BATCH) as i32;
        let messages = self
            .calls
            .receive_message(&self.url, max, self.wait, self.visibility, self.poll_budget)
            .await
            .map_err(|e| ApiError::new("ReceiveMessage", e))?;
        Ok(messages.into_iter().map(|m| m.into_record(&self.arn, &self.region)).collect())
    }

    /// Deletes the messages; a refused entry is tried once more. Returns the
    /// receipt handles still not deleted (those messages will come back).
    pub async fn delete(&self, handles: &[String]) -> Vec<String> {
        let mut left = self.delete_once(handles).await;
        if !left.is_empty() {
            left = self.delete_once(&left).await;
        }
        left
    }

    async fn delete_once(&self, handles: &[String]) -> Vec<String> {
        let calls = handles.chunks(MAX_BATCH).map(|chunk| async move {
            let entries: Vec<(String, &str)> =
                chunk.iter().enumerate().map(|(i, handle)| (format!("d{i}"), handle.as_str())).collect();
            match self.calls.delete_message_batch(&self.url, &entries, self.call_budget).await {
                Ok(failed) => failed_entries(chunk, failed.iter().map(String::as_str)),
                Err(error) => {
                    let error = ApiError::new("DeleteMessageBatch", error);
                    warn!(error = %error_chain(&error), count = chunk.len(), "DeleteMessageBatch failed");
                    chunk.to_vec()
                }
            }
        });
        join_all(calls).await.into_iter().flatten().collect()
    }

    /// Sets each message's visibility timeout; returns the handles SQS refused.
    pub async fn set_visibility(&self, changes: &[VisibilityChange]) -> Vec<String> {
        self.visibility_changes.refused(&self.url, changes).await
    }
}

/// The handles whose entry ids (`d3`: their position) SQS reported as failed.
fn failed_entries<'a>(handles: &[String], failed: impl Iterator<Item = &'a str>) -> Vec<String> {
    failed
        .filter_map(|id| id.get(1..)?.parse::<usize>().ok())
        .filter_map(|i| handles.get(i).cloned())
        .collect()
}
