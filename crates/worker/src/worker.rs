//! The worker: pollers feed received batches to the library's engine, at
//! most `WORKER_MAX_IN_FLIGHT` messages at a time; a heartbeat renews the
//! lease of every message still in work; SIGTERM drains.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use backpressure_batch::{
    BatchProcessor, Body, Outcome, Processor, QuarantineStore, RecordOutcome, SqsRecord,
};
use backpressure_core::consumer::backoff::VisibilityChange;
use backpressure_core::error::error_chain;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tokio::time::{Instant, sleep, timeout_at};
use tracing::{error, info, warn};

use crate::config::WorkerConfig;
use crate::health::Stamp;
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
    health: Stamp,
    namespace: String,
    /// FIFO: the message groups some batch is working on.
    groups: Mutex<HashSet<String>>,
}

/// Claims each record's message group for one batch: returns the records it
/// may work on and, apart, those whose group another batch holds (`held`).
fn claim(held: &mut HashSet<String>, records: Vec<SqsRecord>) -> (Vec<SqsRecord>, Vec<SqsRecord>) {
    let mut claimed = HashSet::new();
    let (mut mine, mut taken) = (Vec::new(), Vec::new());
    for record in records {
        match record.message_group_id().map(str::to_owned) {
            Some(group) if claimed.contains(&group) => mine.push(record),
            Some(group) if held.contains(&group) => taken.push(record),
            Some(group) => {
                held.insert(group.clone());
                claimed.insert(group);
                mine.push(record);
            }
            None => mine.push(record),
        }
    }
    (mine, taken)
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
        metrics.abort();
        let unfinished: Vec<VisibilityChange> =
            lock(&self.leases).drain().map(|(handle, _)| release_now(handle)).collect();
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
        let timestamp = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        let mut metrics = vec![
            serde_json::json!({"Name": "MessagesInFlight", "Unit": "Count"}),
            serde_json::json!({"Name": "ReceivesEmpty", "Unit": "Count"}),
        ];
        let mut document = serde_json::json!({
            "QueueName": self.config.queue.name(),
            "MessagesInFlight": in_flight,
            "ReceivesEmpty": empty,
        });
        if let Some(drain) = drain {
            metrics.push(serde_json::json!({"Name": "DrainDurationMs", "Unit": "Milliseconds"}));
            document["DrainDurationMs"] = serde_json::json!(drain.as_secs_f64() * 1000.0);
        }
        document["_aws"] = serde_json::json!({
            "Timestamp": timestamp.as_millis() as u64,
            "CloudWatchMetrics": [{"Namespace": self.namespace, "Dimensions": [["QueueName"]], "Metrics": metrics}],
        });
        println!("{document}");
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

    /// One received batch through the engine, then settled on the queue.
    async fn work(self: Arc<Self>, records: Vec<SqsRecord>, permits: OwnedSemaphorePermit) {
        let deadline = Instant::now() + self.config.message_timeout;
        let report = match self.batch.process_report(&records, deadline).await {
            Ok(report) => report,
            Err(error) => {
                error!(error = %error, "the batch cannot be reported message by message; releasing it");
                self.unlease(records.iter().filter_map(|r| r.receipt_handle.as_deref()));
                self.release(&records).await;
                self.free_groups(&records);
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

/// Back on the queue at once.
fn release_now(receipt_handle: String) -> VisibilityChange {
    VisibilityChange { receipt_handle, timeout: Duration::ZERO }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn record(id: &str, group: &str) -> SqsRecord {
        let mut record = SqsRecord { message_id: Some(id.into()), ..Default::default() };
        record.attributes.insert("MessageGroupId".into(), json!(group));
        record
    }

    fn ids(records: &[SqsRecord]) -> Vec<&str> {
        records.iter().filter_map(|r| r.message_id.as_deref()).collect()
    }

    #[test]
    fn a_group_another_batch_holds_is_given_back_whole() {
        let mut held = HashSet::from(["b".to_owned()]);
        let batch =
            vec![record("a1", "a"), record("b5", "b"), record("a2", "a"), record("b6", "b")];
        let (mine, taken) = claim(&mut held, batch);
        assert_eq!((ids(&mine), ids(&taken)), (vec!["a1", "a2"], vec!["b5", "b6"]));
        assert_eq!(held, HashSet::from(["a".to_owned(), "b".to_owned()]));
        let (mine, taken) = claim(&mut held, vec![record("a3", "a"), record("c1", "c")]);
        assert_eq!((ids(&mine), ids(&taken)), (vec!["c1"], vec!["a3"]));
    }
}
