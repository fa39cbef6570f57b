//! SQS's batch calls — `SendMessageBatch`, `DeleteMessageBatch` and
//! `ChangeMessageVisibilityBatch` — as every adapter of the workspace makes
//! them: at most ten entries a call, and each entry's result read on its own,
//! because a call that succeeds may still refuse some of its entries.

use aws_sdk_sqs::Client;
use aws_sdk_sqs::error::SdkError;
use aws_sdk_sqs::operation::change_message_visibility_batch::ChangeMessageVisibilityBatchError;
use aws_sdk_sqs::operation::delete_message_batch::DeleteMessageBatchError;
use aws_sdk_sqs::operation::send_message_batch::SendMessageBatchError;
use aws_sdk_sqs::types::{
    BatchResultErrorEntry, ChangeMessageVisibilityBatchRequestEntry,
    DeleteMessageBatchRequestEntry, SendMessageBatchRequestEntry,
};

/// The most entries SQS takes in one batch call.
pub const MAX_ENTRIES: usize = crate::sqs_limits::MAX_BATCH_ENTRIES;

/// What SQS answered for one entry of a batch call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryResult<T> {
    /// Done; for a send, with the new message's id.
    Done(T),
    /// Refused, with SQS's code and message.
    Refused {
        /// SQS's error code, such as `ReceiptHandleIsInvalid`.
        code: String,
        /// SQS's message, empty when it gave none.
        message: String,
    },
    /// Named in neither list of the answer: not confirmed either way.
    Unreported,
}

impl<T> EntryResult<T> {
    /// Whether SQS confirmed the entry.
    pub fn is_done(&self) -> bool {
        matches!(self, Self::Done(_))
    }
}

/// The items of a call whose entries SQS did not confirm; `results` is that
/// call's answer, one per item, in the items' order.
pub fn unconfirmed<'a, I, T>(
    items: &'a [I],
    results: &'a [EntryResult<T>],
) -> impl Iterator<Item = &'a I> {
    items.iter().zip(results).filter(|(_, result)| !result.is_done()).map(|(item, _)| item)
}

/// The error of a batch call as a whole: no entry of it was confirmed.
pub type CallError<E> = SdkError<E>;

/// Sends up to ten entries; one result per entry, in the entries' order,
/// matched to SQS's answer by each entry's `Id`.
pub async fn send(
    client: &Client,
    queue_url: &str,
    entries: Vec<SendMessageBatchRequestEntry>,
) -> Result<Vec<EntryResult<String>>, CallError<SendMessageBatchError>> {
    let ids: Vec<String> = entries.iter().map(|e| e.id().to_owned()).collect();
    let output =
        client.send_message_batch().queue_url(queue_url).set_entries(Some(entries)).send().await?;
    let done = output.successful().iter().map(|s| (s.id(), s.message_id().to_owned()));
    Ok(per_entry(&ids, done, output.failed()))
}

/// Deletes up to ten messages by their receipt handles; one result per handle.
pub async fn delete<S: AsRef<str>>(
    client: &Client,
    queue_url: &str,
    receipt_handles: &[S],
) -> Result<Vec<EntryResult<()>>, CallError<DeleteMessageBatchError>> {
    let ids = positions(receipt_handles.len());
    let entries = receipt_handles
        .iter()
        .zip(&ids)
        .filter_map(|(handle, id)| {
            DeleteMessageBatchRequestEntry::builder()
                .id(id)
                .receipt_handle(handle.as_ref())
                .build()
                .ok()
        })
        .collect();
    let output = client
        .delete_message_batch()
        .queue_url(queue_url)
        .set_entries(Some(entries))
        .send()
        .await?;
    let done = output.successful().iter().map(|s| (s.id(), ()));
    Ok(per_entry(&ids, done, output.failed()))
}

/// Sets up to ten messages' visibility timeouts, each `(receipt handle,
/// seconds from now)`; one result per change.
pub async fn change_visibility<S: AsRef<str>>(
    client: &Client,
    queue_url: &str,
    changes: &[(S, i32)],
) -> Result<Vec<EntryResult<()>>, CallError<ChangeMessageVisibilityBatchError>> {
    let ids = positions(changes.len());
    let entries = changes
        .iter()
        .zip(&ids)
        .filter_map(|((handle, seconds), id)| {
            ChangeMessageVisibilityBatchRequestEntry::builder()
                .id(id)
                .receipt_handle(handle.as_ref())
                .visibility_timeout(*seconds)
                .build()
                .ok()
        })
        .collect();
    let output = client
        .change_message_visibility_batch()
        .queue_url(queue_url)
        .set_entries(Some(entries))
        .send()
        .await?;
    let done = output.successful().iter().map(|s| (s.id(), ()));
    Ok(per_entry(&ids, done, output.failed()))
}

/// Entry ids `"0"` … `"9"`: each entry's position in its call.
fn positions(count: usize) -> Vec<String> {
    (0..count).map(|i| i.to_string()).collect()
}

/// Each id's result: done when SQS listed it as successful, refused when it
/// listed it as failed, unreported when it listed it in neither.
fn per_entry<'a, T>(
    ids: &[String],
    successful: impl Iterator<Item = (&'a str, T)>,
    failed: &[BatchResultErrorEntry],
) -> Vec<EntryResult<T>> {
    let mut results: Vec<EntryResult<T>> = ids.iter().map(|_| EntryResult::Unreported).collect();
    let position = |id: &str| ids.iter().position(|known| known == id);
    for (id, value) in successful {
        if let Some(i) = position(id) {
            results[i] = EntryResult::Done(value);
        }
    }
    for entry in failed {
        if let Some(i) = position(entry.id()) {
            results[i] = EntryResult::Refused {
                code: entry.code().to_owned(),
                message: entry.message().unwrap_or_default().to_owned(),
            };
        }
    }
    results
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(id: &str) -> BatchResultErrorEntry {
        BatchResultErrorEntry::builder()
            .id(id)
            .code("ReceiptHandleIsInvalid")
            .sender_fault(true)
            .build()
            .unwrap()
    }

    #[test]
    fn each_entry_gets_what_sqs_said_of_its_id() {
        let ids = positions(4);
        let done = [("2", "m2"), ("0", "m0")].into_iter();
        let results = per_entry(&ids, done, &[refused("3"), refused("7")]);
        assert_eq!(
            results,
            vec![
                EntryResult::Done("m0"),
                EntryResult::Unreported,
                EntryResult::Done("m2"),
                EntryResult::Refused {
                    code: "ReceiptHandleIsInvalid".into(),
                    message: String::new()
                },
            ]
        );
        let items = ["a", "b", "c", "d"];
        assert_eq!(unconfirmed(&items, &results).collect::<Vec<_>>(), [&"b", &"d"]);
    }
}
