//! The worker: pollers feed received batches to the batch processor, at
//! most `max_in_flight` messages at a time; a heartbeat renews the lease of
//! every message still in work; SIGTERM drains.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::backoff::VisibilityChange;
use crate::quarantine::QuarantineStore;
use crate::{BatchProcessor, Body, Processor, record::SqsRecord};
use backpressure_core::error::error_chain;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tokio::time::{Instant, sleep, timeout_at};
use tracing::{error, info, warn};

use crate::worker::deleter::Deleter;
use crate::worker::groups::Groups;
use crate::worker::health::Stamp;
use crate::worker::leases::{Leases, Unleased, release_now};
use crate::worker::metrics::Counts;
use crate::worker::protection::Protection;
use crate::worker::queue::{MAX_BATCH, WorkQueue};
use crate::worker::settings::Settings;
use crate::worker::signals::listen;

/// A long-running consumer of one SQS queue, running each received batch
/// through a [`BatchProcessor`]; built by [`Worker::builder`], started by
/// [`Worker::run`].
#[derive(Debug)]
pub struct Worker<P, Q, B> {
    queue: WorkQueue,
    batch: BatchProcessor<P, Q, B>,
    config: Settings,
    in_flight: Arc<Semaphore>,
    leases: Arc<Leases>,
    counts: Counts,
    protection: Option<Protection>,
    health: Stamp,
    namespace: Option<String>,
    /// FIFO: the message groups some batch is working on.
    groups: Groups,
    deleter: Deleter,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Ended {
    /// Drained: every receive returned, the work in hand finished or released.
    Drained,
    /// A third signal: the receives under way were not waited for.
    Quit,
}

impl<B, P, Q> Worker<P, Q, B>
where
    B: Body + 'static,
    P: Processor<B> + 'static,
    Q: QuarantineStore + 'static,
{
    /// A worker for `queue`, running `batch`, which holds its renewed claims
    /// in `leases`; `protection` when on ECS.
    pub(crate) fn new(
        queue: WorkQueue,
        batch: BatchProcessor<P, Q, B>,
        leases: Arc<Leases>,
        config: Settings,
        protection: Option<Protection>,
        health: Stamp,
        namespace: Option<String>,
    ) -> Self {
        let in_flight = Arc::new(Semaphore::new(config.max_in_flight));
        let deleter = Deleter::start(queue.clone());
        Self {
            queue,
            batch,
            config,
            in_flight,
            leases,
            counts: Counts::default(),
            protection,
            health,
            namespace,
            groups: Groups::default(),
            deleter,
        }
    }

    /// Works until the first SIGTERM or SIGINT, then drains: receiving
    /// stops, the work in hand finishes within the drain's time and what
    /// finished is deleted. A second signal cuts the drain short (the work in
    /// hand is released at once); a third ends the wait for the receives
    /// under way ([`Ended::Quit`]). Fails only if the signals cannot be
    /// listened for.
    pub async fn run(self) -> std::io::Result<Ended> {
        let [stop, hurry, quit] = listen()?;
        Ok(Arc::new(self).run_until(stop, hurry, quit).await)
    }

    /// Works until `stop` turns true, then drains. `hurry` turning true (a
    /// second signal) ends the drain at once: the work in hand is released
    /// then, and what the receives under way return as they return. `quit`
    /// (a third) ends the wait for those receives: [`Ended::Quit`].
    async fn run_until(
        self: Arc<Self>,
        stop: watch::Receiver<bool>,
        mut hurry: watch::Receiver<bool>,
        mut quit: watch::Receiver<bool>,
    ) -> Ended {
        let beating = self.clone();
        let heartbeat = tokio::spawn(async move { beating.heartbeat().await });
        let metrics = tokio::spawn(self.clone().report_every(Duration::from_secs(60)));
        if let Some(protection) = self.protection.clone() {
            tokio::spawn(protection.follow(self.leases.busy()));
        }
        let mut pollers = futures::future::join_all(
            (0..self.config.pollers).map(|_| tokio::spawn(self.clone().poll(stop.clone()))),
        );
        let mut stopped = stop.clone();
        let _ = stopped.wait_for(|stop| *stop).await;
        let started = Instant::now();
        let deadline = started + self.config.drain;
        info!(drain_seconds = self.config.drain.as_secs(), "SIGTERM: receiving stopped, draining");
        if self.leases.len() == 0 {
            info!("nothing in work: the long polls under way are abandoned, not waited out");
        }
        // Pollers finish the receive they are in and release what it returns;
        // then the work in hand finishes. A second signal, or the drain's
        // budget, ends the wait for the work.
        let all = u32::try_from(self.config.max_in_flight).unwrap_or(u32::MAX);
        let mut polls_over = false;
        let drained = async {
            (&mut pollers).await;
            polls_over = true;
            let _ = self.in_flight.acquire_many(all).await;
        };
        tokio::select! {
            _ = timeout_at(deadline, drained) => {}
            _ = hurry.wait_for(|hurry| *hurry) => {
                warn!("second signal: the drain is cut short; the messages in work are released now, and what the receive under way returns as it returns");
            }
        }
        heartbeat.abort();
        metrics.abort();
        // Released before the receive under way is waited out: that receive
        // may take some of them back (one more receive each, counted towards
        // maxReceiveCount), and gives them back as it returns.
        self.release_in_hand().await;
        let mut ended = Ended::Drained;
        if !polls_over {
            // A receive abandoned mid long poll would go on at SQS and take
            // the messages just released to a connection that is gone, for a
            // whole visibility timeout; so it is waited out (at most
            // `receive_wait`), unless a third signal says not to.
            tokio::select! {
                _ = &mut pollers => {}
                _ = quit.wait_for(|quit| *quit) => {
                    error!(
                        released = self.counts.released.load(Ordering::Relaxed),
                        receives_under_way = self.config.pollers,
                        "third signal: exiting now; the messages in work were released, and only what the receives under way take is held until its visibility timeout"
                    );
                    ended = Ended::Quit;
                }
            }
        }
        // What finished is deleted before the process ends, within the drain's budget.
        let _ =
            timeout_at(deadline.max(Instant::now()) + Duration::from_secs(5), self.deleter.flush())
                .await;
        let deleted = self.deleter.counts.deleted.load(Ordering::Relaxed);
        self.counts.summary(deleted, started.elapsed());
        self.emit_metrics(Some(started.elapsed()));
        ended
    }

    /// Gives up every lease: the messages in work are visible again at once.
    async fn release_in_hand(&self) {
        let changes = self.leases.release_all();
        let refused = self.queue.set_visibility(&changes).await;
        Counts::add(&self.counts.released, changes.len() - refused.len());
        if !refused.is_empty() {
            warn!(
                count = refused.len(),
                "unfinished messages could not be released; they return at their visibility timeout"
            );
        }
    }

    /// Counts the releases SQS confirmed, each message once: one a drain
    /// gave back and a receive took again counted already.
    fn count_released(&self, ids: &[String], changes: &[VisibilityChange], refused: &[String]) {
        let confirmed = ids
            .iter()
            .zip(changes)
            .filter(|(_, change)| !refused.contains(&change.receipt_handle))
            .filter(|(id, _)| !self.leases.released_before(id));
        Counts::add(&self.counts.released, confirmed.count());
    }

    /// Renews, every third of a visibility timeout, the lease of every
    /// message in work and the idempotency claim held on it, one lease more
    /// each: a claim lasts as long as this process works on its message,
    /// and lapses within one lease of a crash (the visibility timeout, or the
    /// processor's longest side effect). One beat drives both; neither waits
    /// for the other, so a store that hangs never stops the visibility
    /// renewals (nor SQS the claims'): a renewer still busy skips the beats
    /// it misses.
    async fn heartbeat(&self) {
        let (tick, beat) = watch::channel(());
        let ticker = async {
            loop {
                sleep(self.config.visibility_timeout / 3).await;
                tick.send_replace(());
            }
        };
        let mut visibility_beat = beat.clone();
        let visibility = async {
            while visibility_beat.changed().await.is_ok() {
                self.leases.renew_visibility(&self.queue).await;
            }
        };
        let mut claims_beat = beat;
        let claims = async {
            while claims_beat.changed().await.is_ok() {
                let failed = self.batch.renew_claims().await;
                Counts::add(&self.counts.claim_renewals_failed, failed);
            }
        };
        tokio::join!(ticker, visibility, claims);
    }

    async fn report_every(self: Arc<Self>, period: Duration) {
        loop {
            sleep(period).await;
            self.emit_metrics(None);
        }
    }

    fn emit_metrics(&self, drain: Option<Duration>) {
        if let Some(namespace) = &self.namespace {
            self.counts.emit(namespace, &self.config.queue_name, self.leases.len(), drain);
        }
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
            // Abandoned only by a stop with nothing in work (see `stopped_idle`).
            let received = tokio::select! {
                received = self.queue.receive(MAX_BATCH) => received,
                () = self.stopped_idle(&mut stop) => return,
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
            self.leases.lease(&records);
            tokio::spawn(self.clone().work(records, permits));
        }
    }

    /// Resolves when `stop` turns true while nothing is in work: then a long
    /// poll is not waited out (ECS's stop timeout, 30 s by default, holds a
    /// rolling deploy up meanwhile). An abandoned poll goes on at SQS, and
    /// what it returns to the gone connection is held for one visibility
    /// timeout and then received again; with work in hand, the releases
    /// the drain is about to make could be among it, so the poll is waited for.
    async fn stopped_idle(&self, stop: &mut watch::Receiver<bool>) {
        let _ = stop.wait_for(|stop| *stop).await;
        if self.leases.len() > 0 {
            std::future::pending::<()>().await;
        }
    }

    /// FIFO: claims each record's group for this batch (see [`Groups::claim`]).
    fn claim_groups(&self, records: Vec<SqsRecord>) -> (Vec<SqsRecord>, Vec<SqsRecord>) {
        if !self.queue.is_fifo() {
            return (records, Vec::new());
        }
        self.groups.claim(records)
    }

    async fn release(&self, records: &[SqsRecord]) {
        let (ids, changes): (Vec<String>, Vec<VisibilityChange>) = records
            .iter()
            .filter_map(|r| {
                let id = r.message_id.clone().unwrap_or_default();
                Some((id, release_now(r.receipt_handle.clone()?)))
            })
            .unzip();
        let refused = self.queue.set_visibility(&changes).await;
        self.count_released(&ids, &changes, &refused);
    }

    /// One received batch through the engine. Each message is deleted as soon
    /// as its outcome acknowledges it; the retried ones are settled after.
    async fn work(self: Arc<Self>, records: Vec<SqsRecord>, permits: OwnedSemaphorePermit) {
        let deadline = Instant::now() + self.config.message_timeout;
        let acknowledged = |index: usize| {
            let Some(handle) = records.get(index).and_then(|r| r.receipt_handle.as_deref()) else {
                return;
            };
            // A lease already given up (a drain that released it) or lost
            // (another consumer may hold the message) is not deleted.
            if self.unlease(std::iter::once(handle)) == Unleased::Held {
                self.deleter.delete(handle.to_owned());
            }
        };
        let report = match self.batch.process_acknowledging(&records, deadline, &acknowledged).await
        {
            Ok(report) => report,
            Err(error) => {
                error!(error = %error, "the batch cannot be reported message by message; releasing it");
                self.unlease(records.iter().filter_map(|r| r.receipt_handle.as_deref()));
                self.release(&records).await;
                self.groups.free(&records);
                return;
            }
        };
        // The batch processor made the retried messages' visibility changes
        // (the backoff; on FIFO queues, back at once): this only stops their leases.
        let retried: Vec<&str> = report
            .outcomes
            .iter()
            .filter(|o| o.outcome.is_retry())
            .filter_map(|o| o.record.receipt_handle.as_deref())
            .collect();
        self.unlease(retried.iter().copied());
        Counts::add(&self.counts.retried, retried.len());
        self.groups.free(&records);
        drop(permits);
    }

    /// Stops renewing these leases (see [`Leases::unlease`]).
    fn unlease<'a>(&self, handles: impl Iterator<Item = &'a str>) -> Unleased {
        let mut lost = 0;
        let unleased = self.leases.unlease(handles, &mut lost);
        Counts::add(&self.counts.lost, lost as usize);
        unleased
    }
}
