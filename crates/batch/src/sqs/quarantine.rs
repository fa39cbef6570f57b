use std::sync::Arc;

use crate::quarantine::{QuarantineError, QuarantineStore};
use crate::quarantine::{QuarantineRecord, plan_batches};
use aws_sdk_sqs::Client;
use aws_sdk_sqs::types::{MessageAttributeValue, SendMessageBatchRequestEntry};
use backpressure_core::error::ApiError;
use backpressure_core::queue::{QueueKind, QueueRef};
use futures::future::join_all;

/// The quarantine queue, written with `SendMessageBatch`: ten entries and
/// 1 MiB a call, each entry's result checked on its own.
#[derive(Debug, Clone)]
pub struct SqsQuarantine {
    client: Client,
    queue: QueueRef,
    max_message_bytes: usize,
}

impl SqsQuarantine {
    /// Writes to `queue`; a record above `max_message_bytes` (the queue's
    /// `MaximumMessageSize`) is refused before the call and its message retried.
    pub fn new(client: Client, queue: QueueRef, max_message_bytes: usize) -> Self {
        Self { client, queue, max_message_bytes }
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
        let indexes: Vec<usize> = entries.iter().map(|(i, _)| *i).collect();
        let output = self
            .client
            .send_message_batch()
            .queue_url(self.queue.url())
            .set_entries(Some(entries.into_iter().map(|(_, e)| e).collect()))
            .send()
            .await;
        let output = match output {
            Ok(output) => output,
            Err(error) => {
                let error = Arc::new(ApiError::new("SendMessageBatch", error));
                return indexes
                    .into_iter()
                    .map(|i| (i, Err(QuarantineError::Call(error.clone()))))
                    .collect();
            }
        };
        indexes
            .into_iter()
            .map(|index| {
                let id = format!("q{index}");
                let result = if output.successful.iter().any(|s| s.id == id) {
                    Ok(())
                } else if let Some(failed) = output.failed.iter().find(|f| f.id == id) {
                    Err(QuarantineError::Rejected {
                        code: failed.code.clone(),
                        message: failed.message.clone().unwrap_or_default(),
                    })
                } else {
                    Err(QuarantineError::Unreported)
                };
                (index, result)
            })
            .collect()
    }
}

impl QuarantineStore for SqsQuarantine {
    async fn store(&self, records: &[QuarantineRecord]) -> Vec<Result<(), QuarantineError>> {
        let mut results: Vec<Result<(), QuarantineError>> =
            vec![Err(QuarantineError::Unreported); records.len()];
        let mut bodies: Vec<Option<String>> = Vec::with_capacity(records.len());
        let mut sizes = Vec::with_capacity(records.len());
        for (index, record) in records.iter().enumerate() {
            match record.to_sqs_json() {
                Ok(body) => {
                    sizes.push(record.sqs_size(&body));
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
        let (batches, too_large) = plan_batches(&sizes, self.max_message_bytes);
        for index in too_large {
            if bodies[index].is_some() {
                results[index] = Err(QuarantineError::TooLarge {
                    size: sizes[index],
                    limit: self.max_message_bytes,
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
        results
    }
}
