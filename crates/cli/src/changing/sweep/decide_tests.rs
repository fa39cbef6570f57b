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
    Entry::from_message(&message, true).unwrap()
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
    Entry::from_message(&message, false).unwrap()
}

#[test]
fn a_second_record_of_one_source_message_is_a_duplicate_in_this_run_and_after_a_resume() {
    let all = |_: &Entry| true;
    let mut first = state(10);
    let batch = vec![record("r1", "m-1", "a"), record("r2", "m-1", "a"), record("r3", "m-1", "b")];
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
