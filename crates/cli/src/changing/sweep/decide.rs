//! What a sweep does with each message it receives — act on it, hold it,
//! move it, delete it as already sent, release it beyond the limit, or leave
//! a second copy alone — decided apart from any I/O, so it is tested without
//! an emulator.

use tokio::time::Instant;

use super::Tally;
use crate::reading::entry::Entry;
use crate::reading::lease::Holding;
use crate::reading::spill::{Keys, SpillError};

#[derive(Debug)]
pub(super) struct State {
    /// Messages to release at the end, by the id SQS gave the copy held: the
    /// newest receipt handle; their leases are extended while the sweep runs.
    pub(super) held: Holding,
    /// First identities received: one received again (a lease that ran out
    /// mid-send, two receives handed the same message, a second copy left by an
    /// interrupted move) is left alone.
    pub(super) seen: Keys,
    /// The source messages ([`Entry::source_key`]) this run took to replay.
    pub(super) sources: Keys,
    pub(super) remaining: usize,
    /// A loop failed: the others stop before their next receive or send.
    pub(super) stopped: bool,
    pub(super) tally: Tally,
}

impl State {
    /// The first error of a store: what it answered since may be wrong.
    pub(super) fn failure(&mut self) -> Option<SpillError> {
        self.held.failure().or_else(|| self.seen.failure()).or_else(|| self.sources.failure())
    }
}

/// What the decisions depend on besides the state.
pub(super) struct Rules<'r> {
    /// The filters.
    pub matches: &'r dyn Fn(&Entry) -> bool,
    /// The audit file says an earlier run sent this message (by its queue id).
    pub was_sent: &'r dyn Fn(&str) -> bool,
    /// A copy this run wrote while moving a message to the end of its group.
    pub moved_by_this_run: &'r dyn Fn(&Entry) -> bool,
    /// `--rotate-groups`: what does not match is moved rather than held.
    pub rotating: bool,
    /// Replaying: a second record of a source message already replayed (by this
    /// run, or an earlier one the audit file knows) is a duplicate.
    pub dedupe: bool,
    /// The audit file says an earlier run replayed this source message.
    pub source_replayed: &'r dyn Fn(&str) -> bool,
    /// When the lease of what this batch holds ends: the receive's start plus the lease.
    pub expires: Instant,
}

/// Sorts one received batch, updating what is held, seen and left to do.
pub(super) fn sort(state: &mut State, batch: Vec<Entry>, rules: &Rules<'_>) -> Sorted {
    let mut sorted = Sorted { all_seen: true, ..Sorted::default() };
    for entry in batch {
        if state.held.holds(&entry.received_id) {
            state.held.received_again(&entry.received_id, &entry.receipt_handle, rules.expires);
            continue;
        }
        if (rules.moved_by_this_run)(&entry) {
            // A copy moved by this run ends its group; other groups may go on.
            state.held.hold(&entry.received_id, &entry.receipt_handle, rules.expires);
            sorted.all_seen = false;
            continue;
        }
        if state.seen.contains(&entry.queue_message_id) {
            continue;
        }
        let matches = (rules.matches)(&entry);
        let resumed = matches && (rules.was_sent)(&entry.queue_message_id);
        let source = (rules.dedupe && matches && !resumed).then(|| entry.source_key());
        let duplicate = source.as_ref().is_some_and(|key| {
            state.sources.contains(key.as_str()) || (rules.source_replayed)(key.as_str())
        });
        if matches && !resumed && state.remaining == 0 {
            // Beyond the limit: released at once, not read.
            sorted.extra.push(entry);
            continue;
        }
        state.seen.insert(&entry.queue_message_id, None);
        sorted.all_seen = false;
        let group = entry.queue_group().unwrap_or("(none)").to_owned();
        *state.tally.seen.entry(group).or_default() += 1;
        if !matches {
            state.tally.not_matching += 1;
            if rules.rotating {
                sorted.to_move.push(entry);
            } else {
                state.held.hold(&entry.received_id, &entry.receipt_handle, rules.expires);
            }
        } else if resumed {
            sorted.resumed.push(entry);
        } else if duplicate {
            sorted.duplicates.push(entry);
        } else {
            state.remaining -= 1;
            if let Some(source) = source {
                state.sources.insert(&source, None);
            }
            sorted.todo.push(entry);
        }
    }
    sorted
}

#[derive(Debug, Default)]
pub(super) struct Sorted {
    pub(super) todo: Vec<Entry>,
    pub(super) to_move: Vec<Entry>,
    pub(super) resumed: Vec<Entry>,
    /// Second records of a source message already replayed: deleted, not sent.
    pub(super) duplicates: Vec<Entry>,
    pub(super) extra: Vec<Entry>,
    pub(super) all_seen: bool,
}

impl Sorted {
    /// Every entry of the batch that was sorted into a list.
    pub(super) fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.todo
            .iter()
            .chain(&self.to_move)
            .chain(&self.resumed)
            .chain(&self.duplicates)
            .chain(&self.extra)
    }
}

#[cfg(test)]
#[path = "decide_tests.rs"]
mod tests;
