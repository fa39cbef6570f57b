//! `--rotate-groups`: reading a FIFO queue past each group's first messages.
//!
//! SQS hands out nothing more of a FIFO message group while any of its
//! messages is in flight, and has no peek: a scan that holds what it read sees
//! at most the first ten of each group. To read further, each message read is
//! moved to the end of its own group (sent again with the same group, and only
//! once SQS confirmed that, deleted here), which frees the group for the next
//! receive. Moving a whole group in the order SQS hands it out keeps its
//! order; the copies of this run come back last and end the group's read.

use std::sync::atomic::{AtomicU64, Ordering};

use aws_sdk_sqs::types::{MessageAttributeValue, QueueAttributeName, SendMessageBatchRequestEntry};
use backpressure_core::sqs_limits::plan_batches;

use crate::aws::queue::Queue;
use crate::reading::entry::Entry;
use crate::reading::origin;
use crate::terminal::error::CliError;

/// SQS's limit of message attributes per message.
const MAX_ATTRIBUTES: usize = 10;

/// One run's moves on one queue.
#[derive(Debug)]
pub(crate) struct Mover {
    /// Names this run in the copies it writes.
    run: String,
    /// The queue's `MaximumMessageSize`.
    max_bytes: usize,
    sent: AtomicU64,
}

/// A message that could not be moved: it stays at the head of its group,
/// held, so the group is not read past it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Stuck {
    pub(crate) group: String,
    pub(crate) queue_message_id: String,
    pub(crate) reason: String,
}

impl Mover {
    /// A mover for `queue`, which must be a FIFO queue.
    pub(crate) async fn new(queue: &Queue) -> Result<Self, CliError> {
        let output = queue
            .client
            .get_queue_attributes()
            .queue_url(&queue.url)
            .attribute_names(QueueAttributeName::MaximumMessageSize)
            .send()
            .await
            .map_err(|e| CliError::sqs("GetQueueAttributes", &queue.url, e))?;
        let max_bytes = output
            .attributes()
            .and_then(|a| a.get(&QueueAttributeName::MaximumMessageSize))
            .and_then(|v| v.parse().ok())
            .unwrap_or(262_144);
        // Every read has its own: the canary's check must not take the copies
        // its own sweep moved for ones it read already.
        static RUNS: AtomicU64 = AtomicU64::new(0);
        let now = jiff::Timestamp::now();
        let n = RUNS.fetch_add(1, Ordering::Relaxed);
        let run = format!("{}-{}-{n}", now.as_millisecond(), std::process::id());
        Ok(Self { run, max_bytes, sent: AtomicU64::new(0) })
    }

    /// Whether `entry` is a copy this run wrote: already read.
    pub(crate) fn wrote(&self, entry: &Entry) -> bool {
        entry.origin.moved_by.as_deref() == Some(self.run.as_str())
    }

    /// Moves `entries` (as received, in order) to the end of their groups; one
    /// result per entry. A whole call that fails is an error: what was not
    /// confirmed stays where it was.
    pub(crate) async fn move_to_end(
        &self,
        queue: &Queue,
        entries: &[&Entry],
    ) -> Result<Vec<Result<(), Stuck>>, CliError> {
        let stuck = |entry: &Entry, reason: String| Stuck {
            group: entry.queue_group().unwrap_or("(none)").to_owned(),
            queue_message_id: entry.queue_message_id.clone(),
            reason,
        };
        let mut results: Vec<Result<(), Stuck>> = Vec::with_capacity(entries.len());
        let mut ready = Vec::new();
        for (index, entry) in entries.iter().enumerate() {
            match self.copy(entry, index) {
                Ok((request, size)) => {
                    ready.push((index, request, size));
                    results.push(Ok(()));
                }
                Err(reason) => results.push(Err(stuck(entry, reason))),
            }
        }
        let sizes: Vec<usize> = ready.iter().map(|(_, _, size)| *size).collect();
        let (batches, too_large) = plan_batches(&sizes, self.max_bytes);
        for position in too_large {
            let index = ready[position].0;
            let reason = format!("with its origin it exceeds the queue's {} bytes", self.max_bytes);
            results[index] = Err(stuck(entries[index], reason));
        }
        for batch in batches {
            let requests = batch.iter().map(|&p| ready[p].1.clone()).collect();
            let sent = queue.send(requests).await?;
            let mut confirmed = Vec::new();
            for &position in &batch {
                let index = ready[position].0;
                match sent.iter().find(|(id, _)| *id == index).map(|(_, r)| r) {
                    Some(Ok(_)) => confirmed.push(index),
                    Some(Err(reason)) => {
                        results[index] = Err(stuck(entries[index], format!("not sent: {reason}")));
                    }
                    None => {
                        let reason = "SQS returned no result for its copy".to_owned();
                        results[index] = Err(stuck(entries[index], reason));
                    }
                }
            }
            let handles: Vec<&str> =
                confirmed.iter().map(|&i| entries[i].receipt_handle.as_str()).collect();
            if handles.is_empty() {
                continue;
            }
            let deleted = queue.delete(&handles).await?;
            for (position, &index) in confirmed.iter().enumerate() {
                if let Some((_, Err(reason))) = deleted.iter().find(|(p, _)| *p == position) {
                    // Its copy is at the end of the group too: the next run that
                    // moves this group removes the one it reads second.
                    let reason = format!("copied, but not deleted here: {reason}");
                    results[index] = Err(stuck(entries[index], reason));
                }
            }
        }
        Ok(results)
    }

    /// The copy of `entry` (batch id `index`) and its size as SQS counts it.
    fn copy(
        &self,
        entry: &Entry,
        index: usize,
    ) -> Result<(SendMessageBatchRequestEntry, usize), String> {
        let group = entry.queue_group().ok_or("it has no message group")?;
        if entry.queue_message_attributes.len() >= MAX_ATTRIBUTES {
            return Err(format!(
                "it has {MAX_ATTRIBUTES} message attributes, SQS's limit, and no room for its origin"
            ));
        }
        let origin = entry.origin.attribute(&self.run);
        let sequence = self.sent.fetch_add(1, Ordering::Relaxed);
        let mut request = SendMessageBatchRequestEntry::builder()
            .id(index.to_string())
            .message_body(&entry.queue_body)
            .message_group_id(group)
            .message_deduplication_id(format!("move-{}-{sequence}", self.run));
        let mut size = entry.queue_body.len() + origin::ATTRIBUTE.len() + "String".len();
        for (name, attribute) in &entry.queue_message_attributes {
            request = request.message_attributes(name, attribute.to_sdk()?);
            size += name.len()
                + attribute.data_type.len()
                + attribute.string_value.as_deref().map_or(0, str::len)
                + attribute.binary_value.as_deref().map_or(0, |b| b.len() * 3 / 4);
        }
        let value = MessageAttributeValue::builder()
            .data_type("String")
            .string_value(&origin)
            .build()
            .map_err(|e| e.to_string())?;
        size += origin.len();
        let request = request.message_attributes(origin::ATTRIBUTE, value);
        Ok((request.build().map_err(|e| e.to_string())?, size))
    }
}
