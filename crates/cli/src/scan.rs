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

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::sync::{Mutex, MutexGuard, PoisonError};

use tokio::time::Instant;

use crate::entry::Entry;
use crate::error::CliError;
use crate::lease::{self, Holding, lease_of};
use crate::queue::Queue;
use crate::rotate::{Mover, Stuck};
use crate::spill::Keys;

/// What a scan saw.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Scanned {
    /// Distinct messages read.
    pub read: usize,
    /// Messages SQS would not release; visible again when their lease ends.
    pub not_released: usize,
    /// Visible messages the queue counted before the scan.
    pub counted: u64,
    /// Messages in flight before the scan (held by a consumer or an earlier run).
    pub in_flight: u64,
    /// When those are visible again, for a person (see [`Queue::when_visible`]).
    pub visible_again: String,
    /// Messages read per message group.
    pub groups: BTreeMap<String, usize>,
    /// Messages moved to the end of their group.
    pub moved: usize,
    /// Second copies left by an interrupted move, removed (or, not moving, skipped).
    pub duplicates: usize,
    /// Messages that could not be moved: their groups were not read past them.
    pub stuck: Vec<Stuck>,
    /// A `visit` stopped the scan early (a limit, a message found).
    pub stopped_early: bool,
    /// Messages received again while held: their lease ran out mid-scan.
    pub lapsed: usize,
    /// The lease, in seconds (`--visibility-timeout`).
    pub lease: i32,
}

/// Why a scan's result is not the whole queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shortfall {
    /// Messages the queue counts that were not read.
    pub unread: u64,
    /// One paragraph for the operator: what, why, what to do.
    pub explanation: String,
    /// The exit code: 4 (messages in flight, run again later) or 5 (not read).
    pub exit_code: u8,
}

impl Scanned {
    /// Messages the queue counted that this scan did not read.
    pub fn unread(&self) -> u64 {
        self.counted.saturating_sub((self.read + self.duplicates) as u64)
    }

    /// What the scan of `url` missed, or `None` when it read everything the queue counted.
    pub fn shortfall(&self, url: &str) -> Option<Shortfall> {
        if self.stopped_early {
            return None;
        }
        let unread = self.unread();
        if self.in_flight > 0 {
            return Some(Shortfall {
                unread: unread + self.in_flight,
                explanation: format!(
                    "{} message(s) of {url} were in flight (held by a consumer, or by an interrupted \
                     run) and could not be read{}: run the same command again once they are \
                     visible, {}",
                    self.in_flight,
                    if unread > 0 { format!(", nor {unread} behind them") } else { String::new() },
                    self.visible_again,
                ),
                exit_code: 4,
            });
        }
        if unread == 0 {
            return None;
        }
        let explanation = if url.ends_with(".fifo") {
            let why = if self.stuck.is_empty() {
                let mut groups: Vec<(&String, &usize)> = self.groups.iter().collect();
                groups.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
                let shown: Vec<String> =
                    groups.iter().take(10).map(|(g, n)| format!("{g} ({n})")).collect();
                let more = groups.len().saturating_sub(10);
                let shown = if shown.is_empty() { vec!["none".to_owned()] } else { shown };
                format!(
                    "SQS hands out no more of a FIFO message group while its first messages are \
                     held, and a read holds what it read. Read per group: {}{}. Run again with \
                     --rotate-groups to read every message (each is moved to the end of its own \
                     group, order kept; see docs/operator-cli.md)",
                    shown.join(", "),
                    if more > 0 { format!(" and {more} more") } else { String::new() }
                )
            } else {
                let stuck: Vec<String> = self
                    .stuck
                    .iter()
                    .take(10)
                    .map(|s| {
                        format!("group {} at message {}: {}", s.group, s.queue_message_id, s.reason)
                    })
                    .collect();
                format!(
                    "these groups were not read past a message that could not be moved: {}",
                    stuck.join("; ")
                )
            };
            format!(
                "read {} of the {} message(s) {url} counted; {unread} not read: {why}",
                self.read, self.counted
            )
        } else if self.lapsed > 0 {
            format!(
                "read {} of the {} message(s) {url} counted; {unread} not read: the lease of {} \
                 message(s) this read held ran out before the read ended (--visibility-timeout \
                 {} s, extended as it went, and not enough), so SQS handed them out again \
                 instead of new ones: run again with a longer --visibility-timeout",
                self.read, self.counted, self.lapsed, self.lease
            )
        } else {
            format!(
                "read {} of the {} message(s) {url} counted; {unread} not read (received by \
                 someone else meanwhile, or deleted): run the same command again",
                self.read, self.counted
            )
        };
        Some(Shortfall { unread, explanation, exit_code: 5 })
    }
}

/// The mover a scan of `queue` uses, when it moves groups ([`Queue::moves_groups`]).
pub async fn mover_for(queue: &Queue) -> Result<Option<Mover>, CliError> {
    if queue.moves_groups() { Ok(Some(Mover::new(queue).await?)) } else { Ok(None) }
}

/// Calls `visit` once for each distinct message on the queue until the queue
/// has no more visible messages or `visit` breaks, then releases what it
/// holds. With a `mover` (FIFO queues), each message read is moved to the end
/// of its group instead of held, and the scan reads every group to its end;
/// a `visit` that breaks then only stops visiting, so that every group it
/// started to move ends in its order.
pub async fn scan(
    queue: &Queue,
    mover: Option<&Mover>,
    mut visit: impl FnMut(Entry) -> ControlFlow<()>,
) -> Result<Scanned, CliError> {
    let (counted, in_flight, timeout) = queue.counts_and_timeout().await?;
    let visible_again = queue.when_visible(timeout);
    let mut scanned =
        Scanned { counted, in_flight, visible_again, lease: queue.lease, ..Scanned::default() };
    let progress = crate::ui::bar(counted, "read");
    // Per message: its id and receipt handle, on disk past a bound (`crate::spill`).
    let holding = Mutex::new(Holding::new()?);
    let held = || lock(&holding);
    // First identities read, with the copy that was read.
    let mut read = Keys::new()?;
    let mut interrupted = false;
    let reading = async {
        loop {
            if crate::interrupt::requested() {
                interrupted = true;
                return Ok(());
            }
            let expires = Instant::now() + lease_of(queue);
            let batch = queue.receive(10).await?;
            if batch.is_empty() {
                return Ok(());
            }
            let (mut fresh, mut duplicates) = (Vec::new(), Vec::new());
            // A copy this run moved, received for the first time, ends its group's
            // read while other groups may still have messages to move: progress too.
            let mut copies = 0;
            for entry in batch {
                if mover.is_some_and(|m| m.wrote(&entry)) {
                    let mut held = held();
                    if held.holds(&entry.received_id) {
                        held.received_again(&entry.received_id, &entry.receipt_handle, expires);
                    } else {
                        held.hold(&entry.received_id, &entry.receipt_handle, expires);
                        copies += 1;
                    }
                    continue;
                }
                match read.value(&entry.queue_message_id) {
                    Some(Some(copy)) if copy == entry.received_id => {
                        // Back after its lease ran out during a long scan.
                        held().received_again(&entry.received_id, &entry.receipt_handle, expires);
                    }
                    Some(_) => duplicates.push(entry),
                    None => {
                        read.insert(&entry.queue_message_id, Some(&entry.received_id));
                        fresh.push(entry);
                    }
                }
            }
            if let Some(failure) = read.failure() {
                let mut held = held();
                for entry in fresh.iter().chain(&duplicates) {
                    held.hold(&entry.received_id, &entry.receipt_handle, expires);
                }
                return Err(failure.into());
            }
            progress.inc(fresh.len() as u64);
            let progressed = !fresh.is_empty() || !duplicates.is_empty() || copies > 0;
            scanned.duplicates += duplicates.len();
            for entry in &fresh {
                let group = entry.queue_group().unwrap_or("(none)");
                *scanned.groups.entry(group.to_owned()).or_default() += 1;
            }
            let hold = |entries: &mut dyn Iterator<Item = &Entry>| {
                let mut held = held();
                for entry in entries {
                    held.hold(&entry.received_id, &entry.receipt_handle, expires);
                }
            };
            match mover {
                None => {
                    // Every message of the batch is held before any is visited, so
                    // one `visit` stopping the scan still releases the rest.
                    hold(&mut fresh.iter().chain(&duplicates));
                    for entry in fresh {
                        if visit(entry).is_break() {
                            scanned.stopped_early = true;
                            return Ok(());
                        }
                    }
                }
                Some(mover) => {
                    let to_move: Vec<&Entry> = fresh.iter().collect();
                    let moved = match mover.move_to_end(queue, &to_move).await {
                        Ok(moved) => moved,
                        Err(error) => {
                            hold(&mut fresh.iter().chain(&duplicates));
                            return Err(error);
                        }
                    };
                    for (entry, result) in fresh.iter().zip(moved) {
                        match result {
                            Ok(()) => scanned.moved += 1,
                            Err(stuck) => {
                                hold(&mut std::iter::once(entry));
                                scanned.stuck.push(stuck);
                            }
                        }
                    }
                    remove_duplicates(queue, &duplicates, &holding, expires).await?;
                    for entry in fresh {
                        if !scanned.stopped_early && visit(entry).is_break() {
                            scanned.stopped_early = true;
                        }
                    }
                }
            }
            if let Some(failure) = held().failure() {
                return Err(failure.into());
            }
            // Only messages already read or held: their leases ran out during a long scan.
            if !progressed {
                return Ok(());
            }
        }
    };
    let outcome = tokio::select! {
        outcome = reading => outcome,
        never = lease::keep(queue, |f| f(&mut held())) => match never {},
    };
    progress.finish_and_clear();
    let mut holding = holding.into_inner().unwrap_or_else(PoisonError::into_inner);
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

fn lock(holding: &Mutex<Holding>) -> MutexGuard<'_, Holding> {
    holding.lock().unwrap_or_else(PoisonError::into_inner)
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
