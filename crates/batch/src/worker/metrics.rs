//! What the worker counts: the summary line when it stops, and EMF documents
//! (messages in flight, empty receives, the drain's duration).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use crate::emf::{self, Document};
use tracing::info;

/// Counts for the summary line and the metrics.
#[derive(Debug, Default)]
pub(crate) struct Counts {
    pub(crate) received: AtomicU64,
    pub(crate) retried: AtomicU64,
    pub(crate) released: AtomicU64,
    pub(crate) lost: AtomicU64,
    pub(crate) receives_empty: AtomicU64,
    /// Idempotency claim renewals that failed (the batch summaries count the rest).
    pub(crate) claim_renewals_failed: AtomicU64,
}

impl Counts {
    /// Adds `n` to `counter`.
    pub(crate) fn add(counter: &AtomicU64, n: usize) {
        counter.fetch_add(n as u64, Ordering::Relaxed);
    }

    /// One EMF document: messages in flight, empty receives since the last
    /// document, and the drain's duration once it is over.
    pub(crate) fn emit(
        &self,
        namespace: &str,
        queue: &str,
        in_flight: usize,
        drain: Option<Duration>,
    ) {
        let empty = self.receives_empty.swap(0, Ordering::Relaxed);
        let renewals_failed = self.claim_renewals_failed.swap(0, Ordering::Relaxed);
        let mut document = Document::new(namespace, SystemTime::now())
            .dimension("QueueName", queue)
            .metric("MessagesInFlight", "Count", in_flight)
            .metric("ReceivesEmpty", "Count", empty)
            .metric("IdempotencyStoreErrors", "Count", renewals_failed);
        if let Some(drain) = drain {
            document =
                document.metric("DrainDurationMs", "Milliseconds", drain.as_secs_f64() * 1000.0);
        }
        emf::emit(&[document]);
    }

    /// The line the worker logs when it stops.
    pub(crate) fn summary(&self, deleted: u64, drain: Duration) {
        let count = |c: &AtomicU64| c.load(Ordering::Relaxed);
        info!(
            received = count(&self.received),
            deleted,
            retried = count(&self.retried),
            released = count(&self.released),
            lost = count(&self.lost),
            receives_empty = count(&self.receives_empty),
            drain_ms = drain.as_millis() as u64,
            "worker stopped"
        );
    }
}
