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
    pub(super) matches: &'r dyn Fn(&Entry) -> bool,
    /// The audit file says an earlier run sent this message (by its queue id).
    pub(super) was_sent: &'r dyn Fn(&str) -> bool,
    /// A copy this run wrote while moving a message to the end of its group.
    pub(super) moved_by_this_run: &'r dyn Fn(&Entry) -> bool,
    /// `--rotate-groups`: what does not match is moved rather than held.
    pub(super) rotating: bool,
    /// Replaying: a second record of a source message already replayed (by this
    /// run, or an earlier one the audit file knows) is a duplicate.
    pub(super) dedupe: bool,
    /// The audit file says an earlier run replayed this source message.
    pub(super) source_replayed: &'r dyn Fn(&str) -> bool,
    /// When the lease of what this batch holds ends: the receive's start plus the lease.
    pub(super) expires: Instant,
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
mod tests {
    #![allow(clippy::unwrap_used)]

    use aws_sdk_sqs::types::{Message, MessageSystemAttributeName};

    use super::*;
    use crate::reading::lease::Holding;
    use crate::reading::spill::Keys;

    /// A raw message `id`, received with `handle`, in `group`.
    fn entry(id: &str, handle: &str, group: &str) -> Entry {
        let message = Message::builder()
            .message_id(id)
            .receipt_handle(handle)
            .body(format!(r#"{{"n":"{id}"}}"#))
            .attributes(MessageSystemAttributeName::MessageGroupId, group)
            .build();
        Entry::from_message(&message, true, &Default::default()).unwrap()
    }

    fn state(limit: usize) -> State {
        State {
            held: Holding::new().unwrap(),
            seen: Keys::new().unwrap(),
            sources: Keys::new().unwrap(),
            remaining: limit,
            stopped: false,
            tally: Tally::default(),
        }
    }

    fn ids(entries: &[Entry]) -> Vec<&str> {
        entries.iter().map(|e| e.queue_message_id.as_str()).collect()
    }

    fn rules<'r>(matches: &'r dyn Fn(&Entry) -> bool, sent: &'r dyn Fn(&str) -> bool) -> Rules<'r> {
        Rules {
            matches,
            was_sent: sent,
            moved_by_this_run: &|_| false,
            rotating: false,
            dedupe: true,
            source_replayed: &|_| false,
            expires: Instant::now(),
        }
    }

    #[test]
    fn matching_messages_are_acted_on_up_to_the_limit_and_the_rest_released_unread() {
        let mut state = state(2);
        let all = |_: &Entry| true;
        let batch = vec![entry("a", "ha", "g"), entry("b", "hb", "g"), entry("c", "hc", "g")];
        let sorted = sort(&mut state, batch, &rules(&all, &|_| false));
        assert_eq!((ids(&sorted.todo), ids(&sorted.extra)), (vec!["a", "b"], vec!["c"]));
        assert_eq!(state.remaining, 0);
        assert_eq!(state.tally.seen.get("g"), Some(&2), "the released one is not counted as read");
        assert!(!state.seen.contains("c"));
    }

    #[test]
    fn what_does_not_match_is_held_or_moved_and_what_was_sent_is_deleted_without_the_limit() {
        let only_a = |e: &Entry| e.queue_message_id == "a" || e.queue_message_id == "s";
        let sent = |id: &str| id == "s";
        let batch = || vec![entry("a", "ha", "g"), entry("x", "hx", "g"), entry("s", "hs", "h")];
        let mut held = state(1);
        let sorted = sort(&mut held, batch(), &rules(&only_a, &sent));
        assert_eq!((ids(&sorted.todo), ids(&sorted.resumed)), (vec!["a"], vec!["s"]));
        assert!(sorted.to_move.is_empty());
        assert_eq!(held.held.handle("x").as_deref(), Some("hx"));
        assert_eq!((held.tally.not_matching, held.remaining), (1, 0));

        let mut moving = state(1);
        let rotating = Rules { rotating: true, ..rules(&only_a, &sent) };
        let sorted = sort(&mut moving, batch(), &rotating);
        assert_eq!(ids(&sorted.to_move), ["x"]);
        assert!(moving.held.is_empty(), "a message to move is not held");
    }

    #[test]
    fn copies_received_again_are_left_alone_and_a_batch_of_them_means_all_is_read() {
        let none = |_: &Entry| false;
        let mut state = state(10);
        let first = sort(&mut state, vec![entry("x", "h1", "g")], &rules(&none, &|_| false));
        assert!(!first.all_seen);
        // The held message again, its lease run out: the newest handle is kept.
        let again = sort(&mut state, vec![entry("x", "h2", "g")], &rules(&none, &|_| false));
        assert!(again.all_seen && again.todo.is_empty());
        assert_eq!(state.held.handle("x").as_deref(), Some("h2"));
        assert_eq!(state.tally.seen.get("g"), Some(&1), "counted once");
    }

    #[test]
    fn a_copy_this_run_moved_is_held_and_ends_its_group() {
        let mut state = state(10);
        let moved = |e: &Entry| e.received_id == "copy";
        let all = |_: &Entry| true;
        let rules = Rules { moved_by_this_run: &moved, ..rules(&all, &|_| false) };
        let sorted = sort(&mut state, vec![entry("copy", "hc", "g")], &rules);
        assert!(sorted.todo.is_empty() && !sorted.all_seen);
        assert_eq!(state.held.handle("copy").as_deref(), Some("hc"));
        assert_eq!(state.remaining, 10);
    }

    /// A quarantine record for source message `original` with `body`, received as `id`.
    fn record(id: &str, original: &str, body: &str) -> Entry {
        let record = serde_json::json!({
            "messageId": original, "errorCode": "bad_request", "remediationStatus": "new",
            "sourceQueueArn": "arn:aws:sqs:us-east-1:1:work", "body": body,
        });
        let message = Message::builder()
            .message_id(id)
            .receipt_handle(format!("h-{id}"))
            .body(record.to_string())
            .build();
        Entry::from_message(&message, false, &Default::default()).unwrap()
    }

    #[test]
    fn a_second_record_of_one_source_message_is_a_duplicate_in_this_run_and_after_a_resume() {
        let all = |_: &Entry| true;
        let mut first = state(10);
        let batch =
            vec![record("r1", "m-1", "a"), record("r2", "m-1", "a"), record("r3", "m-1", "b")];
        let sorted = sort(&mut first, batch, &rules(&all, &|_| false));
        // Same source message and body: one replayed, one a duplicate; another body is its own.
        assert_eq!(ids(&sorted.todo), ["r1", "r3"]);
        assert_eq!(ids(&sorted.duplicates), ["r2"]);
        assert_eq!(first.remaining, 8, "a duplicate does not count against the limit");

        let replayed_before = record("r9", "m-1", "a").source_key();
        let earlier = |key: &str| key == replayed_before;
        let mut resumed = state(10);
        let rules = Rules { source_replayed: &earlier, ..rules(&all, &|_| false) };
        let sorted = sort(&mut resumed, vec![record("r2", "m-1", "a")], &rules);
        assert_eq!(ids(&sorted.duplicates), ["r2"], "the audit file knows the first was replayed");

        let mut discarding = state(10);
        let rules = Rules { dedupe: false, ..rules };
        let sorted = sort(&mut discarding, vec![record("r2", "m-1", "a")], &rules);
        assert_eq!(ids(&sorted.todo), ["r2"], "a discard deletes every record");
    }
}
