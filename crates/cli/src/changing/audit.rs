//! The audit trail: one JSON line per message replayed or discarded, synced
//! to disk before the message is deleted from its queue, and the record a
//! rerun reads to resume without sending anything twice.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use backpressure_core::time::rfc3339;
use serde::{Deserialize, Serialize};

use crate::reading::spill::{Keys, SpillError};
use crate::terminal::error::{AuditNamed, CliError};

/// What happened to one message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Outcome {
    /// SQS confirmed the send; the message is deleted here next.
    Replayed,
    /// SQS refused the send; the message stays here.
    SendFailed,
    /// Sent (see the earlier `replayed` line) but not deleted here; a rerun deletes it.
    DeleteFailed,
    /// Found here again by a rerun after its confirmed send, and deleted without sending.
    DeletedOnResume,
    Discarded,
    /// SQS refused the delete; the message stays here.
    DiscardFailed,
    /// The S3 object that held the body of a message replayed or discarded (see `object`) is deleted.
    ObjectDeleted,
    /// S3 refused that delete: the object stays until the bucket's lifecycle rule expires it.
    ObjectDeleteFailed,
    /// A second record of a source message already replayed (see `sourceKey`),
    /// deleted without sending; its S3 object, shared with the first, is kept.
    DuplicateDeleted,
}

/// One line of the audit file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Line {
    pub(crate) time: String,
    /// The caller's ARN from STS `GetCallerIdentity`.
    pub(crate) operator: String,
    /// `replay` or `discard`.
    pub(crate) action: String,
    pub(crate) queue_url: String,
    /// The message's id on that queue.
    pub(crate) queue_message_id: String,
    pub(crate) original_message_id: String,
    pub(crate) new_message_id: Option<String>,
    pub(crate) destination: Option<String>,
    pub(crate) error_code: Option<String>,
    pub(crate) result: Outcome,
    /// When the send (or delete) was started, for rate checks.
    pub(crate) started: String,
    /// SQS's reason, for a failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) reason: Option<String>,
    /// `s3://bucket/key`: the object that held the message's body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) object: Option<String>,
    /// Replays: the source message this is a record of (source queue ARN,
    /// original message id, body SHA-256), so a rerun knows it was replayed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) source_key: Option<String>,
}

/// The open audit file.
#[derive(Debug)]
pub(crate) struct Audit {
    path: PathBuf,
    /// Shared with the blocking thread that writes and syncs it.
    file: Arc<Mutex<File>>,
    /// Messages of this queue whose send SQS confirmed, in this run or an
    /// earlier one (on disk past a bound: an audit file grows with every replay).
    sent: Mutex<Keys>,
    /// Their source messages ([`Line::source_key`]).
    sent_sources: Mutex<Keys>,
}

impl Outcome {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Replayed => "replayed",
            Self::SendFailed => "send_failed",
            Self::DeleteFailed => "delete_failed",
            Self::DeletedOnResume => "deleted_on_resume",
            Self::Discarded => "discarded",
            Self::DiscardFailed => "discard_failed",
            Self::ObjectDeleted => "object_deleted",
            Self::ObjectDeleteFailed => "object_delete_failed",
            Self::DuplicateDeleted => "duplicate_deleted",
        }
    }
}

impl Audit {
    /// Opens (or creates) the file for appending and reads which messages of
    /// `queue_url` were already sent. A last line cut short (a write that did
    /// not finish: a full disk, a crash) is removed, with a warning; a bad
    /// line anywhere else is an error. The file is synced once before
    /// anything is sent, so one that cannot be (`/dev/null`) is refused first.
    pub(crate) fn open(path: &Path, queue_url: &str) -> Result<Self, CliError> {
        let mut sent = Keys::new()?;
        let mut sent_sources = Keys::new()?;
        let tail = match File::open(path) {
            Ok(file) => read_sent(path, file, queue_url, &mut sent, &mut sent_sources)?,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Tail::Whole,
            Err(error) => return Err(CliError::file(path, error)),
        };
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| CliError::file(path, e))?;
        let mut handle: &File = &file;
        let mended = match tail {
            Tail::Whole => Ok(()),
            Tail::NoNewline => handle.write_all(b"\n"),
            Tail::Torn { complete } => {
                tracing::warn!(
                    path = %path.display(),
                    "the audit file's last line was cut short (a write that did not finish): \
                     removed; the message it named may be sent again"
                );
                file.set_len(complete)
            }
        };
        mended.and_then(|()| file.sync_data()).map_err(|e| CliError::file(path, e))?;
        if let Some(failure) = sent.failure().or_else(|| sent_sources.failure()) {
            return Err(failure.into());
        }
        Ok(Self {
            path: path.to_owned(),
            file: Arc::new(Mutex::new(file)),
            sent: Mutex::new(sent),
            sent_sources: Mutex::new(sent_sources),
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Whether this queue message's send was confirmed before.
    pub(crate) fn was_sent(&self, queue_message_id: &str) -> bool {
        self.sent.lock().is_ok_and(|mut sent| sent.contains(queue_message_id))
    }

    /// Whether a record of this source message was replayed from this queue before.
    pub(crate) fn source_replayed(&self, source_key: &str) -> bool {
        self.sent_sources.lock().is_ok_and(|mut sent| sent.contains(source_key))
    }

    /// The first error of its stores: what `was_sent` and `source_replayed`
    /// answered since may be wrong.
    pub(crate) fn failure(&self) -> Option<SpillError> {
        let first = self.sent.lock().ok().and_then(|mut keys| keys.failure());
        first.or_else(|| self.sent_sources.lock().ok().and_then(|mut keys| keys.failure()))
    }

    /// Appends `lines` and syncs them to disk, then logs each; returns only
    /// once they are durable, so a delete that follows is on record.
    ///
    /// The write and its sync run on a blocking thread: the sweep's loops
    /// share the runtime's one thread, and a sync there would hold back every
    /// other loop's calls for as long as the disk takes.
    pub(crate) async fn write(&self, lines: &[Line]) -> Result<(), CliError> {
        if lines.is_empty() {
            return Ok(());
        }
        let mut text = String::new();
        for line in lines {
            text.push_str(&serde_json::to_string(line).unwrap_or_default());
            text.push('\n');
        }
        let file = Arc::clone(&self.file);
        let durable = tokio::task::spawn_blocking(move || {
            let file = file.lock().map_err(|_| None)?;
            let mut handle: &File = &file;
            handle.write_all(text.as_bytes()).and_then(|()| file.sync_data()).map_err(Some)
        });
        match durable.await {
            Ok(Ok(())) => {}
            Ok(Err(Some(source))) => {
                return Err(CliError::AuditWrite { path: self.path.clone(), source });
            }
            Ok(Err(None)) => return Err(poisoned(&self.path)),
            Err(joined) => std::panic::resume_unwind(joined.into_panic()),
        }
        let replayed = || lines.iter().filter(|l| l.result == Outcome::Replayed);
        if let Ok(mut sent) = self.sent.lock() {
            for line in replayed() {
                sent.insert(&line.queue_message_id, None);
            }
        }
        if let Ok(mut sources) = self.sent_sources.lock() {
            for key in replayed().filter_map(|l| l.source_key.as_deref()) {
                sources.insert(key, None);
            }
        }
        for line in lines {
            log(line);
        }
        Ok(())
    }
}

/// How an audit file ends.
enum Tail {
    /// With a newline, or empty.
    Whole,
    /// With a whole line and no newline after it.
    NoNewline,
    /// With part of a line: the file's whole lines end at byte `complete`.
    Torn { complete: u64 },
}

/// Reads which messages of `queue_url` the file says were sent into `sent`
/// (and their sources into `sources`), and how it ends.
fn read_sent(
    path: &Path,
    file: File,
    queue_url: &str,
    sent: &mut Keys,
    sources: &mut Keys,
) -> Result<Tail, CliError> {
    let mut reader = BufReader::new(file);
    let (mut buffer, mut number, mut complete) = (Vec::new(), 0, 0_u64);
    loop {
        buffer.clear();
        let read = reader.read_until(b'\n', &mut buffer).map_err(|e| CliError::file(path, e))?;
        if read == 0 {
            return Ok(Tail::Whole);
        }
        number += 1;
        let ended = buffer.last() == Some(&b'\n');
        let entry = if buffer.iter().all(u8::is_ascii_whitespace) {
            None
        } else {
            match serde_json::from_slice::<Line>(&buffer) {
                Ok(entry) => Some(entry),
                Err(_) if !ended => return Ok(Tail::Torn { complete }),
                Err(source) => {
                    return Err(CliError::Audit {
                        path: path.to_owned(),
                        line: number,
                        named: AuditNamed::Flag,
                        source,
                    });
                }
            }
        };
        if let Some(entry) =
            entry.filter(|e| e.result == Outcome::Replayed && e.queue_url == queue_url)
        {
            sent.insert(&entry.queue_message_id, None);
            if let Some(key) = &entry.source_key {
                sources.insert(key, None);
            }
        }
        if !ended {
            return Ok(Tail::NoNewline);
        }
        complete += read as u64;
    }
}

/// One audit line to the log: what went wrong as a warning, the rest at
/// debug (`-v`): the file holds every line, and one per message would push
/// the progress bar off a terminal. Empty fields are left out.
fn log(line: &Line) {
    let failed = matches!(
        line.result,
        Outcome::SendFailed
            | Outcome::DeleteFailed
            | Outcome::DiscardFailed
            | Outcome::ObjectDeleteFailed
    );
    if !failed && !tracing::enabled!(target: "audit", tracing::Level::DEBUG) {
        return;
    }
    let result = line.result.as_str();
    macro_rules! audit_line {
        ($level:ident) => {
            tracing::$level!(
                target: "audit",
                queue_message_id = %line.queue_message_id,
                original_message_id = %line.original_message_id,
                new_message_id = present(&line.new_message_id),
                destination = present(&line.destination),
                error_code = present(&line.error_code),
                object = present(&line.object),
                reason = present(&line.reason),
                "{} {result}",
                line.action
            )
        };
    }
    if failed {
        audit_line!(warn);
    } else {
        audit_line!(debug);
    }
}

/// A field for the log: an absent or empty one is left out of the line.
fn present(value: &Option<String>) -> Option<&str> {
    value.as_deref().filter(|v| !v.is_empty())
}

fn poisoned(path: &Path) -> CliError {
    CliError::file(path, std::io::Error::other("an earlier write panicked"))
}

/// Now, as the audit file writes times.
pub(crate) fn now() -> String {
    now_minus(Duration::ZERO)
}

/// `ago` before now, as the audit file writes times (as quarantine records do).
pub(crate) fn now_minus(ago: Duration) -> String {
    let now = SystemTime::now();
    rfc3339(now.checked_sub(ago).unwrap_or(now))
}

#[cfg(test)]
mod tests;
