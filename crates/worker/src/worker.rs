//! The worker: pollers feed received batches to the library's engine, at
//! most `WORKER_MAX_IN_FLIGHT` messages at a time; a heartbeat renews the
//! lease of every message still in work; SIGTERM drains.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use backpressure_batch::{
    BatchProcessor, Body, Outcome, Processor, QuarantineStore, RecordOutcome, SqsRecord,
};
use backpressure_core::error::error_chain;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tokio::time::{Instant, sleep, timeout_at};
use tracing::{error, info, warn};

use crate::config::WorkerConfig;
use crate::protection::Protection;
use crate::queue::{MAX_BATCH, WorkQueue};

/// SQS's limit on a message's visibility, counted from its first receipt.
const MAX_LEASE: Duration = Duration::from_secs(12 * 3600);

/// A message received and not yet settled.
#[derive(Debug)]
struct Lease {
    message_id: String,
    first_received: SystemTime,
    expires: Instant,
    /// A renewal was refused: SQS may already have handed the message to
    /// another consumer, so this worker's result must not delete it.
    lost: bool,
}

/// Counts for the summary line and the metrics.
#[derive(Debug, Default)]
struct Counts {
    received: AtomicU64,
    deleted: AtomicU64,
    retried: AtomicU64,
    released: AtomicU64,
    lost: AtomicU64,
    receives_empty: AtomicU64,
}

impl Counts {
    fn add(counter: &AtomicU64, n: usize) {
        counter.fetch_add(n as u64, Ordering::Relaxed);
    }
}

/// One worker process.
#[derive(Debug)]
pub struct Worker<P, Q, B> {
    queue: WorkQueue,
    batch: BatchProcessor<P, Q, B>,
    config: WorkerConfig,
    in_flight: Arc<Semaphore>,
    leases: Mutex<HashMap<String, Lease>>,
    counts: Counts,
    protection: Option<Protection>,
    /// Whether any message is in work, for task scale-in protection.
    busy: watch::Sender<bool>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<B, P, Q> Worker<P, Q, B>
where
    B: Body + 'static,
    P: Processor<B> + 'static,
    Q: QuarantineStore + 'static,
{
    /// A worker for `queue`, running `batch`; `protection` when on ECS.
    pub fn new(
        queue: WorkQueue,
        batch: BatchProcessor<P, Q, B>,
        config: WorkerConfig,
        protection: Option<Protection>,
    ) -> Self {
        let in_flight = Arc::new(Semaphore::new(config.max_in_flight));
        Self {
            queue,
            batch,
            config,
            in_flight,
            leases: Mutex::default(),
            counts: Counts::default(),
            protection,
            busy: watch::Sender::new(false),
        }
    }

    /// Works until `stop` turns true, then drains; `hurry` turning true
    /// (a second signal) ends the drain at once.
    pub async fn run(
        self: Arc<Self>,
        stop: watch::Receiver<bool>,
        mut hurry: watch::Receiver<bool>,
    ) {
        let heartbeat = tokio::spawn(self.clone().heartbeat());
        if let Some(protection) = self.protection.clone() {
            tokio::spawn(protection.follow(self.busy.subscribe()));
        }
        let pollers: Vec<_> = (0..self.config.pollers)
            .map(|_| tokio::spawn(self.clone().poll(stop.clone())))
            .collect();
        let mut stopped = stop.clone();
        let _ = stopped.wait_for(|stop| *stop).await;
        let started = Instant::now();
        let deadline = started + self.config.drain;
        info!(drain_seconds = self.config.drain.as_secs(), "SIGTERM: receiving stopped, draining");
        // Pollers finish the receive they are in, and release what it returns.
        for poller in pollers {
            let _ = timeout_at(deadline, poller).await;
        }
        let all = u32::try_from(self.config.max_in_flight).unwrap_or(u32::MAX);
        tokio::select! {
            _ = timeout_at(deadline, self.in_flight.acquire_many(all)) => {}
            _ = hurry.wait_for(|hurry| *hurry) => warn!("second signal: the drain is cut short"),
        }
        heartbeat.abort();
        let unfinished: Vec<(String, Duration)> =
            lock(&self.leases).drain().map(|(handle, _)| (handle, Duration::ZERO)).collect();
        self.busy.send_replace(false);
        let refused = self.queue.set_visibility(&unfinished).await;
        Counts::add(&self.counts.released, unfinished.len() - refused.len());
        if !refused.is_empty() {
            warn!(
                count = refused.len(),
                "unfinished messages could not be released; they return at their visibility timeout"
            );
        }
        self.summary(started.elapsed());
    }

    async fn poll(self: Arc<Self>, mut stop: watch::Receiver<bool>) {
        while !*stop.borrow() {
            // No receive while the pipeline is full; a stop ends the wait.
            let permits = tokio::select! {
                permits = self.in_flight.clone().acquire_many_owned(MAX_BATCH as u32) => {
                    let Ok(permits) = permits else { return };
                    permits
                }
                _ = stop.wait_for(|stop| *stop) => return,
            };
            let records = match self.queue.receive(MAX_BATCH).await {
                Ok(records) => records,
                Err(error) => {
                    warn!(error = %error_chain(&error), "ReceiveMessage failed; polling again in 1 s");
                    sleep(Duration::from_secs(1)).await;
                    continue;
                }
            };
            if records.is_empty() {
                Counts::add(&self.counts.receives_empty, 1);
                continue;
            }
            Counts::add(&self.counts.received, records.len());
            if *stop.borrow() {
                self.release(&records).await;
                return;
            }
            self.lease(&records);
            tokio::spawn(self.clone().work(records, permits));
        }
    }

    fn lease(&self, records: &[SqsRecord]) {
        let now = SystemTime::now();
        let expires = Instant::now() + self.config.visibility_timeout;
        let mut leases = lock(&self.leases);
        for record in records {
            let Some(handle) = record.receipt_handle.clone() else { continue };
            let first_received = record
                .first_receive_timestamp_ms()
                .map_or(now, |ms| UNIX_EPOCH + Duration::from_millis(ms));
            let message_id = record.message_id.clone().unwrap_or_default();
            leases.insert(handle, Lease { message_id, first_received, expires, lost: false });
        }
        if !leases.is_empty() {
            self.busy.send_if_modified(|busy| !std::mem::replace(busy, true));
        }
    }

    async fn release(&self, records: &[SqsRecord]) {
        let handles: Vec<(String, Duration)> = records
            .iter()
            .filter_map(|r| Some((r.receipt_handle.clone()?, Duration::ZERO)))
            .collect();
        let refused = self.queue.set_visibility(&handles).await;
        Counts::add(&self.counts.released, handles.len() - refused.len());
    }

    /// One received batch through the engine, then settled on the queue.
    async fn work(self: Arc<Self>, records: Vec<SqsRecord>, permits: OwnedSemaphorePermit) {
        let deadline = Instant::now() + self.config.message_timeout;
        let report = match self.batch.process_report(&records, deadline).await {
            Ok(report) => report,
            Err(error) => {
                error!(error = %error, "the batch cannot be reported message by message; releasing it");
                self.unlease(records.iter().filter_map(|r| r.receipt_handle.as_deref()));
                self.release(&records).await;
                return;
            }
        };
        let (settled, retried): (Vec<&RecordOutcome<'_>>, Vec<&RecordOutcome<'_>>) = report
            .outcomes
            .iter()
            .partition(|o| matches!(o.outcome, Outcome::Done | Outcome::Quarantined { .. }));
        let lost = self.unlease(records.iter().filter_map(|r| r.receipt_handle.as_deref()));
        let deletable: Vec<String> = settled
            .iter()
            .filter_map(|o| o.record.receipt_handle.clone())
            .filter(|handle| !lost.contains(handle))
            .collect();
        let undeleted = self.queue.delete(&deletable).await;
        if !undeleted.is_empty() {
            warn!(
                count = undeleted.len(),
                "deletes refused twice; those messages will come back (their idempotency keys make the repeat harmless)"
            );
        }
        Counts::add(&self.counts.deleted, deletable.len() - undeleted.len());
        Counts::add(&self.counts.retried, retried.len());
        // FIFO: a retried message and the rest of its group go back at once,
        // so the group's order is kept; standard queues keep the backoff.
        if self.queue.is_fifo() {
            let back: Vec<(String, Duration)> = retried
                .iter()
                .filter_map(|o| Some((o.record.receipt_handle.clone()?, Duration::ZERO)))
                .collect();
            let _ = self.queue.set_visibility(&back).await;
        }
        drop(permits);
    }

    /// Stops renewing these leases; returns the handles of those that were lost.
    fn unlease<'a>(&self, handles: impl Iterator<Item = &'a str>) -> Vec<String> {
        let mut leases = lock(&self.leases);
        let mut lost = Vec::new();
        for handle in handles {
            if let Some(lease) = leases.remove(handle).filter(|l| l.lost) {
                warn!(message_id = %lease.message_id, "its lease was lost: its result does not delete it");
                Counts::add(&self.counts.lost, 1);
                lost.push(handle.to_owned());
            }
        }
        if leases.is_empty() {
            self.busy.send_if_modified(|busy| std::mem::replace(busy, false));
        }
        lost
    }

    /// Renews, before it runs out, the lease of every message still in work,
    /// never past 12 hours from its first receipt.
    async fn heartbeat(self: Arc<Self>) {
        let visibility = self.config.visibility_timeout;
        loop {
            sleep(visibility / 3).await;
            let now = Instant::now();
            let renewals: Vec<(String, Duration)> = lock(&self.leases)
                .iter()
                .filter(|(_, lease)| !lease.lost && lease.expires <= now + visibility / 2)
                .map(|(handle, lease)| {
                    let age =
                        SystemTime::now().duration_since(lease.first_received).unwrap_or_default();
                    (handle.clone(), visibility.min(MAX_LEASE.saturating_sub(age)))
                })
                .collect();
            if renewals.is_empty() {
                continue;
            }
            let refused = self.queue.set_visibility(&renewals).await;
            let mut leases = lock(&self.leases);
            for (handle, extension) in &renewals {
                if let Some(lease) = leases.get_mut(handle) {
                    if refused.contains(handle) || extension.is_zero() {
                        lease.lost = true;
                    } else {
                        lease.expires = now + *extension;
                    }
                }
            }
        }
    }

    fn summary(&self, drain: Duration) {
        let count = |c: &AtomicU64| c.load(Ordering::Relaxed);
        info!(
            received = count(&self.counts.received),
            deleted = count(&self.counts.deleted),
            retried = count(&self.counts.retried),
            released = count(&self.counts.released),
            lost = count(&self.counts.lost),
            receives_empty = count(&self.counts.receives_empty),
            drain_ms = drain.as_millis() as u64,
            "worker stopped"
        );
    }
}
