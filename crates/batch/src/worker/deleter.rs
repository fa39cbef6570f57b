//! Deletes each message as soon as its outcome acknowledges it, rather than
//! when its whole batch is over: a slow sibling, a cut-off or a drain never
//! sends a finished message round again. What is settled within
//! [`LINGER`] of the first, across batches, goes out in one
//! `DeleteMessageBatch` of up to ten: SQS bills a batch call as one request,
//! so the saving of deleting by batch is kept.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use std::time::Duration;

use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinSet;
use tokio::time::{Instant, timeout_at};
use tracing::warn;

use crate::worker::queue::{MAX_BATCH, WorkQueue};

/// How long a settled message waits for others to share its delete call: far
/// below any lease, and above the few milliseconds a batch's fast messages
/// finish apart.
pub(crate) const LINGER: Duration = Duration::from_millis(50);

enum Request {
    Delete(String),
    /// Answered once every delete asked for before it has been made.
    Flush(oneshot::Sender<()>),
}

/// What the deleter did, for the summary line.
#[derive(Debug, Default)]
pub(crate) struct Deleted {
    pub(crate) deleted: AtomicU64,
    /// Refused twice: those messages come back.
    pub(crate) undeleted: AtomicU64,
}

/// The handle the worker settles messages through.
#[derive(Debug, Clone)]
pub(crate) struct Deleter {
    requests: mpsc::UnboundedSender<Request>,
    pub(crate) counts: Arc<Deleted>,
}

impl Deleter {
    /// Starts deleting from `queue`.
    pub(crate) fn start(queue: WorkQueue) -> Self {
        let (requests, receiver) = mpsc::unbounded_channel();
        let counts = Arc::new(Deleted::default());
        tokio::spawn(run(queue, receiver, counts.clone()));
        Self { requests, counts }
    }

    /// Deletes the message of `receipt_handle` soon.
    pub(crate) fn delete(&self, receipt_handle: String) {
        let _ = self.requests.send(Request::Delete(receipt_handle));
    }

    /// Waits until every delete asked for so far has been made (or refused).
    pub(crate) async fn flush(&self) {
        let (done, wait) = oneshot::channel();
        if self.requests.send(Request::Flush(done)).is_ok() {
            let _ = wait.await;
        }
    }
}

async fn run(
    queue: WorkQueue,
    mut requests: mpsc::UnboundedReceiver<Request>,
    counts: Arc<Deleted>,
) {
    let mut calls = JoinSet::new();
    while let Some(request) = requests.recv().await {
        let mut batch = Vec::with_capacity(MAX_BATCH);
        let mut flush = None;
        match request {
            Request::Delete(handle) => batch.push(handle),
            Request::Flush(done) => flush = Some(done),
        }
        // What else is settled within the linger joins this call; a flush sends at once.
        let linger = Instant::now() + LINGER;
        while batch.len() < MAX_BATCH && flush.is_none() {
            match timeout_at(linger, requests.recv()).await {
                Ok(Some(Request::Delete(handle))) => batch.push(handle),
                Ok(Some(Request::Flush(done))) => flush = Some(done),
                Ok(None) | Err(_) => break,
            }
        }
        if !batch.is_empty() {
            let (queue, counts) = (queue.clone(), counts.clone());
            calls.spawn(async move {
                let undeleted = queue.delete(&batch).await;
                if !undeleted.is_empty() {
                    warn!(
                        count = undeleted.len(),
                        "deletes refused twice; those messages will come back (their idempotency keys make the repeat harmless)"
                    );
                }
                let deleted = batch.len() - undeleted.len();
                counts.deleted.fetch_add(deleted as u64, Ordering::Relaxed);
                counts.undeleted.fetch_add(undeleted.len() as u64, Ordering::Relaxed);
            });
        }
        // Finished calls are reaped as we go; a flush waits for all of them.
        while calls.try_join_next().is_some() {}
        if let Some(done) = flush {
            while calls.join_next().await.is_some() {}
            let _ = done.send(());
        }
    }
    while calls.join_next().await.is_some() {}
}
