//! What a sweep did, counted as it goes and added up across the sweeps of a run.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::reading::rotate::Stuck;

fn is_zero(count: &u64) -> bool {
    *count == 0
}

/// What a sweep did.
#[derive(Debug, Default, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Tally {
    pub(crate) replayed: u64,
    pub(crate) discarded: u64,
    /// Sent by an earlier, interrupted run; deleted now without sending.
    pub(crate) deleted_on_resume: u64,
    /// Second records of a source message replayed (by this run or an earlier
    /// one): deleted without sending (a dry run counts them and deletes nothing).
    pub(crate) duplicates: u64,
    /// Printed by `--dry-run`.
    pub(crate) would_send: u64,
    /// Left on the queue because SQS refused them or they cannot be sent.
    pub(crate) failed: u64,
    /// Sent (SQS accepted them), but their audit lines could not be written:
    /// left on the queue, so a rerun sends them again.
    #[serde(skip_serializing_if = "is_zero")]
    pub(crate) sent_not_on_record: u64,
    /// Did not match the filters; left on the queue.
    pub(crate) not_matching: u64,
    /// Not matching, moved to the end of their FIFO group (`--rotate-groups`).
    pub(crate) moved: u64,
    /// Distinct messages received, by message group.
    #[serde(skip)]
    pub(crate) seen: BTreeMap<String, usize>,
    /// Messages that could not be moved: their groups were not read past them.
    #[serde(skip)]
    pub(crate) stuck: Vec<Stuck>,
    /// The limit was reached: the sweep did not look for more.
    #[serde(skip)]
    pub(crate) limited: bool,
    /// The ids SQS gave the replayed messages, when the sweep keeps them ([`Sweep::keeping_new_ids`]).
    pub(crate) new_message_ids: Vec<String>,
    /// Messages held that were received again: their lease ran out.
    #[serde(skip)]
    pub(crate) lapsed: usize,
}

impl Tally {
    /// Adds what a later sweep of the same run did.
    pub(crate) fn add(&mut self, tally: &Tally) {
        let total = self;
        total.replayed += tally.replayed;
        total.discarded += tally.discarded;
        total.deleted_on_resume += tally.deleted_on_resume;
        total.duplicates += tally.duplicates;
        total.lapsed += tally.lapsed;
        total.would_send += tally.would_send;
        total.failed += tally.failed;
        total.sent_not_on_record += tally.sent_not_on_record;
        total.not_matching = total.not_matching.max(tally.not_matching);
        total.moved += tally.moved;
        // What the queue holds is what the last sweep read: an earlier one released
        // what it did not remove, and the last read it again.
        total.seen = tally.seen.clone();
        total.stuck = tally.stuck.clone();
        total.limited = tally.limited;
        total.new_message_ids.extend(tally.new_message_ids.iter().cloned());
    }
}
