//! How a command ended, and the exit code that says so.

use crate::scanned::Shortfall;
use backpressure_startup::exit;

/// How a command ended, beyond an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finish {
    Done,
    /// Some messages were not replayed or discarded; they are still on the
    /// queue. Said by a dry run: what it found that could not be sent.
    Failures {
        count: u64,
        dry_run: bool,
    },
    /// A canary message came back, or the check could not read the whole queue.
    CanaryStopped,
    /// Messages in flight (held by someone else or an interrupted run) were not seen.
    Incomplete(u64),
    /// Messages the queue counts were not read.
    Unread(u64),
    /// Records shown or exported without their body: the S3 object that
    /// keeps it is missing, altered or unreadable.
    Unreadable(u64),
}

impl Finish {
    /// The finish a read's shortfall means; `Done` without one.
    pub fn from_shortfall(shortfall: Option<&Shortfall>) -> Self {
        match shortfall {
            None => Self::Done,
            Some(s) if s.exit_code == 4 => Self::Incomplete(s.unread),
            Some(s) => Self::Unread(s.unread),
        }
    }

    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Done => exit::SUCCESS,
            Self::Failures { .. } | Self::Unreadable(_) => exit::FAILURE,
            Self::CanaryStopped => 3,
            Self::Incomplete(_) => 4,
            Self::Unread(_) => 5,
        }
    }
}
