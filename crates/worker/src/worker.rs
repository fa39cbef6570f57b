//! The worker: pollers feed received batches to the library's engine, at
//! most `WORKER_MAX_IN_FLIGHT` messages at a time; a heartbeat renews the
//! lease of every message still in work; SIGTERM drains.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use backpressure_batch::backoff::VisibilityChange;
use backpressure_batch::quarantine::QuarantineStore;
use backpressure_batch::report::RecordOutcome;
use backpressure_batch::{BatchProcessor, Body, Processor, SqsRecord};
use backpressure_core::error::error_chain;
use backpressure_startup::emf::{self, Document};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tokio::time::{Instant, sleep, timeout_at};
use tracing::{error, info, warn};

use crate::config::WorkerConfig;
use crate::deleter::Deleter;
use crate::groups::claim;
use crate::health::Stamp;
use crate::lease::{Lease, MAX_LEASE, Unleased, release_now};
use crate::protection::Protection;
use crate::queue::{MAX_BATCH, WorkQueue};

/// Counts for the summary line and the metrics.
#[derive(Debug, Default)]
struct Counts {
    received: AtomicU64,
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
    health: Stamp,
    namespace: String,
    /// FIFO: the message groups some batch is working on.
    groups: Mutex<HashSet<String>>,
    deleter: Deleter,
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
        health: Stamp,
        namespace: String,
    ) -> Self {
        let in_flight = Arc::new(Semaphore::new(config.max_in_flight));
        let deleter = Deleter::start(queue.clone());
        Self {
            queue,
            batch,
            config,
            in_flight,
            leases: Mutex::default(),
            counts: Counts::default(),
            protection,
            busy: watch::Sender::new(false),
            health,
            namespace,
            groups: Mutex::default(),
            deleter,
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
        let metrics = tokio::spawn(self.clone().report_every(Duration::from_secs(60)));
        if let Some(protection) = self.protection.clone() {
            tokio::spawn(protection.follow(self.busy.subscribe()));
        }
        let pollers: Vec<_> = (0..self.config.pollers)
            .map(|_| tokio::spawn(self.clone().poll(stop.clone(), hurry.clone())))
            .collect();
        let mut stopped = stop.clone();
        let _ = stopped.wait_for(|stop| *stop).await;
        let started = Instant::now();
        let deadline = started + self.config.drain;
        info!(drain_seconds = self.config.drain.as_secs(), "SIGTERM: receiving stopped, draining");
        // Pollers finish the receive they are in and release what it returns;
        // then the work in hand finishes. A second signal ends either wait.
        let all = u32::try_from(self.config.max_in_flight).unwrap_or(u32::MAX);
        let drained = async {
            for poller in pollers {
                let _ = poller.await;
            }
            let _ = self.in_flight.acquire_many(all).await;
        };
        tokio::select! {
            _ = timeout_at(deadline, drained) => {}
            _ = hurry.wait_for(|hurry| *hurry) => {
                warn!("second signal: the drain is cut short; unfinished messages are released now");
            }
        }
        heartbeat.abort();
        metrics.abort();
        let unfinished: Vec<VisibilityChange> =
            lock(&self.leases).drain().map(|(handle, _)| release_now(handle)).collect();
        self.busy.send_replace(false);
        // What finished is deleted before the process ends, within the drain's budget.
        let _ =
            timeout_at(deadline.max(Instant::now()) + Duration::from_secs(5), self.deleter.flush())
                .await;
        let refused = self.queue.set_visibility(&unfinished).await;
        Counts::add(&self.counts.released, unfinished.len() - refused.len());
        if !refused.is_empty() {
            warn!(
                count = refused.len(),
                "unfinished messages could not be released; they return at their visibility timeout"
            );
        }
        self.summary(started.elapsed());
        self.emit_metrics(Some(started.elapsed()));
    }

    async fn report_every(self: Arc<Self>, period: Duration) {
        loop {
            sleep(period).await;
            self.emit_metrics(None);
        }
    }

    /// EMF on stdout: messages in flight, empty receives since the last
    /// document, and the drain's duration once it is over.
    fn emit_metrics(&self, drain: Option<Duration>) {
        let in_flight = lock(&self.leases).len();
        let empty = self.counts.receives_empty.swap(0, Ordering::Relaxed);
        let mut document = Document::new(&self.namespace, SystemTime::now())
            .dimension("QueueName", self.config.queue.name())
            .metric("MessagesInFlight", "Count", in_flight)
            .metric("ReceivesEmpty", "Count", empty);
        if let Some(drain) = drain {
            document =
                document.metric("DrainDurationMs", "Milliseconds", drain.as_secs_f64() * 1000.0);
        }
        emf::emit(&[document]);
    }

    async fn poll(
        self: Arc<Self>,
        mut stop: watch::Receiver<bool>,
        mut hurry: watch::Receiver<bool>,
    ) {
        while !*stop.borrow() {
            // No receive while the pipeline is full; a stop ends the wait.
            let permits = tokio::select! {
                permits = self.in_flight.clone().acquire_many_owned(MAX_BATCH as u32) => {
                    let Ok(permits) = permits else { return };
                    permits
                }
                _ = stop.wait_for(|stop| *stop) => return,
            };
            let received = tokio::select! {
                received = self.queue.receive(MAX_BATCH) => received,
                // A second signal: the long poll is abandoned. SQS keeps what it
                // handed to an abandoned request invisible for its visibility
                // timeout, then hands it out again: delayed, never lost.
                _ = hurry.wait_for(|hurry| *hurry) => return,
            };
            let records = match received {
                Ok(records) => {
                    self.health.poll_succeeded();
                    records
                }
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
            let (records, taken) = self.claim_groups(records);
            if !taken.is_empty() {
                // SQS holds a group back while one of its messages is in
                // flight; should a message still come (a lease lost, an
                // emulator), it goes back rather than overtake its group.
                self.release(&taken).await;
            }
            if records.is_empty() {
                continue;
            }
            self.lease(&records);
            tokio::spawn(self.clone().work(records, permits));
        }
    }

    /// FIFO: claims each record's group for this batch (see [`claim`]).
    fn claim_groups(&self, records: Vec<SqsRecord>) -> (Vec<SqsRecord>, Vec<SqsRecord>) {
        if !self.queue.is_fifo() {
            return (records, Vec::new());
        }
        claim(&mut lock(&self.groups), records)
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
        let handles: Vec<VisibilityChange> =
            records.iter().filter_map(|r| Some(release_now(r.receipt_handle.clone()?))).collect();
        let refused = self.queue.set_visibility(&handles).await;
        Counts::add(&self.counts.released, handles.len() - refused.len());
    }

    /// One received batch through the engine. Each message is deleted as soon
    /// as its outcome acknowledges it; the retried ones are settled after.
    async fn work(self: Arc<Self>, records: Vec<SqsRecord>, permits: OwnedSemaphorePermit) {
        let deadline = Instant::now() + self.config.message_timeout;
        let settled = |index: usize| {
            let Some(handle) = records.get(index).and_then(|r| r.receipt_handle.as_deref()) else {
                return;
            };
            // A lease already given up (a drain that released it) or lost
            // (another consumer may hold the message) is not deleted.
            if self.unlease(std::iter::once(handle)) == Unleased::Held {
                self.deleter.delete(handle.to_owned());
            }
        };
        let report = match self.batch.process_report_settling(&records, deadline, &settled).await {
            Ok(report) => report,
            Err(error) => {
                error!(error = %error, "the batch cannot be reported message by message; releasing it");
                self.unlease(records.iter().filter_map(|r| r.receipt_handle.as_deref()));
                self.release(&records).await;
                self.free_groups(&records);
                return;
            }
        };
        let retried: Vec<&RecordOutcome<'_>> =
            report.outcomes.iter().filter(|o| o.outcome.is_retry()).collect();
        self.unlease(retried.iter().filter_map(|o| o.record.receipt_handle.as_deref()));
        Counts::add(&self.counts.retried, retried.len());
        // FIFO: a retried message and the rest of its group go back at once,
        // so the group's order is kept; standard queues keep the backoff.
        if self.queue.is_fifo() {
            let back: Vec<VisibilityChange> = retried
                .iter()
                .filter_map(|o| Some(release_now(o.record.receipt_handle.clone()?)))
                .collect();
            let _ = self.queue.set_visibility(&back).await;
        }
        self.free_groups(&records);
        drop(permits);
    }

    /// The groups of a settled batch, free for the next.
    fn free_groups(&self, records: &[SqsRecord]) {
        let mut groups = lock(&self.groups);
        for record in records {
            if let Some(group) = record.message_group_id() {
                groups.remove(group);
            }
        }
    }

    /// Stops renewing these leases; says whether the last was still held,
    /// lost (its result must not delete it), or already given up.
    fn unlease<'a>(&self, handles: impl Iterator<Item = &'a str>) -> Unleased {
        let mut leases = lock(&self.leases);
        let mut last = Unleased::Gone;
        for handle in handles {
            last = match leases.remove(handle) {
                Some(lease) if lease.lost => {
                    warn!(message_id = %lease.message_id, "its lease was lost: its result does not delete it");
                    Counts::add(&self.counts.lost, 1);
                    Unleased::Lost
                }
                Some(_) => Unleased::Held,
                None => Unleased::Gone,
            };
        }
        if leases.is_empty() {
            self.busy.send_if_modified(|busy| std::mem::replace(busy, false));
        }
        last
    }

    /// Renews, before it runs out, the lease of every message still in work,
    /// never past 12 hours from its first receipt.
    async fn heartbeat(self: Arc<Self>) {
        let visibility = self.config.visibility_timeout;
        loop {
            sleep(visibility / 3).await;
            let (now, wall_now) = (Instant::now(), SystemTime::now());
            let renewals: Vec<VisibilityChange> = lock(&self.leases)
                .iter()
                .filter(|(_, lease)| !lease.lost && lease.expires <= now + visibility / 2)
                .map(|(handle, lease)| {
                    let age = wall_now.duration_since(lease.first_received).unwrap_or_default();
                    VisibilityChange {
                        receipt_handle: handle.clone(),
                        timeout: visibility.min(MAX_LEASE.saturating_sub(age)),
                    }
                })
                .collect();
            if renewals.is_empty() {
                continue;
            }
            let refused = self.queue.set_visibility(&renewals).await;
            let refused: HashSet<&str> = refused.iter().map(String::as_str).collect();
            let mut leases = lock(&self.leases);
            for VisibilityChange { receipt_handle, timeout } in &renewals {
                if let Some(lease) = leases.get_mut(receipt_handle) {
                    if refused.contains(receipt_handle.as_str()) || timeout.is_zero() {
                        lease.lost = true;
                    } else {
                        lease.expires = now + *timeout;
                    }
                }
            }
        }
    }

    fn summary(&self, drain: Duration) {
        let count = |c: &AtomicU64| c.load(Ordering::Relaxed);
        info!(
            received = count(&self.counts.received),
            deleted = count(&self.deleter.counts.deleted),
            retried = count(&self.counts.retried),
            released = count(&self.counts.released),
            lost = count(&self.counts.lost),
            receives_empty = count(&self.counts.receives_empty),
            drain_ms = drain.as_millis() as u64,
            "worker stopped"
        );
    }
}
