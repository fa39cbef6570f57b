//! The work queue's calls: long-poll receives, deletes and visibility
//! changes, ten entries a call, each entry's result checked.

use std::time::Duration;

use crate::backoff::VisibilityChange;
use crate::record::SqsRecord;
use crate::sqs::calls::{self, MAX_ENTRIES};
use crate::sqs::{SqsVisibility, record_from_message};
use aws_sdk_sqs::Client;
use aws_sdk_sqs::config::timeout::TimeoutConfig;
use aws_sdk_sqs::types::{MessageSystemAttributeName, QueueAttributeName};
use backpressure_core::error::{ApiError, error_chain};
use backpressure_core::queue::{QueueArn, QueueKind, QueueRef};
use futures::future::join_all;
use tracing::warn;

/// SQS takes at most ten entries a batch call and ten messages a receive.
pub(crate) const MAX_BATCH: usize = MAX_ENTRIES;

/// The queue the worker drains.
#[derive(Debug, Clone)]
pub(crate) struct WorkQueue {
    client: Client,
    /// The same client with the long poll's timeouts, built once: a per-call
    /// override rebuilds the client's runtime components on every receive.
    poll_client: Client,
    visibility_changes: SqsVisibility,
    url: String,
    arn: QueueArn,
    wait: Duration,
    visibility: Duration,
}

impl WorkQueue {
    /// Reads the queue's ARN once (records carry it, and FIFO order depends on it).
    pub(crate) async fn connect(
        client: Client,
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
        let arn = QueueArn::parse(&arn).map_err(|e| ApiError::new("GetQueueAttributes", e))?;
        // Its timeouts are the call's budget plus the poll's wait: the client's
        // own (`api_call_timeout`) would cut every empty long poll short,
        // and messages SQS handed to a cut request stay invisible.
        let timeouts = TimeoutConfig::builder()
            .operation_timeout(wait + call_timeout)
            .operation_attempt_timeout(wait + call_timeout / 2)
            .build();
        let poll_client =
            Client::from_conf(client.config().to_builder().timeout_config(timeouts).build());
        let visibility_changes = SqsVisibility::new(client.clone());
        let url = queue.url().to_owned();
        Ok(Self { client, poll_client, visibility_changes, url, arn, wait, visibility })
    }

    /// Whether messages of one group must be worked in order.
    pub(crate) fn is_fifo(&self) -> bool {
        self.arn.kind() == QueueKind::Fifo
    }

    /// One long poll for up to `max` messages, with every system and message
    /// attribute, on the long poll's timeouts.
    pub(crate) async fn receive(&self, max: usize) -> Result<Vec<SqsRecord>, ApiError> {
        let output = self
            .poll_client
            .receive_message()
            .queue_url(&self.url)
            .max_number_of_messages(max.clamp(1, MAX_BATCH) as i32)
            .wait_time_seconds(self.wait.as_secs() as i32)
            .visibility_timeout(self.visibility.as_secs() as i32)
            .message_system_attribute_names(MessageSystemAttributeName::All)
            .message_attribute_names("All")
            .send()
            .await
            .map_err(|e| ApiError::new("ReceiveMessage", e))?;
        Ok(output
            .messages
            .unwrap_or_default()
            .into_iter()
            .map(|m| record_from_message(m, self.arn.as_str(), self.arn.region()))
            .collect())
    }

    /// Deletes the messages; a refused entry is tried once more. Returns the
    /// receipt handles still not deleted (those messages will come back).
    pub(crate) async fn delete(&self, handles: &[String]) -> Vec<String> {
        let mut left = self.delete_once(handles).await;
        if !left.is_empty() {
            left = self.delete_once(&left).await;
        }
        left
    }

    async fn delete_once(&self, handles: &[String]) -> Vec<String> {
        let calls = handles.chunks(MAX_ENTRIES).map(|chunk| async move {
            match calls::delete(&self.client, &self.url, chunk).await {
                Ok(results) => calls::unconfirmed(chunk, &results).cloned().collect(),
                Err(error) => {
                    warn!(error = %error_chain(&error), count = chunk.len(), "DeleteMessageBatch failed");
                    chunk.to_vec()
                }
            }
        });
        join_all(calls).await.into_iter().flatten().collect()
    }

    /// Sets each message's visibility timeout; returns the handles SQS refused.
    pub(crate) async fn set_visibility(&self, changes: &[VisibilityChange]) -> Vec<String> {
        self.visibility_changes.apply(&self.url, changes).await
    }
}
