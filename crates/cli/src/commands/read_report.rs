//! What `stats`, `list` and `export` say around what they print: whether it
//! covers every message the queue counted, what became of the messages the
//! read held, and the exit status its shortfall means.

use std::io::Write;
use std::path::Path;

use crate::aws::queue::Queue;
use crate::reading::scanned::{Scanned, Shortfall};
use crate::terminal::error::CliError;
use crate::terminal::exit_status::Finish;

/// Prints what a read missed, and the finish it means.
pub(crate) fn finish(shortfall: Option<Shortfall>) -> Finish {
    if let Some(shortfall) = &shortfall {
        eprintln!("incomplete: {}.", shortfall.explanation);
    }
    shortfall.as_ref().map_or(Finish::Done, Shortfall::finish)
}

/// The first line a person reads: whether what follows covers every message
/// the queue counted, or stopped at `--limit` with more to come.
pub(crate) fn headline(scanned: &Scanned, incomplete: bool, stopped_at: Option<usize>) -> String {
    let (read, counted) = (scanned.read, scanned.counted);
    if let Some(limit) = stopped_at {
        format!(
            "Stopped at --limit {limit}, with more messages matching: {read} of the {counted} \
             message(s) the queue counted were read.\n"
        )
    } else if incomplete {
        format!(
            "INCOMPLETE: {read} of the {counted} message(s) the queue counted were read; what \
             follows covers only those (the last line says why).\n"
        )
    } else {
        format!("Complete: {read} message(s) read, every one the queue counted ({counted}).\n")
    }
}

/// The last line of `stats` and `list`, whose first (`headline`) gave the counts.
pub(crate) fn closing(queue: &Queue, scanned: &Scanned) -> String {
    format!("Read from {}{}.\n", queue.url, released(queue, scanned))
}

/// What became of the messages a read held: moved, and visible again.
pub(crate) fn released(queue: &Queue, scanned: &Scanned) -> String {
    let moved = if scanned.moved > 0 {
        format!(", {} moved to the end of their group", scanned.moved)
    } else {
        String::new()
    };
    let mut text = format!("{moved}; all visible again");
    if scanned.not_released > 0 {
        text = format!(
            "{text} except {}, which SQS would not release (visible after {} s)",
            scanned.not_released, queue.lease
        );
    }
    text
}

/// `text` on stdout, flushed; an error names `<stdout>`, so a closed pipe is
/// known as one.
pub(crate) fn print(text: &str) -> Result<(), CliError> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(|e| CliError::file(Path::new("<stdout>"), e))
}
