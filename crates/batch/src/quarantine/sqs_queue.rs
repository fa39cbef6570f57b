use std::sync::{Arc, OnceLock};

use super::QuarantineRecord;
#[cfg(feature = "s3-overflow")]
use super::S3Overflow;
use super::{QuarantineError, QuarantineStore};
use aws_sdk_sqs::Client;
use aws_sdk_sqs::types::{MessageAttributeValue, QueueAttributeName, SendMessageBatchRequestEntry};
use backpressure_core::error::ApiError;
use backpressure_core::queue::{QueueKind, QueueRef};
use backpressure_core::sqs_calls::{self as calls, EntryResult};
#[cfg(feature = "s3-overflow")]
use backpressure_core::sqs_limits::MAX_BATCH_BYTES;
use backpressure_core::sqs_limits::plan_batches;
use futures::future::join_all;

/// The quarantine queue, written with `SendMessageBatch`: ten entries and
/// 1 MiB a call, each entry's result checked on its own. A record above the
/// queue's `MaximumMessageSize` is refused before the call and its message
/// retried, unless an [`S3Overflow`] takes its body.
#[derive(Debug, Clone)]
pub struct SqsQuarantine {
    client: Client,
    queue: QueueRef,
    /// The queue's `MaximumMessageSize`: given, or read once when first needed.
    max_message_bytes: Arc<OnceLock<usize>>,
    #[cfg(feature = "s3-overflow")]
    overflow: Option<S3Overflow>,
}

impl SqsQuarantine {
    /// Writes to `queue`, whose `MaximumMessageSize` is `max_message_bytes`.
    pub fn new(client: Client, queue: QueueRef, max_message_bytes: usize) -> Self {
        let mut quarantine = Self::reading_limit(client, queue);
        quarantine.max_message_bytes = Arc::new(OnceLock::from(max_message_bytes));
        quarantine
    }

    /// Writes to `queue`, reading its `MaximumMessageSize` with
    /// `GetQueueAttributes` before the first write (or
    /// [`SqsQuarantine::max_message_bytes`]); a read that fails fails that
    /// write, whose messages are retried, and is tried again on the next.
    pub fn reading_limit(client: Client, queue: QueueRef) -> Self {
        Self {
            client,
            queue,
            max_message_bytes: Arc::new(OnceLock::new()),
            #[cfg(feature = "s3-overflow")]
            overflow: None,
        }
    }

    /// Bodies of records too large for the queue go to S3, the record
    /// naming the object (with its size and SHA-256); the object is written
    /// and confirmed before the record is sent.
    #[cfg(feature = "s3-overflow")]
    #[cfg_attr(docsrs, doc(cfg(feature = "s3-overflow")))]
    pub fn overflow(mut self, overflow: S3Overflow) -> Self {
        self.overflow = Some(overflow);
        self
    }

    /// The queue's `MaximumMessageSize`, read once.
    pub async fn max_message_bytes(&self) -> Result<usize, QuarantineError> {
        if let Some(&limit) = self.max_message_bytes.get() {
            return Ok(limit);
        }
        // Boxed, as the other SDK calls of a store: a binary's default
        // recursion limit cannot lay out the engine's future otherwise.
        let read = self
            .client
            .get_queue_attributes()
            .queue_url(self.queue.url())
            .attribute_names(QueueAttributeName::MaximumMessageSize)
            .send();
        let output = Box::pin(read).await.map_err(|e| {
            QuarantineError::Limit(Arc::new(ApiError::new("GetQueueAttributes", e)))
        })?;
        let limit = output
            .attributes()
            .and_then(|all| all.get(&QueueAttributeName::MaximumMessageSize))
            .and_then(|value| value.parse::<usize>().ok())
            .ok_or_else(|| {
                let missing = std::io::Error::other("no MaximumMessageSize in the answer");
                QuarantineError::Limit(Arc::new(ApiError::new("GetQueueAttributes", missing)))
            })?;
        Ok(*self.max_message_bytes.get_or_init(|| limit))
    }

    fn entry(
        &self,
        id: usize,
        record: &QuarantineRecord,
        body: String,
    ) -> Result<SendMessageBatchRequestEntry, QuarantineError> {
        let mut entry =
            SendMessageBatchRequestEntry::builder().id(format!("q{id}")).message_body(body);
        for (name, value) in record.message_attributes() {
            let value = MessageAttributeValue::builder()
                .data_type("String")
                .string_value(value.into_owned())
                .build();
            if let Ok(value) = value {
                entry = entry.message_attributes(name, value);
            }
        }
        if self.queue.kind() == QueueKind::Fifo {
            // A FIFO quarantine queue also deduplicates a record written twice
            // (a write confirmed too late to count) within SQS's 5-minute window.
            entry = entry
                .message_group_id(
                    record.message_group_id.clone().unwrap_or_else(|| record.error_code.clone()),
                )
                .message_deduplication_id(&record.message_id);
        }
        entry.build().map_err(|e| QuarantineError::Invalid(e.to_string()))
    }

    async fn send(
        &self,
        entries: Vec<(usize, SendMessageBatchRequestEntry)>,
    ) -> Vec<(usize, Result<(), QuarantineError>)> {
        let (indexes, entries): (Vec<usize>, Vec<_>) = entries.into_iter().unzip();
        let sent = calls::send(&self.client, self.queue.url(), entries).await;
        let results = match sent {
            Ok(results) => results,
            Err(error) => {
                let error = Arc::new(ApiError::new("SendMessageBatch", error));
                return indexes
                    .into_iter()
                    .map(|i| (i, Err(QuarantineError::Call(error.clone()))))
                    .collect();
            }
        };
        let result = |entry| match entry {
            EntryResult::Done(_) => Ok(()),
            EntryResult::Refused { code, message } => {
                Err(QuarantineError::Rejected { code, message })
            }
            EntryResult::Unreported => Err(QuarantineError::Unreported),
        };
        indexes.into_iter().zip(results.into_iter().map(result)).collect()
    }
}

/// Encoded records, ready to be sent in SQS batches.
struct Planned<'a> {
    /// Each record's message body; `None` where it failed already.
    bodies: Vec<Option<String>>,
    sizes: &'a [usize],
    /// Whether each record's body went to S3.
    overflowed: &'a [bool],
    /// The queue's largest message.
    limit: usize,
}

impl SqsQuarantine {
    /// Sends the records in batches within SQS's limits; one too large for
    /// any batch fails on its own.
    async fn send_planned(
        &self,
        records: &[QuarantineRecord],
        planned: Planned<'_>,
        results: &mut [Result<(), QuarantineError>],
    ) {
        let Planned { mut bodies, sizes, overflowed, limit } = planned;
        let (batches, too_large) = plan_batches(sizes, limit);
        for index in too_large {
            if bodies[index].is_some() {
                results[index] = Err(QuarantineError::TooLarge {
                    size: sizes[index],
                    limit,
                    overflow: overflowed[index],
                });
            }
        }
        let mut calls = Vec::with_capacity(batches.len());
        for batch in batches {
            let mut entries = Vec::with_capacity(batch.len());
            for index in batch {
                let Some(body) = bodies[index].take() else { continue };
                match self.entry(index, &records[index], body) {
                    Ok(entry) => entries.push((index, entry)),
                    Err(error) => results[index] = Err(error),
                }
            }
            calls.push(self.send(entries));
        }
        for (index, result) in join_all(calls).await.into_iter().flatten() {
            results[index] = result;
        }
    }
}

impl QuarantineStore for SqsQuarantine {
    async fn store(&self, records: &[QuarantineRecord]) -> Vec<Result<(), QuarantineError>> {
        let limit = match self.max_message_bytes().await {
            Ok(limit) => limit,
            Err(error) => return records.iter().map(|_| Err(error.clone())).collect(),
        };
        let mut results: Vec<Result<(), QuarantineError>> =
            vec![Err(QuarantineError::Unreported); records.len()];
        let mut bodies: Vec<Option<String>> = Vec::with_capacity(records.len());
        let mut sizes = Vec::with_capacity(records.len());
        #[cfg_attr(not(feature = "s3-overflow"), allow(unused_mut))]
        let mut overflowed = vec![false; records.len()];
        #[cfg(feature = "s3-overflow")]
        let mut puts = Vec::new();
        for (index, record) in records.iter().enumerate() {
            let encoded = record.to_sqs_json().map(|body| (record.sqs_size(&body), body));
            #[cfg(feature = "s3-overflow")]
            let encoded = match (encoded, &self.overflow) {
                (Ok((size, _)), Some(overflow)) if size > limit.min(MAX_BATCH_BYTES) => {
                    let object = overflow.object_for(record);
                    let slim = QuarantineRecord {
                        body: None,
                        body_object: Some(object.clone()),
                        ..record.clone()
                    };
                    overflowed[index] = true;
                    let encoded = slim.to_sqs_json().map(|body| (slim.sqs_size(&body), body));
                    if matches!(&encoded, Ok((size, _)) if *size <= limit) {
                        puts.push(Box::pin(async move {
                            let body = record.body.as_deref().unwrap_or_default();
                            (index, overflow.put(&object, body).await)
                        }));
                    }
                    encoded
                }
                (encoded, _) => encoded,
            };
            match encoded {
                Ok((size, body)) => {
                    sizes.push(size);
                    bodies.push(Some(body));
                }
                Err(error) => {
                    results[index] = Err(QuarantineError::Encode(Arc::new(error)));
                    // Counted as too large to be planned into any batch.
                    sizes.push(usize::MAX);
                    bodies.push(None);
                }
            }
        }
        // Every object is confirmed before the record that names it is sent.
        #[cfg(feature = "s3-overflow")]
        for (index, written) in join_all(puts).await {
            if let Err(error) = written {
                results[index] = Err(error);
                sizes[index] = usize::MAX;
                bodies[index] = None;
            }
        }
        let planned = Planned { bodies, sizes: &sizes, overflowed: &overflowed, limit };
        self.send_planned(records, planned, &mut results).await;
        results
    }
}
