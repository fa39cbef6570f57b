//! Before a change: who asks (a terminal, or `--yes`), how many messages
//! match (counted by a read, so the prompt and the progress bar say it), the
//! prompt itself.

use std::io::{BufRead, IsTerminal, Write};
use std::ops::ControlFlow;

use crate::aws::queue::Queue;
use crate::reading::filter::Filter;
use crate::reading::scan::scan;
use crate::terminal::error::CliError;

/// Without `--yes`, a change needs a terminal to ask on: checked before any call.
pub(crate) fn require_consent(yes: bool) -> Result<(), CliError> {
    if yes || std::io::stdin().is_terminal() { Ok(()) } else { Err(CliError::NoTerminal) }
}

/// Whether a count of the matching messages is worth a read: there is a
/// prompt to put it in, or a bar to draw it on.
pub(crate) fn wants_count(yes: bool) -> bool {
    !yes || std::io::stderr().is_terminal()
}

/// How many messages match, as a read saw them: `complete` is false when the
/// read could not see the whole queue (the count is then a lower bound).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Matching {
    pub(crate) count: u64,
    pub(crate) complete: bool,
}

impl Matching {
    /// `N` or `at least N`.
    pub(crate) fn describe(self) -> String {
        if self.complete { self.count.to_string() } else { format!("at least {}", self.count) }
    }
}

/// Reads the queue (without moving anything) and counts what `filter` matches.
pub(crate) async fn count_matching(queue: &Queue, filter: &Filter) -> Result<Matching, CliError> {
    let mut count = 0;
    let scanned = scan(queue, None, |entry| {
        count += u64::from(filter.matches(&entry));
        ControlFlow::Continue(())
    })
    .await?;
    Ok(Matching { count, complete: scanned.shortfall(&queue.url).is_none() })
}

/// The messages of `source` that `filter` matches, counted when there is a
/// prompt or a progress bar to say it ([`wants_count`]).
pub(crate) async fn matching_if_wanted(
    source: &Queue,
    filter: &Filter,
    yes: bool,
) -> Result<Option<Matching>, CliError> {
    if wants_count(yes) {
        Ok(Some(count_matching(&source.without_bodies(), filter).await?))
    } else {
        Ok(None)
    }
}

/// What a prompt says of the messages it acts on.
pub(crate) fn how_many(matching: Option<Matching>, limit: Option<usize>) -> String {
    match (matching, limit) {
        (Some(m), Some(limit)) => {
            format!("{} of the {} matching message(s)", m.count.min(limit as u64), m.describe())
        }
        (Some(m), None) => format!("{} matching message(s)", m.describe()),
        (None, Some(limit)) => format!("up to {limit} matching message(s)"),
        (None, None) => "every matching message".to_owned(),
    }
}

/// Prints `plan`, then asks on the terminal unless `yes`.
pub(crate) fn confirm(yes: bool, plan: &str) -> Result<(), CliError> {
    eprintln!("{plan}");
    if yes {
        return Ok(());
    }
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return Err(CliError::NoTerminal);
    }
    eprint!("Type yes to go on: ");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    stdin.lock().read_line(&mut answer).map_err(|e| CliError::file("<stdin>".as_ref(), e))?;
    if answer.trim().eq_ignore_ascii_case("yes") { Ok(()) } else { Err(CliError::NotConfirmed) }
}
