//! The loop that changes a queue: receive, filter, replay or discard, audit,
//! delete — several loops at once, sharing the rate, the limit and what is held.
//!
//! What does not match is held (leased) until the sweep ends, so receives move
//! on to new messages; everything held is released, visibility 0, before the
//! sweep returns, also when it stops on an error. A message is deleted only
//! after SQS confirmed its replay and the audit line of that is on disk.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Mutex;

use aws_sdk_sqs::types::SendMessageBatchRequestEntry;
use backpressure_core::consumer::quarantine::{MAX_BATCH_BYTES, plan_batches};
use indicatif::ProgressBar;
use serde::Serialize;

use crate::audit::{self, Audit, Line, Outcome};
use crate::destination::Destinations;
use crate::entry::Entry;
use crate::error::CliError;
use crate::filter::Filter;
use crate::outgoing::{send_entry, sqs_size};
use crate::pace::Pacer;
use crate::queue::Queue;
use crate::rotate::{Mover, Stuck};
use crate::text::printable;

/// The largest message SQS accepts.
const MAX_MESSAGE_BYTES: usize = 1_048_576;

/// What a sweep does with a matching message.
#[derive(Debug, Clone, Copy)]
pub enum Action<'a> {
    Replay { destinations: &'a Destinations, dry_run: bool },
    Discard,
}

/// What a sweep did.
#[derive(Debug, Default, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Tally {
    pub replayed: u64,
    pub discarded: u64,
    /// Sent by an earlier, interrupted run; deleted now without sending.
    pub deleted_on_resume: u64,
    /// Printed by `--dry-run`.
    pub would_send: u64,
    /// Left on the queue because SQS refused them or they cannot be sent.
    pub failed: u64,
    /// Did not match the filters; left on the queue.
    pub not_matching: u64,
    /// Not matching, moved to the end of their FIFO group (`--rotate-groups`).
    pub moved: u64,
    /// Distinct messages received, by message group.
    #[serde(skip)]
    pub seen: BTreeMap<String, usize>,
    /// Messages that could not be moved: their groups were not read past them.
    #[serde(skip)]
    pub stuck: Vec<Stuck>,
    /// The limit was reached: the sweep did not look for more.
    #[serde(skip)]
    pub limited: bool,
    /// The ids SQS gave the replayed messages.
    #[serde(skip)]
    pub new_message_ids: Vec<String>,
}

#[derive(Debug)]
struct State {
    /// Messages to release at the end, by the id SQS gave the copy held: the
    /// newest receipt handle.
    held: HashMap<String, String>,
    /// First identities received: one received again (a lease that ran out
    /// mid-send, two receives handed the same message, a second copy left by an
    /// interrupted move) is left alone.
    seen: HashSet<String>,
    remaining: usize,
    /// A loop failed: the others stop before their next receive or send.
    stopped: bool,
    tally: Tally,
}

/// What a sweep works on and with.
#[derive(Debug, Clone, Copy)]
pub struct Setup<'a> {
    pub source: &'a Queue,
    pub filter: &'a Filter,
    pub action: Action<'a>,
    /// `None` for a dry run, which writes nothing.
    pub audit: Option<&'a Audit>,
    pub operator: &'a str,
    pub pacer: &'a Pacer,
    /// Moves what does not match to the end of its FIFO group instead of holding it.
    pub mover: Option<&'a Mover>,
}

#[derive(Debug)]
pub struct Sweep<'a> {
    source: &'a Queue,
    filter: &'a Filter,
    action: Action<'a>,
    audit: Option<&'a Audit>,
    operator: &'a str,
    pacer: &'a Pacer,
    mover: Option<&'a Mover>,
    progress: ProgressBar,
    state: Mutex<State>,
}

impl<'a> Sweep<'a> {
    /// A sweep that acts on at most `limit` matching messages.
    pub fn new(setup: Setup<'a>, limit: usize, progress: ProgressBar) -> Self {
        let Setup { source, filter, action, audit, operator, pacer, mover } = setup;
        let state = State {
            held: HashMap::new(),
            seen: HashSet::new(),
            remaining: limit,
            stopped: false,
            tally: Tally::default(),
        };
        Self {
            source,
            filter,
            action,
            audit,
            operator,
            pacer,
            mover,
            progress,
            state: Mutex::new(state),
        }
    }

    /// Runs `loops` loops until the queue has no more visible messages or the
    /// limit is reached, releases what it held, and returns what it did.
    pub async fn run(self, loops: usize) -> (Tally, Result<(), CliError>) {
        let lane = || async {
            let outcome = self.lane().await;
            if outcome.is_err() {
                self.with_state(|s| s.stopped = true);
            }
            outcome
        };
        let results = futures::future::join_all((0..loops.max(1)).map(|_| lane())).await;
        let outcome = results.into_iter().collect::<Result<Vec<()>, _>>().map(drop);
        let mut state = self.state.into_inner().unwrap_or_else(|e| e.into_inner());
        state.tally.limited = state.remaining == 0;
        let handles: Vec<&str> = state.held.values().map(String::as_str).collect();
        let released = self.source.release(&handles).await;
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

    async fn lane(&self) -> Result<(), CliError> {
        loop {
            if self.with_state(|s| s.remaining == 0 || s.stopped) {
                return Ok(());
            }
            let batch = self.source.receive(self.pacer.batch_size() as i32).await?;
            if batch.is_empty() {
                return Ok(());
            }
            let sorted = self.sort(batch);
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

    fn sort(&self, batch: Vec<Entry>) -> Sorted {
        let mut sorted = Sorted { all_seen: true, ..Sorted::default() };
        self.with_state(|state| {
            for entry in batch {
                if let Some(handle) = state.held.get_mut(&entry.received_id) {
                    *handle = entry.receipt_handle;
                    continue;
                }
                if self.mover.is_some_and(|m| m.wrote(&entry)) {
                    // A copy moved by this run ends its group; other groups may go on.
                    state.held.insert(entry.received_id, entry.receipt_handle);
                    sorted.all_seen = false;
                    continue;
                }
                if !state.seen.insert(entry.queue_message_id.clone()) {
                    continue;
                }
                sorted.all_seen = false;
                let group = entry.queue_group().unwrap_or("(none)").to_owned();
                *state.tally.seen.entry(group).or_default() += 1;
                if !self.filter.matches(&entry) {
                    state.tally.not_matching += 1;
                    if self.mover.is_some() {
                        sorted.to_move.push(entry);
                    } else {
                        state.held.insert(entry.received_id, entry.receipt_handle);
                    }
                } else if self.audit.is_some_and(|a| a.was_sent(&entry.queue_message_id)) {
                    sorted.resumed.push(entry);
                } else if state.remaining > 0 {
                    state.remaining -= 1;
                    sorted.todo.push(entry);
                } else {
                    // Beyond the limit: released at once, not read.
                    state.seen.remove(&entry.queue_message_id);
                    if let Some(n) = entry.queue_group().and_then(|g| state.tally.seen.get_mut(g)) {
                        *n -= 1;
                    }
                    sorted.extra.push(entry);
                }
            }
        });
        sorted
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

    async fn replay(
        &self,
        todo: Vec<Entry>,
        destinations: &Destinations,
        dry_run: bool,
    ) -> Result<(), CliError> {
        let mut groups: Vec<(Queue, Vec<Entry>)> = Vec::new();
        for entry in todo {
            match destinations.resolve(&entry).await {
                Ok(queue) => match groups.iter_mut().find(|(q, _)| q.url == queue.url) {
                    Some((_, entries)) => entries.push(entry),
                    None => groups.push((queue, vec![entry])),
                },
                Err(reason) => self.fail(&entry, None, reason)?,
            }
        }
        for (destination, entries) in groups {
            let fifo = destination.url.ends_with(".fifo");
            // Each request's batch id is its entry's index here, unique in any batch.
            let mut ready = Vec::new();
            for entry in entries {
                match send_entry(&entry, ready.len(), fifo) {
                    Ok(request) => ready.push((entry, request)),
                    Err(reason) => self.fail(&entry, Some(&destination.url), reason)?,
                }
            }
            let sizes: Vec<usize> = ready.iter().map(|(entry, _)| sqs_size(entry)).collect();
            let (batches, too_large) = plan_batches(&sizes, MAX_MESSAGE_BYTES.min(MAX_BATCH_BYTES));
            for index in too_large {
                let reason = "larger than SQS accepts in one message".to_owned();
                self.fail(&ready[index].0, Some(&destination.url), reason)?;
            }
            for batch in batches {
                if dry_run {
                    let entries: Vec<&Entry> = batch.iter().map(|&i| &ready[i].0).collect();
                    self.print_dry_run(&entries, &destination.url);
                } else {
                    self.send(&ready, &batch, &destination).await?;
                }
            }
        }
        Ok(())
    }

    /// Sends the `batch` (indices) of `ready`, puts the outcome on record and
    /// deletes what SQS confirmed.
    async fn send(
        &self,
        ready: &[(Entry, SendMessageBatchRequestEntry)],
        batch: &[usize],
        destination: &Queue,
    ) -> Result<(), CliError> {
        let entries: Vec<&Entry> = batch.iter().map(|&i| &ready[i].0).collect();
        let entries = entries.as_slice();
        let requests = batch.iter().map(|&i| ready[i].1.clone()).collect();
        let started = self.pacer.wait(entries.len()).await;
        if self.with_state(|s| s.stopped) {
            // Another loop failed (an audit file that cannot be written, say): send nothing more.
            self.hold(entries);
            return Ok(());
        }
        let started = audit::now_minus(started.elapsed());
        let results = match destination.send(requests).await {
            Ok(results) => results,
            Err(error) => {
                // Unknown whether SQS took them: keep them here (a rerun sends them again).
                self.hold(entries);
                return Err(error);
            }
        };
        let mut outcome: Vec<Option<Result<String, String>>> = vec![None; entries.len()];
        for (id, result) in results {
            if let Some(slot) = batch.iter().position(|&i| i == id).and_then(|p| outcome.get_mut(p))
            {
                *slot = Some(result);
            }
        }
        let (mut lines, mut sent, mut refused) = (Vec::new(), Vec::new(), Vec::new());
        for (entry, result) in entries.iter().zip(outcome) {
            let result =
                result.unwrap_or_else(|| Err("SQS returned no result for this entry".into()));
            let mut line = self.line(entry, Some(&destination.url), &started);
            match result {
                Ok(new_id) => {
                    line.new_message_id = Some(new_id);
                    sent.push(*entry);
                }
                Err(reason) => {
                    line.result = Outcome::SendFailed;
                    line.reason = Some(reason);
                    refused.push(*entry);
                }
            }
            lines.push(line);
        }
        self.hold(&refused);
        if let Err(error) = self.audit.map_or(Ok(()), |a| a.write(&lines)) {
            // Not on record: must not be deleted. A rerun sends them again.
            self.hold(&sent);
            return Err(error);
        }
        self.with_state(|s| {
            s.tally.failed += refused.len() as u64;
            s.tally.replayed += sent.len() as u64;
            s.tally.new_message_ids.extend(lines.iter().filter_map(|l| l.new_message_id.clone()));
        });
        self.progress.inc(sent.len() as u64);
        self.delete_sent(&sent, &destination.url).await
    }

    /// Deletes replayed messages here; one that will not go is on record as
    /// sent, so a rerun deletes it without sending it again.
    async fn delete_sent(&self, sent: &[&Entry], destination: &str) -> Result<(), CliError> {
        if sent.is_empty() {
            return Ok(());
        }
        let handles: Vec<&str> = sent.iter().map(|e| e.receipt_handle.as_str()).collect();
        let results = self.source.delete(&handles).await?;
        let deleted: Vec<usize> =
            results.iter().filter(|(_, r)| r.is_ok()).map(|(i, _)| *i).collect();
        let started = audit::now();
        let mut lines = Vec::new();
        for (index, entry) in sent.iter().enumerate().filter(|(i, _)| !deleted.contains(i)) {
            let mut line = self.line(entry, Some(destination), &started);
            line.result = Outcome::DeleteFailed;
            line.reason =
                results.iter().find(|(i, _)| *i == index).and_then(|(_, r)| r.clone().err());
            lines.push(line);
            self.hold(&[*entry]);
        }
        self.with_state(|s| s.tally.failed += lines.len() as u64);
        self.audit.map_or(Ok(()), |a| a.write(&lines))
    }

    /// Deletes `entries` (discarded, or sent before an interruption), then
    /// writes their audit lines.
    async fn delete(&self, entries: Vec<Entry>, done: Outcome) -> Result<(), CliError> {
        let handles: Vec<&str> = entries.iter().map(|e| e.receipt_handle.as_str()).collect();
        let started = audit::now();
        let results = match self.source.delete(&handles).await {
            Ok(results) => results,
            Err(error) => {
                self.hold(&entries.iter().collect::<Vec<_>>());
                return Err(error);
            }
        };
        let mut lines = Vec::new();
        let (mut ok, mut failed) = (0, 0);
        for (index, entry) in entries.iter().enumerate() {
            let mut line = self.line(entry, None, &started);
            match results.iter().find(|(i, _)| *i == index).map(|(_, r)| r.clone()) {
                Some(Ok(())) => {
                    line.result = done;
                    ok += 1;
                }
                other => {
                    line.result = if done == Outcome::Discarded {
                        Outcome::DiscardFailed
                    } else {
                        Outcome::DeleteFailed
                    };
                    line.reason =
                        Some(other.and_then(Result::err).unwrap_or_else(|| "no result".into()));
                    failed += 1;
                    self.hold(&[entry]);
                }
            }
            lines.push(line);
        }
        self.with_state(|s| {
            s.tally.failed += failed;
            match done {
                Outcome::Discarded => s.tally.discarded += ok,
                _ => s.tally.deleted_on_resume += ok,
            }
        });
        self.progress.inc(ok);
        self.audit.map_or(Ok(()), |a| a.write(&lines))
    }

    fn print_dry_run(&self, entries: &[&Entry], destination: &str) {
        for entry in entries {
            println!(
                "would send {id} ({bytes} bytes, {attributes} attribute(s){group}) to {destination}",
                id = printable(&entry.original_message_id, 80),
                bytes = entry.body.as_deref().map_or(0, str::len),
                attributes = entry.message_attributes.len(),
                group = entry
                    .group_id
                    .as_deref()
                    .map(|g| format!(", group {}", printable(g, 80)))
                    .unwrap_or_default(),
            );
        }
        self.hold(entries);
        self.with_state(|s| s.tally.would_send += entries.len() as u64);
        self.progress.inc(entries.len() as u64);
    }

    /// A message that cannot be replayed: kept here, counted, on record.
    fn fail(
        &self,
        entry: &Entry,
        destination: Option<&str>,
        reason: String,
    ) -> Result<(), CliError> {
        tracing::warn!(queue_message_id = %entry.queue_message_id, %reason, "not replayed");
        self.hold(&[entry]);
        self.with_state(|s| s.tally.failed += 1);
        let mut line = self.line(entry, destination, &audit::now());
        line.result = Outcome::SendFailed;
        line.reason = Some(reason);
        self.audit.map_or(Ok(()), |a| a.write(&[line]))
    }

    fn hold(&self, entries: &[&Entry]) {
        self.with_state(|s| {
            for entry in entries {
                s.held.insert(entry.received_id.clone(), entry.receipt_handle.clone());
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
        }
    }

    fn with_state<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut state)
    }
}

#[derive(Debug, Default)]
struct Sorted {
    todo: Vec<Entry>,
    to_move: Vec<Entry>,
    resumed: Vec<Entry>,
    extra: Vec<Entry>,
    all_seen: bool,
}
