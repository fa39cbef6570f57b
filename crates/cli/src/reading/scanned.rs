//! What a scan saw, and what it missed: the queue's own count taken before
//! the scan, compared with what the scan read.

use std::collections::BTreeMap;

use crate::reading::rotate::Stuck;
use crate::terminal::exit_status::Finish;

/// What a scan saw.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Scanned {
    /// Distinct messages read.
    pub(crate) read: usize,
    /// Messages SQS would not release; visible again when their lease ends.
    pub(crate) not_released: usize,
    /// Visible messages the queue counted before the scan.
    pub(crate) counted: u64,
    /// Messages in flight before the scan (held by a consumer or an earlier run).
    pub(crate) in_flight: u64,
    /// When those are visible again, for a person (see [`crate::aws::queue::Queue::when_visible`]).
    pub(crate) visible_again: String,
    /// Messages read per message group.
    pub(crate) groups: BTreeMap<String, usize>,
    /// Messages moved to the end of their group.
    pub(crate) moved: usize,
    /// Second copies left by an interrupted move, removed (or, not moving, skipped).
    pub(crate) duplicates: usize,
    /// Messages that could not be moved: their groups were not read past them.
    pub(crate) stuck: Vec<Stuck>,
    /// A `visit` stopped the scan early (a limit, a message found).
    pub(crate) stopped_early: bool,
    /// Messages received again while held: their lease ran out mid-scan.
    pub(crate) lapsed: usize,
    /// The lease, in seconds (`--visibility-timeout`).
    pub(crate) lease: i32,
}

/// Why a scan's result is not the whole queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Shortfall {
    /// Messages the queue counts that were not read.
    pub(crate) unread: u64,
    /// One paragraph for the operator: what, why, what to do.
    pub(crate) explanation: String,
    /// The exit code: 4 (messages in flight, run again later) or 5 (not read).
    pub(crate) exit_code: u8,
}

impl Shortfall {
    /// The finish this shortfall means.
    pub(crate) fn finish(&self) -> Finish {
        if self.exit_code == 4 {
            Finish::Incomplete(self.unread)
        } else {
            Finish::Unread(self.unread)
        }
    }
}

impl Scanned {
    /// Messages the queue counted that this scan did not read.
    pub(crate) fn unread(&self) -> u64 {
        self.counted.saturating_sub((self.read + self.duplicates) as u64)
    }

    /// What the scan of `url` missed, or `None` when it read everything the queue counted.
    pub(crate) fn shortfall(&self, url: &str) -> Option<Shortfall> {
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
            let why = self.why_groups_unread();
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

    /// Why a FIFO queue's scan did not read every group to its end.
    fn why_groups_unread(&self) -> String {
        if !self.stuck.is_empty() {
            let stuck: Vec<String> = self
                .stuck
                .iter()
                .take(10)
                .map(|s| {
                    format!("group {} at message {}: {}", s.group, s.queue_message_id, s.reason)
                })
                .collect();
            return format!(
                "these groups were not read past a message that could not be moved: {}",
                stuck.join("; ")
            );
        }
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
    }
}
