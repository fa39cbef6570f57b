//! The loop that changes a queue: receive, filter, replay or discard, audit,
//! delete — several loops at once, sharing the rate, the limit and what is held.
//!
//! What does not match is held (leased) until the sweep ends, so receives move
//! on to new messages; everything held is released, visibility 0, before the
//! sweep returns, also when it stops on an error. A message is deleted only
//! after SQS confirmed its replay and the audit line of that is on disk.

use std::pin::Pin;
use std::sync::Mutex;

use backpressure_core::sync::{into_inner, lock};
use futures::FutureExt;
use indicatif::ProgressBar;
use tokio::time::Instant;

use crate::aws::queue::Queue;
use crate::changing::audit::{self, Audit, Line, Outcome};
use crate::changing::destination::Destinations;
use crate::changing::pace::Pacer;
use crate::reading::entry::Entry;
use crate::reading::filter::Filter;
use crate::reading::lease::{self, Holding, lease_of};
use crate::reading::objects::Objects;
use crate::reading::rotate::Mover;
use crate::reading::spill::Keys;
use crate::terminal::error::CliError;
use backpressure_core::quarantine::BodyObject;

mod act;
mod decide;
mod tally;

pub(crate) use tally::Tally;

use decide::{Rules, State};

/// A receive under way: the batch, and when its lease ends.
type Receiving = Pin<Box<dyn Future<Output = (Result<Vec<Entry>, CliError>, Instant)> + Send>>;

/// The largest message SQS accepts.
const MAX_MESSAGE_BYTES: usize = 1_048_576;

/// What a sweep does with a matching message.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Action<'a> {
    Replay { destinations: &'a Destinations, dry_run: bool },
    Discard,
}

/// What a sweep works on and with.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Setup<'a> {
    pub(crate) source: &'a Queue,
    pub(crate) filter: &'a Filter,
    pub(crate) action: Action<'a>,
    /// `None` for a dry run, which writes nothing.
    pub(crate) audit: Option<&'a Audit>,
    pub(crate) operator: &'a str,
    pub(crate) pacer: &'a Pacer,
    /// Moves what does not match to the end of its FIFO group instead of holding it.
    pub(crate) mover: Option<&'a Mover>,
    /// Deletes the bodies kept in S3 of the messages deleted; `None` for a dry run.
    pub(crate) objects: Option<&'a Objects>,
}

#[derive(Debug)]
pub(crate) struct Sweep<'a> {
    source: &'a Queue,
    filter: &'a Filter,
    action: Action<'a>,
    audit: Option<&'a Audit>,
    operator: &'a str,
    pacer: &'a Pacer,
    mover: Option<&'a Mover>,
    objects: Option<&'a Objects>,
    progress: ProgressBar,
    /// Collect the new ids of what it replays (a canary checks for them; a
    /// sweep of 100,000 would hold 100,000 ids for nothing).
    keeps_new_ids: bool,
    state: Mutex<State>,
}

impl<'a> Sweep<'a> {
    /// A sweep that acts on at most `limit` matching messages.
    pub(crate) fn new(
        setup: Setup<'a>,
        limit: usize,
        progress: ProgressBar,
    ) -> Result<Self, CliError> {
        let Setup { source, filter, action, audit, operator, pacer, mover, objects } = setup;
        let state = State {
            held: Holding::new()?,
            seen: Keys::new()?,
            sources: Keys::new()?,
            remaining: limit,
            stopped: false,
            tally: Tally::default(),
        };
        Ok(Self {
            source,
            filter,
            action,
            audit,
            operator,
            pacer,
            mover,
            objects,
            progress,
            keeps_new_ids: false,
            state: Mutex::new(state),
        })
    }

    /// Collects [`Tally::new_message_ids`].
    pub(crate) fn keeping_new_ids(self) -> Self {
        Self { keeps_new_ids: true, ..self }
    }

    /// Runs `loops` loops until the queue has no more visible messages or the
    /// limit is reached, releases what it held, and returns what it did.
    pub(crate) async fn run(self, loops: usize) -> (Tally, Result<(), CliError>) {
        let lane = || async {
            let outcome = self.lane().await;
            if outcome.is_err() {
                self.with_state(|s| s.stopped = true);
            }
            outcome
        };
        let lanes = futures::future::join_all((0..loops.max(1)).map(|_| lane()));
        let stop_on_signal = async {
            crate::terminal::interrupt::wait().await;
            // Each loop stops before its next receive or send; calls under way finish.
            self.with_state(|s| s.stopped = true);
            std::future::pending::<()>().await;
        };
        let results = tokio::select! {
            results = lanes => results,
            never = lease::keep(self.source, |f| self.with_state(|s| f(&mut s.held))) => match never {},
            () = stop_on_signal => unreachable!("pending never ends"),
        };
        let outcome = results.into_iter().collect::<Result<Vec<()>, _>>().map(drop);
        let mut state = into_inner(self.state);
        state.tally.limited = state.remaining == 0;
        state.tally.lapsed = state.held.lapsed;
        let (held, released) = state.held.release_all(self.source).await;
        if crate::terminal::interrupt::requested() {
            let interrupted = CliError::interrupted(held, &released, self.source.lease);
            return (state.tally, outcome.and(Err(interrupted)));
        }
        let outcome = outcome.and(released.map(|refused| {
            if refused > 0 {
                tracing::warn!(
                    refused,
                    "SQS did not release some held messages: visible again when their lease ends"
                );
            }
        }));
        (state.tally, outcome)
    }

    /// One loop. On a standard queue its next receive goes out while it
    /// handles a batch; one still under way when the loop ends is held, and
    /// released with the rest. A FIFO queue's next receive waits: what this
    /// batch holds or moves decides which groups SQS hands out next.
    async fn lane(&self) -> Result<(), CliError> {
        let ahead = !self.source.url.ends_with(".fifo");
        let mut next = None;
        let outcome = self.lane_batches(ahead, &mut next).await;
        if let Some(pending) = next
            && let (Ok(batch), _) = pending.await
        {
            self.hold(&batch.iter().collect::<Vec<_>>());
        }
        outcome
    }

    async fn lane_batches(
        &self,
        ahead: bool,
        next: &mut Option<Receiving>,
    ) -> Result<(), CliError> {
        loop {
            if self.with_state(|s| s.remaining == 0 || s.stopped) {
                return Ok(());
            }
            let (batch, expires) = match next.take() {
                Some(pending) => pending.await,
                None => self.receive().await,
            };
            let batch = batch?;
            if batch.is_empty() {
                return Ok(());
            }
            // Not past the limit: what this batch may use up is not asked for again.
            if ahead && self.with_state(|s| s.remaining > batch.len() && !s.stopped) {
                *next = Some(self.receive());
                // Lets its request go out before this batch is handled.
                tokio::task::yield_now().await;
            }
            let sorted = self.sort(batch, expires);
            let failure = self.with_state(State::failure);
            if let Some(failure) = failure.or_else(|| self.audit.and_then(Audit::failure)) {
                // Nothing of this batch is acted on: what the store answered may be wrong.
                let handles: Vec<&str> =
                    sorted.entries().map(|e| e.receipt_handle.as_str()).collect();
                if let Err(error) = self.source.release(&handles).await {
                    tracing::debug!(error = %error, "releasing a batch after the store failed");
                }
                return Err(failure.into());
            }
            if !sorted.extra.is_empty() {
                let handles: Vec<&str> =
                    sorted.extra.iter().map(|e| e.receipt_handle.as_str()).collect();
                self.source.release(&handles).await?;
            }
            if !sorted.to_move.is_empty() {
                self.move_to_end(&sorted.to_move).await?;
            }
            if !sorted.resumed.is_empty() {
                self.delete(sorted.resumed, Outcome::DeletedOnResume).await?;
            }
            if !sorted.duplicates.is_empty() {
                if matches!(self.action, Action::Replay { dry_run: true, .. }) {
                    let entries: Vec<&Entry> = sorted.duplicates.iter().collect();
                    self.hold(&entries);
                    self.with_state(|s| s.tally.duplicates += entries.len() as u64);
                } else {
                    self.delete(sorted.duplicates, Outcome::DuplicateDeleted).await?;
                }
            }
            if !sorted.todo.is_empty() {
                match self.action {
                    Action::Replay { destinations, dry_run } => {
                        self.replay(sorted.todo, destinations, dry_run).await?;
                    }
                    Action::Discard => self.delete(sorted.todo, Outcome::Discarded).await?,
                }
            } else if sorted.all_seen {
                // Only messages held already, back after their lease ran out: all read.
                return Ok(());
            }
        }
    }

    /// A receive as a task of its own, so that its request reaches SQS while
    /// this loop works (the runtime has one thread).
    fn receive(&self) -> Receiving {
        let queue = self.source.clone();
        let max = self.pacer.batch_size() as i32;
        let task = tokio::spawn(async move {
            let expires = tokio::time::Instant::now() + lease_of(&queue);
            (queue.receive(max).await, expires)
        });
        // Never aborted: its only failure is a panic, which stays one.
        Box::pin(task.map(|joined| {
            joined.unwrap_or_else(|error| std::panic::resume_unwind(error.into_panic()))
        }))
    }

    fn sort(&self, batch: Vec<Entry>, expires: tokio::time::Instant) -> decide::Sorted {
        let rules = Rules {
            matches: &|entry| self.filter.matches(entry),
            was_sent: &|id| self.audit.is_some_and(|a| a.was_sent(id)),
            moved_by_this_run: &|entry| self.mover.is_some_and(|m| m.wrote(entry)),
            rotating: self.mover.is_some(),
            dedupe: matches!(self.action, Action::Replay { .. }),
            source_replayed: &|key| self.audit.is_some_and(|a| a.source_replayed(key)),
            expires,
        };
        self.with_state(|state| decide::sort(state, batch, &rules))
    }

    /// Moves messages that do not match to the end of their FIFO group; one
    /// that cannot be moved is held, and its group is not read past it.
    async fn move_to_end(&self, entries: &[Entry]) -> Result<(), CliError> {
        let Some(mover) = self.mover else { return Ok(()) };
        let refs: Vec<&Entry> = entries.iter().collect();
        let results = match mover.move_to_end(self.source, &refs).await {
            Ok(results) => results,
            Err(error) => {
                self.hold(&refs);
                return Err(error);
            }
        };
        for (entry, result) in entries.iter().zip(results) {
            match result {
                Ok(()) => self.with_state(|s| s.tally.moved += 1),
                Err(stuck) => {
                    self.hold(&[entry]);
                    self.with_state(|s| s.tally.stuck.push(stuck));
                }
            }
        }
        Ok(())
    }

    /// Holds what was taken to act on and stays here, until the sweep ends.
    /// Its lease is counted from now: an underestimate by the time since its
    /// receive, which only makes the heartbeat extend it sooner.
    fn hold(&self, entries: &[&Entry]) {
        let expires = tokio::time::Instant::now() + lease_of(self.source);
        self.with_state(|s| {
            for entry in entries {
                s.held.hold(&entry.received_id, &entry.receipt_handle, expires);
            }
        });
    }

    fn line(&self, entry: &Entry, destination: Option<&str>, started: &str) -> Line {
        let replay = matches!(self.action, Action::Replay { .. });
        Line {
            time: audit::now(),
            operator: self.operator.to_owned(),
            action: if replay { "replay" } else { "discard" }.to_owned(),
            queue_url: self.source.url.clone(),
            queue_message_id: entry.queue_message_id.clone(),
            original_message_id: entry.original_message_id.clone(),
            new_message_id: None,
            destination: destination.map(str::to_owned),
            error_code: entry.error_code.clone(),
            result: Outcome::Replayed,
            started: started.to_owned(),
            reason: None,
            object: entry.body_object.as_ref().map(BodyObject::uri),
            source_key: replay.then(|| entry.source_key()),
        }
    }

    /// Puts `lines` on record (a dry run has no audit file).
    async fn record(&self, lines: &[Line]) -> Result<(), CliError> {
        match self.audit {
            Some(audit) => audit.write(lines).await,
            None => Ok(()),
        }
    }

    fn with_state<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        let mut state = lock(&self.state);
        f(&mut state)
    }
}
