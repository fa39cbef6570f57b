//! Reading a whole queue without consuming it.
//!
//! SQS has no peek: a message can only be read by receiving it, which hides
//! it for its visibility timeout. A scan holds every message it has read (so
//! the next receive returns new ones) and releases them all, visibility 0,
//! before it returns — also when it stops on an error. Each read counts as a
//! receive in the message's `ApproximateReceiveCount`.

use std::collections::HashMap;
use std::ops::ControlFlow;

use crate::entry::Entry;
use crate::error::CliError;
use crate::queue::Queue;

/// What a scan saw.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Scanned {
    /// Distinct messages read.
    pub read: usize,
    /// Messages SQS would not release; visible again when their lease ends.
    pub not_released: usize,
}

/// Calls `visit` once for each distinct message on the queue until the queue
/// has no more visible messages or `visit` breaks, then releases them all.
pub async fn scan(
    queue: &Queue,
    mut visit: impl FnMut(Entry) -> ControlFlow<()>,
) -> Result<Scanned, CliError> {
    // The newest receipt handle of each message read: an older one stops
    // working when a message is received again.
    let mut held: HashMap<String, String> = HashMap::new();
    let outcome = async {
        loop {
            let batch = queue.receive(10).await?;
            if batch.is_empty() {
                return Ok(());
            }
            // Every message of the batch is held before any is visited, so
            // one `visit` stopping the scan still releases the rest.
            let fresh: Vec<Entry> = batch
                .into_iter()
                .filter(|e| {
                    let handle = e.receipt_handle.clone();
                    held.insert(e.queue_message_id.clone(), handle).is_none()
                })
                .collect();
            let new = fresh.len();
            for entry in fresh {
                if visit(entry).is_break() {
                    return Ok(());
                }
            }
            // Only messages already read: their leases ran out during a long scan.
            if new == 0 {
                return Ok(());
            }
        }
    }
    .await;
    let handles: Vec<&str> = held.values().map(String::as_str).collect();
    let released = queue.release(&handles).await;
    outcome?;
    Ok(Scanned { read: held.len(), not_released: released? })
}
