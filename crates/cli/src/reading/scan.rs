//! Reading a whole queue without consuming it, and saying when it could not.
//!
//! SQS has no peek: a message can only be read by receiving it, which hides
//! it for its visibility timeout. A scan holds every message it has read (so
//! the next receive returns new ones) and releases them all, visibility 0,
//! before it returns — also when it stops on an error. Each read counts as a
//! receive in the message's `ApproximateReceiveCount`.
//!
//! On a FIFO queue the held messages lock their groups, so without a
//! [`Mover`] a scan reads at most the first messages of each group. Every
//! scan compares what it read with the queue's own count taken before it
//! started; [`Scanned::shortfall`] says what is missing.

use std::ops::ControlFlow;
use std::sync::Mutex;

use backpressure_core::sync::{into_inner, lock};

use futures::stream::FuturesOrdered;
use futures::{FutureExt, StreamExt};
use indicatif::ProgressBar;
use tokio::time::Instant;

use crate::aws::queue::Queue;
use crate::reading::entry::Entry;
use crate::reading::lease::{self, Holding, lease_of};
use crate::reading::rotate::Mover;
use crate::reading::scanned::Scanned;
use crate::reading::spill::Keys;
use crate::terminal::error::CliError;

/// Receives a scan of a standard queue keeps under way at once. Measured on fauxqs (one thread, like
/// a busy SQS partition): one at a time leaves SQS idle while a batch is stored; three keep it
/// busy (`bench/run.sh scale`, docs/performance.md).
const RECEIVES_IN_FLIGHT: usize = 3;

/// The mover a scan of `queue` uses, when it moves groups ([`Queue::moves_groups`]).
pub(crate) async fn mover_for(queue: &Queue) -> Result<Option<Mover>, CliError> {
    if queue.moves_groups() { Ok(Some(Mover::new(queue).await?)) } else { Ok(None) }
}

/// Calls `visit` once for each distinct message on the queue until the queue
/// has no more visible messages or `visit` breaks, then releases what it
/// holds. With a `mover` (FIFO queues), each message read is moved to the end
/// of its group instead of held, and the scan reads every group to its end;
/// a `visit` that breaks then only stops visiting, so that every group it
/// started to move ends in its order.
pub(crate) async fn scan(
    queue: &Queue,
    mover: Option<&Mover>,
    visit: impl FnMut(Entry) -> ControlFlow<()>,
) -> Result<Scanned, CliError> {
    let state = queue.state().await?;
    if let Some(redrive) = &state.redrive {
        eprintln!("{}", redrive.note(&queue.url));
    }
    let (counted, in_flight) = (state.visible, state.in_flight);
    let visible_again = queue.when_visible(state.timeout);
    let scanned =
        Scanned { counted, in_flight, visible_again, lease: queue.lease, ..Scanned::default() };
    let progress = crate::terminal::progress::bar(counted, "read");
    // Per message: its id and receipt handle, on disk past a bound (`crate::reading::spill`).
    let holding = Mutex::new(Holding::new()?);
    let mut reading = Reading {
        queue,
        mover,
        holding: &holding,
        read: Keys::new()?,
        scanned,
        progress,
        visit,
        interrupted: false,
    };
    let outcome = tokio::select! {
        outcome = reading.read_all() => outcome,
        never = lease::keep(queue, |f| f(&mut lock(&holding))) => match never {},
    };
    reading.progress.finish_and_clear();
    let Reading { read, mut scanned, interrupted, .. } = reading;
    let mut holding = into_inner(holding);
    let lapsed = holding.lapsed;
    let (held, released) = holding.release_all(queue).await;
    if interrupted {
        return Err(CliError::interrupted(held, &released, queue.lease));
    }
    outcome?;
    scanned.read = read.len();
    scanned.lapsed = lapsed;
    scanned.not_released = released?;
    Ok(scanned)
}

/// A scan while it reads.
struct Reading<'a, V> {
    queue: &'a Queue,
    mover: Option<&'a Mover>,
    holding: &'a Mutex<Holding>,
    /// First identities read, with the copy that was read.
    read: Keys,
    scanned: Scanned,
    progress: ProgressBar,
    visit: V,
    interrupted: bool,
}

/// One receive's messages, by what the scan does with them.
struct Received {
    /// Read for the first time.
    fresh: Vec<Entry>,
    /// Second copies of messages already read.
    duplicates: Vec<Entry>,
    /// Copies this run moved, received for the first time: each ends its
    /// group's read while other groups may still have messages to move, so
    /// they are progress too.
    copies: usize,
}

impl<V: FnMut(Entry) -> ControlFlow<()>> Reading<'_, V> {
    /// Receives until the queue has nothing new, `visit` stops the scan, or
    /// an interrupt is requested. On a standard queue, [`RECEIVES_IN_FLIGHT`]
    /// receives are under way at once, so SQS works on the next batches while
    /// this one is sorted and stored; what arrives after the scan stopped is
    /// held (and released with the rest), never left leased and unaccounted.
    async fn read_all(&mut self) -> Result<(), CliError> {
        // Each receive is a task of its own, so that it reaches SQS while this
        // task sorts and stores a batch (the runtime has one thread).
        let receive = || {
            let queue = self.queue.clone();
            let task = tokio::spawn(async move {
                let expires = Instant::now() + lease_of(&queue);
                (queue.receive(10).await, expires)
            });
            // A receive task is never aborted: its only failure is a panic, which stays one.
            task.map(|joined| {
                joined.unwrap_or_else(|error| std::panic::resume_unwind(error.into_panic()))
            })
        };
        // A FIFO queue's next receive waits for this batch: what it holds or
        // moves decides which groups SQS hands out next.
        let ahead = !self.queue.url.ends_with(".fifo");
        let depth = if ahead { RECEIVES_IN_FLIGHT } else { 1 };
        let mut in_flight: FuturesOrdered<_> = (0..depth).map(|_| receive()).collect();
        let (mut receiving, mut visiting) = (true, true);
        let mut outcome = Ok(());
        while let Some((received, expires)) = in_flight.next().await {
            let batch = match received {
                Ok(batch) => batch,
                Err(error) => {
                    (receiving, visiting) = (false, false);
                    outcome = outcome.and(Err(error));
                    continue;
                }
            };
            // An empty answer ends the read whole, even when a signal came while it was on its way.
            if batch.is_empty() {
                receiving = false;
                continue;
            }
            if visiting && crate::terminal::interrupt::requested() {
                self.interrupted = true;
                (receiving, visiting) = (false, false);
            }
            if !visiting {
                self.hold(batch.iter(), expires);
                continue;
            }
            if receiving && ahead {
                in_flight.push_back(receive());
                // Lets the new receive's request go out before the batch is handled.
                tokio::task::yield_now().await;
            }
            match self.read_batch(batch, expires).await {
                Ok(ControlFlow::Continue(())) => {}
                // Nothing new in the batch: the batches already under way are still read.
                Ok(ControlFlow::Break(())) if !self.scanned.stopped_early => receiving = false,
                Ok(ControlFlow::Break(())) => (receiving, visiting) = (false, false),
                Err(error) => {
                    (receiving, visiting) = (false, false);
                    outcome = outcome.and(Err(error));
                }
            }
            if receiving && !ahead {
                in_flight.push_back(receive());
            }
        }
        outcome
    }

    /// Holds or moves what one receive returned and visits what is new.
    async fn read_batch(
        &mut self,
        batch: Vec<Entry>,
        expires: Instant,
    ) -> Result<ControlFlow<()>, CliError> {
        let Received { fresh, duplicates, copies } = self.sort(batch, expires);
        if let Some(failure) = self.read.failure() {
            self.hold(fresh.iter().chain(&duplicates), expires);
            return Err(failure.into());
        }
        self.progress.inc(fresh.len() as u64);
        let progressed = !fresh.is_empty() || !duplicates.is_empty() || copies > 0;
        self.scanned.duplicates += duplicates.len();
        for entry in &fresh {
            let group = entry.queue_group().unwrap_or("(none)");
            *self.scanned.groups.entry(group.to_owned()).or_default() += 1;
        }
        match self.mover {
            None => {
                if self.hold_and_visit(fresh, &duplicates, expires).is_break() {
                    return Ok(ControlFlow::Break(()));
                }
            }
            Some(mover) => self.move_and_visit(mover, fresh, &duplicates, expires).await?,
        }
        if let Some(failure) = lock(self.holding).failure() {
            return Err(failure.into());
        }
        // Only messages already read or held: their leases ran out during a long scan.
        if !progressed {
            return Ok(ControlFlow::Break(()));
        }
        Ok(ControlFlow::Continue(()))
    }

    /// Splits `batch` into what is new and what was read before; holds the
    /// moved copies and the messages received again.
    fn sort(&mut self, batch: Vec<Entry>, expires: Instant) -> Received {
        let mut received = Received { fresh: Vec::new(), duplicates: Vec::new(), copies: 0 };
        for entry in batch {
            if self.mover.is_some_and(|m| m.wrote(&entry)) {
                let mut held = lock(self.holding);
                if held.holds(&entry.received_id) {
                    held.received_again(&entry.received_id, &entry.receipt_handle, expires);
                } else {
                    held.hold(&entry.received_id, &entry.receipt_handle, expires);
                    received.copies += 1;
                }
                continue;
            }
            match self.read.value(&entry.queue_message_id) {
                Some(Some(copy)) if copy == entry.received_id => {
                    // Back after its lease ran out during a long scan.
                    lock(self.holding).received_again(
                        &entry.received_id,
                        &entry.receipt_handle,
                        expires,
                    );
                }
                Some(_) => received.duplicates.push(entry),
                None => {
                    self.read.insert(&entry.queue_message_id, Some(&entry.received_id));
                    received.fresh.push(entry);
                }
            }
        }
        received
    }

    /// Without a mover: `Break` when `visit` stops the scan.
    fn hold_and_visit(
        &mut self,
        fresh: Vec<Entry>,
        duplicates: &[Entry],
        expires: Instant,
    ) -> ControlFlow<()> {
        // Every message of the batch is held before any is visited, so
        // one `visit` stopping the scan still releases the rest.
        self.hold(fresh.iter().chain(duplicates), expires);
        for entry in fresh {
            if (self.visit)(entry).is_break() {
                self.scanned.stopped_early = true;
                return ControlFlow::Break(());
            }
        }
        ControlFlow::Continue(())
    }

    /// With a mover: what is new goes to the end of its group (held when it
    /// cannot), second copies are deleted, and visiting stops at a `Break`
    /// while the reading goes on.
    async fn move_and_visit(
        &mut self,
        mover: &Mover,
        fresh: Vec<Entry>,
        duplicates: &[Entry],
        expires: Instant,
    ) -> Result<(), CliError> {
        let to_move: Vec<&Entry> = fresh.iter().collect();
        let moved = match mover.move_to_end(self.queue, &to_move).await {
            Ok(moved) => moved,
            Err(error) => {
                self.hold(fresh.iter().chain(duplicates), expires);
                return Err(error);
            }
        };
        for (entry, result) in fresh.iter().zip(moved) {
            match result {
                Ok(()) => self.scanned.moved += 1,
                Err(stuck) => {
                    self.hold(std::iter::once(entry), expires);
                    self.scanned.stuck.push(stuck);
                }
            }
        }
        remove_duplicates(self.queue, duplicates, self.holding, expires).await?;
        for entry in fresh {
            if !self.scanned.stopped_early && (self.visit)(entry).is_break() {
                self.scanned.stopped_early = true;
            }
        }
        Ok(())
    }

    fn hold<'e>(&self, entries: impl Iterator<Item = &'e Entry>, expires: Instant) {
        let mut held = lock(self.holding);
        for entry in entries {
            held.hold(&entry.received_id, &entry.receipt_handle, expires);
        }
    }
}

/// Deletes second copies of messages already read and moved (left by a run
/// interrupted between a copy's send and the original's delete); one SQS will
/// not delete stays held, and is released with the rest.
async fn remove_duplicates(
    queue: &Queue,
    duplicates: &[Entry],
    holding: &Mutex<Holding>,
    expires: Instant,
) -> Result<(), CliError> {
    if duplicates.is_empty() {
        return Ok(());
    }
    let handles: Vec<&str> = duplicates.iter().map(|e| e.receipt_handle.as_str()).collect();
    let results = match queue.delete(&handles).await {
        Ok(results) => results,
        Err(error) => {
            let mut held = lock(holding);
            for entry in duplicates {
                held.hold(&entry.received_id, &entry.receipt_handle, expires);
            }
            return Err(error);
        }
    };
    let mut held = lock(holding);
    for (index, entry) in duplicates.iter().enumerate() {
        if results.iter().any(|(i, r)| *i == index && r.is_ok()) {
            held.forget(&entry.received_id);
        } else {
            held.hold(&entry.received_id, &entry.receipt_handle, expires);
        }
    }
    drop(held);
    tracing::info!(
        removed = duplicates.len(),
        "second copies left by an interrupted --rotate-groups run removed"
    );
    Ok(())
}
