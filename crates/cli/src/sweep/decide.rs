//! What a sweep does with each message it receives — act on it, hold it,
//! move it, delete it as already sent, release it beyond the limit, or leave
//! a second copy alone — decided apart from any I/O, so it is tested without
//! an emulator.

use std::collections::{HashMap, HashSet};

use super::Tally;
use crate::entry::Entry;

#[derive(Debug)]
pub(super) struct State {
    /// Messages to release at the end, by the id SQS gave the copy held: the
    /// newest receipt handle.
    pub(super) held: HashMap<String, String>,
    /// First identities received: one received again (a lease that ran out
    /// mid-send, two receives handed the same message, a second copy left by an
    /// interrupted move) is left alone.
    pub(super) seen: HashSet<String>,
    pub(super) remaining: usize,
    /// A loop failed: the others stop before their next receive or send.
    pub(super) stopped: bool,
    pub(super) tally: Tally,
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
}

/// Sorts one received batch, updating what is held, seen and left to do.
pub(super) fn sort(state: &mut State, batch: Vec<Entry>, rules: &Rules<'_>) -> Sorted {
    let mut sorted = Sorted { all_seen: true, ..Sorted::default() };
    for entry in batch {
        if let Some(handle) = state.held.get_mut(&entry.received_id) {
            *handle = entry.receipt_handle;
            continue;
        }
        if (rules.moved_by_this_run)(&entry) {
            // A copy moved by this run ends its group; other groups may go on.
            state.held.insert(entry.received_id, entry.receipt_handle);
            sorted.all_seen = false;
            continue;
        }
        if state.seen.contains(&entry.queue_message_id) {
            continue;
        }
        let matches = (rules.matches)(&entry);
        let resumed = matches && (rules.was_sent)(&entry.queue_message_id);
        if matches && !resumed && state.remaining == 0 {
            // Beyond the limit: released at once, not read.
            sorted.extra.push(entry);
            continue;
        }
        state.seen.insert(entry.queue_message_id.clone());
        sorted.all_seen = false;
        let group = entry.queue_group().unwrap_or("(none)").to_owned();
        *state.tally.seen.entry(group).or_default() += 1;
        if !matches {
            state.tally.not_matching += 1;
            if rules.rotating {
                sorted.to_move.push(entry);
            } else {
                state.held.insert(entry.received_id, entry.receipt_handle);
            }
        } else if resumed {
            sorted.resumed.push(entry);
        } else {
            state.remaining -= 1;
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
    pub(super) extra: Vec<Entry>,
    pub(super) all_seen: bool,
}

#[cfg(test)]
#[path = "decide_tests.rs"]
mod tests;
