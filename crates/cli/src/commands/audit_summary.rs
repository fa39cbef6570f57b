//! `audit FILE`: what an audit trail says, across every run that appended to
//! it (a replay resumed after a kill, a later discard): per queue, how many
//! messages were moved, discarded or failed, by error code, who did it, and
//! when the first and last lines were written.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader};
use std::path::Path;

use serde::Serialize;

use crate::changing::audit::{Line, Outcome};
use crate::terminal::error::{AuditNamed, CliError};
use crate::terminal::printable::printable;

/// The trail of one queue.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct QueueTrail {
    /// Sent to their destination and confirmed (`replayed`).
    pub(crate) moved: u64,
    /// Found again after a confirmed send by a resumed run, and deleted (`deleted_on_resume`).
    pub(crate) deleted_on_resume: u64,
    /// Second records of a source message replayed, deleted unsent (`duplicate_deleted`).
    pub(crate) duplicates: u64,
    pub(crate) discarded: u64,
    /// Lines of `send_failed`, `delete_failed` or `discard_failed`.
    pub(crate) failed: u64,
    /// Distinct messages the trail names.
    pub(crate) messages: u64,
    pub(crate) by_result: BTreeMap<String, u64>,
    pub(crate) by_error_code: BTreeMap<String, u64>,
    pub(crate) operators: Vec<String>,
    pub(crate) first: String,
    pub(crate) last: String,
}

/// Every queue's trail in the file at `path`.
pub(crate) fn summarize(path: &Path) -> Result<BTreeMap<String, QueueTrail>, CliError> {
    let file = std::fs::File::open(path).map_err(|e| CliError::file(path, e))?;
    let mut trails: BTreeMap<String, QueueTrail> = BTreeMap::new();
    let mut messages: BTreeMap<String, std::collections::BTreeSet<String>> = BTreeMap::new();
    for (number, line) in BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| CliError::file(path, e))?;
        if line.trim().is_empty() {
            continue;
        }
        let line: Line = serde_json::from_str(&line).map_err(|source| CliError::Audit {
            path: path.to_owned(),
            line: number + 1,
            named: AuditNamed::Argument,
            source,
        })?;
        let trail = trails.entry(line.queue_url.clone()).or_default();
        match line.result {
            Outcome::Replayed => trail.moved += 1,
            Outcome::DeletedOnResume => trail.deleted_on_resume += 1,
            Outcome::DuplicateDeleted => trail.duplicates += 1,
            Outcome::Discarded => trail.discarded += 1,
            Outcome::SendFailed | Outcome::DeleteFailed | Outcome::DiscardFailed => {
                trail.failed += 1;
            }
            // Of a message counted by its own line: the body kept in S3.
            Outcome::ObjectDeleted | Outcome::ObjectDeleteFailed => {}
        }
        *trail.by_result.entry(line.result.as_str().to_owned()).or_default() += 1;
        if !matches!(line.result, Outcome::ObjectDeleted | Outcome::ObjectDeleteFailed) {
            let code = line.error_code.clone().unwrap_or_else(|| "(none)".to_owned());
            *trail.by_error_code.entry(code).or_default() += 1;
        }
        if !trail.operators.contains(&line.operator) {
            trail.operators.push(line.operator.clone());
        }
        // RFC 3339 in UTC with milliseconds: text order is time order.
        if trail.first.is_empty() || line.time < trail.first {
            trail.first.clone_from(&line.time);
        }
        if line.time > trail.last {
            trail.last.clone_from(&line.time);
        }
        messages.entry(line.queue_url).or_default().insert(line.queue_message_id);
    }
    for (queue, ids) in messages {
        if let Some(trail) = trails.get_mut(&queue) {
            trail.messages = ids.len() as u64;
        }
    }
    Ok(trails)
}

/// The trails as text, one block per queue: what became of its messages,
/// the lines that failed by what failed, then the lines by error code.
pub(crate) fn render(path: &Path, trails: &BTreeMap<String, QueueTrail>) -> String {
    let mut out = format!("{}: {} queue(s)\n", path.display(), trails.len());
    for (queue, t) in trails {
        let lines = |result: &str| t.by_result.get(result).copied().unwrap_or(0);
        let _ = writeln!(out, "\n{}", printable(queue, 200));
        let _ = writeln!(
            out,
            "  {} message(s): moved {}, deleted on resume {}, duplicates deleted {}, discarded {}",
            t.messages, t.moved, t.deleted_on_resume, t.duplicates, t.discarded,
        );
        let _ = writeln!(
            out,
            "  failed attempts: {} (send {}, delete {}, discard {}); a message that failed and \
             was then moved is counted in both",
            t.failed,
            lines("send_failed"),
            lines("delete_failed"),
            lines("discard_failed"),
        );
        let (deleted, kept) = (lines("object_deleted"), lines("object_delete_failed"));
        if deleted + kept > 0 {
            let _ = writeln!(
                out,
                "  bodies kept in S3: {deleted} object(s) deleted, {kept} not deleted (left to the \
                 bucket's lifecycle rule)"
            );
        }
        let _ = writeln!(out, "  first {}, last {}", t.first, t.last);
        let operators: Vec<String> = t.operators.iter().map(|o| printable(o, 200)).collect();
        let _ = writeln!(out, "  by {}", operators.join(", "));
        let _ = writeln!(out, "  audit lines by the message's error code:");
        for (code, n) in &t.by_error_code {
            let _ = writeln!(out, "    {:<32} {n:>6}", printable(code, 32));
        }
    }
    out
}
