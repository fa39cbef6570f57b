//! The SQS calls: receive with a lease, release, delete, send, counts.

use std::time::Duration;

use aws_sdk_sqs::Client;
use aws_sdk_sqs::config::timeout::TimeoutConfig;
use aws_sdk_sqs::types::{
    MessageSystemAttributeName, QueueAttributeName, SendMessageBatchRequestEntry,
};
use backpressure_core::sqs_calls::{self as sqs_batch, MAX_ENTRIES};
use futures::{StreamExt, TryStreamExt};

use crate::reading::entry::Entry;
use crate::reading::fields::Fields;
use crate::reading::objects::Bodies;
use crate::terminal::error::CliError;

/// `ChangeMessageVisibilityBatch` calls a release keeps under way at once: the
/// end of a read of 100,000 releases them ten at a time, and one call after
/// another left SQS waiting on each round trip.
const RELEASES_AT_ONCE: usize = 8;

/// What a read needs to know of a queue before it starts.
#[derive(Debug, Clone)]
pub(crate) struct QueueState {
    pub(crate) visible: u64,
    pub(crate) in_flight: u64,
    /// Its `VisibilityTimeout`, seconds.
    pub(crate) timeout: u64,
    /// Its own `RedrivePolicy`, when it has one.
    pub(crate) redrive: Option<OwnRedrive>,
}

/// A queue's own redrive policy: SQS moves a message received more than
/// `max_receive_count` times to `dead_letter_queue`, and every read is a receive.
#[derive(Debug, Clone)]
pub(crate) struct OwnRedrive {
    pub(crate) max_receive_count: u64,
    pub(crate) dead_letter_queue: String,
}

impl OwnRedrive {
    /// The note a read of such a queue prints before it starts.
    pub(crate) fn note(&self, url: &str) -> String {
        let name = url.rsplit('/').next().unwrap_or(url);
        format!(
            "note: {name} has a redrive policy of its own: every read adds one to each message's \
             ApproximateReceiveCount, and SQS moves a message received more than {} times to \
             {}",
            self.max_receive_count, self.dead_letter_queue
        )
    }
}

/// One queue and how this tool holds its messages.
#[derive(Debug, Clone)]
pub struct Queue {
    pub(crate) client: Client,
    /// The same client with the receive's wait added to its timeouts.
    pub(crate) poll_client: Client,
    pub(crate) url: String,
    /// Seconds a received message stays invisible to everyone else.
    pub(crate) lease: i32,
    /// Seconds a receive waits for messages.
    pub(crate) wait: i32,
    /// Classify every message as raw.
    pub(crate) raw: bool,
    /// Where each message's tenant and key are (`--tenant-from`, `--key-from`).
    pub(crate) fields: Fields,
    /// On a FIFO queue, read past each group's first messages by moving them (`--rotate-groups`).
    pub(crate) rotate: bool,
    /// Reads fetch the bodies kept in S3 of the entries these filters match.
    pub(crate) bodies: Option<Bodies>,
}

/// A client whose calls, retries included, end within `call` (`wait` more
/// for a receive's long poll): a hung call fails instead of hanging the command.
pub(crate) fn with_timeouts(client: &Client, call: Duration, wait: Duration) -> Client {
    let timeouts = TimeoutConfig::builder()
        .operation_timeout(call + wait)
        .operation_attempt_timeout(call / 2 + wait)
        .build();
    Client::from_conf(client.config().to_builder().timeout_config(timeouts).build())
}

/// The result of one entry of a batch call: `Ok` or SQS's code and message.
pub(crate) type EntryResult<T> = (usize, Result<T, String>);

impl Queue {
    /// Whether reads move messages to the end of their group: a FIFO queue
    /// read with `--rotate-groups` (a standard queue never holds a group back).
    pub(crate) fn moves_groups(&self) -> bool {
        self.rotate && self.url.ends_with(".fifo")
    }

    /// This queue read without the bodies kept in S3: for a count or a canary check.
    pub(crate) fn without_bodies(&self) -> Self {
        Self { bodies: None, ..self.clone() }
    }

    /// Up to `max` (1–10) messages, leased, with every attribute.
    pub(crate) async fn receive(&self, max: i32) -> Result<Vec<Entry>, CliError> {
        let output = self
            .poll_client
            .receive_message()
            .queue_url(&self.url)
            .max_number_of_messages(max.clamp(1, 10))
            .visibility_timeout(self.lease)
            .wait_time_seconds(self.wait)
            .message_system_attribute_names(MessageSystemAttributeName::All)
            .message_attribute_names("All")
            .send()
            .await
            .map_err(|e| CliError::sqs("ReceiveMessage", &self.url, e))?;
        let mut entries: Vec<Entry> = output
            .messages()
            .iter()
            .filter_map(|m| Entry::from_message(m, self.raw, &self.fields))
            .collect();
        if let Some(bodies) = &self.bodies {
            bodies.objects.fetch(&mut entries, |entry| bodies.filter.matches(entry)).await;
        }
        Ok(entries)
    }

    /// Makes messages visible again at once, [`RELEASES_AT_ONCE`] calls under
    /// way together; returns how many SQS did not release (they come back when
    /// their lease ends).
    pub(crate) async fn release<S: AsRef<str>>(&self, handles: &[S]) -> Result<usize, CliError> {
        let calls = handles.chunks(MAX_ENTRIES).map(|chunk| self.change_visibility(chunk, 0));
        let refused: Vec<Vec<usize>> =
            futures::stream::iter(calls).buffer_unordered(RELEASES_AT_ONCE).try_collect().await?;
        Ok(refused.iter().map(Vec::len).sum())
    }

    /// Sets up to 10 messages' visibility to `seconds` from now; returns the
    /// positions SQS did not confirm.
    pub(crate) async fn change_visibility<S: AsRef<str>>(
        &self,
        handles: &[S],
        seconds: i32,
    ) -> Result<Vec<usize>, CliError> {
        let changes: Vec<(&str, i32)> = handles.iter().map(|h| (h.as_ref(), seconds)).collect();
        let results = sqs_batch::change_visibility(&self.client, &self.url, &changes)
            .await
            .map_err(|e| CliError::sqs("ChangeMessageVisibilityBatch", &self.url, e))?;
        let positions: Vec<usize> = (0..results.len()).collect();
        Ok(sqs_batch::unconfirmed(&positions, &results).copied().collect())
    }

    /// Deletes up to 10 messages; one result per handle, by index.
    pub(crate) async fn delete(&self, handles: &[&str]) -> Result<Vec<EntryResult<()>>, CliError> {
        let results = sqs_batch::delete(&self.client, &self.url, handles)
            .await
            .map_err(|e| CliError::sqs("DeleteMessageBatch", &self.url, e))?;
        Ok(by_id((0..handles.len()).map(Some), results))
    }

    /// Sends up to 10 messages; one result per entry (by its `id`, the entry's
    /// index), with the new message id when SQS accepted it.
    pub(crate) async fn send(
        &self,
        entries: Vec<SendMessageBatchRequestEntry>,
    ) -> Result<Vec<EntryResult<String>>, CliError> {
        let ids: Vec<Option<usize>> = entries.iter().map(|e| e.id().parse().ok()).collect();
        let results = sqs_batch::send(&self.client, &self.url, entries)
            .await
            .map_err(|e| CliError::sqs("SendMessageBatch", &self.url, e))?;
        Ok(by_id(ids, results))
    }

    /// Approximate visible and in-flight counts.
    pub(crate) async fn counts(&self) -> Result<(u64, u64), CliError> {
        let state = self.state().await?;
        Ok((state.visible, state.in_flight))
    }

    /// Approximate visible and in-flight counts, the queue's default visibility timeout in
    /// seconds (how long a consumer holds a message), and its own redrive policy.
    pub(crate) async fn state(&self) -> Result<QueueState, CliError> {
        let output = self
            .client
            .get_queue_attributes()
            .queue_url(&self.url)
            .attribute_names(QueueAttributeName::ApproximateNumberOfMessages)
            .attribute_names(QueueAttributeName::ApproximateNumberOfMessagesNotVisible)
            .attribute_names(QueueAttributeName::VisibilityTimeout)
            .attribute_names(QueueAttributeName::RedrivePolicy)
            .send()
            .await
            .map_err(|e| CliError::sqs("GetQueueAttributes", &self.url, e))?;
        let attribute = |name| output.attributes().and_then(|a| a.get(&name));
        let count = |name| attribute(name).and_then(|v| v.parse().ok()).unwrap_or(0);
        let redrive = attribute(QueueAttributeName::RedrivePolicy).and_then(|policy| {
            let policy: serde_json::Value = serde_json::from_str(policy).ok()?;
            let max = policy["maxReceiveCount"].as_u64().or_else(|| {
                policy["maxReceiveCount"].as_str().and_then(|text| text.parse().ok())
            })?;
            let target = policy["deadLetterTargetArn"].as_str()?.rsplit(':').next()?.to_owned();
            Some(OwnRedrive { max_receive_count: max, dead_letter_queue: target })
        });
        Ok(QueueState {
            visible: count(QueueAttributeName::ApproximateNumberOfMessages),
            in_flight: count(QueueAttributeName::ApproximateNumberOfMessagesNotVisible),
            timeout: count(QueueAttributeName::VisibilityTimeout),
            redrive,
        })
    }

    /// When messages held by someone else are visible again, at the latest,
    /// for a person: this tool's own lease or the queue's consumers'.
    pub(crate) fn when_visible(&self, queue_timeout: u64) -> String {
        let longest = queue_timeout.max(self.lease.unsigned_abs().into());
        format!(
            "within {longest} s: this tool holds what it reads for {} s (--visibility-timeout), a \
             consumer for the queue's VisibilityTimeout of {queue_timeout} s unless it extends it",
            self.lease
        )
    }

    /// The queues whose redrive policy names this queue as their dead-letter queue.
    pub(crate) async fn dead_letter_sources(&self) -> Result<Vec<String>, CliError> {
        let output = self
            .client
            .list_dead_letter_source_queues()
            .queue_url(&self.url)
            .send()
            .await
            .map_err(|e| CliError::sqs("ListDeadLetterSourceQueues", &self.url, e))?;
        Ok(output.queue_urls().to_vec())
    }
}

/// Each entry SQS answered for, by its id: `Ok`, or its code and message.
/// An entry SQS named in neither list has no result.
fn by_id<T>(
    ids: impl IntoIterator<Item = Option<usize>>,
    results: Vec<sqs_batch::EntryResult<T>>,
) -> Vec<EntryResult<T>> {
    ids.into_iter()
        .zip(results)
        .filter_map(|(id, result)| match result {
            sqs_batch::EntryResult::Done(value) => Some((id?, Ok(value))),
            sqs_batch::EntryResult::Refused { code, message } => {
                Some((id?, Err(format!("{code}: {message}"))))
            }
            sqs_batch::EntryResult::Unreported => None,
        })
        .collect()
}
