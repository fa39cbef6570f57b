//! How a command ended, the exit code that says so, and what each code means.

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
    /// `doctor`'s verdict, as its own exit code (`DOCTOR_EXIT_CODES`).
    Checked(u8),
}

impl Finish {
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Done => exit::SUCCESS,
            Self::Failures { .. } | Self::Unreadable(_) => exit::FAILURE,
            Self::CanaryStopped => 3,
            Self::Incomplete(_) => 4,
            Self::Unread(_) => 5,
            Self::Checked(code) => *code,
        }
    }
}

/// The exit codes, as `--help` and docs/operator-cli.md list them.
pub(crate) const EXIT_CODES: &str = "\
Exit codes:
  0  done: every message the queue counted was read (and acted on)
  1  an error (named, with the AWS operation and queue), messages that could not be
     replayed or discarded and are still on the queue, no message with the id `show`
     was given, a body kept in S3 that is missing or altered (show, export), or the
     prompt was declined
  2  a usage error: a bad flag or value, an --out that exists, a profile the config
     files do not have, no region, or a change without --yes and no terminal
  3  the canary came back, or could not be checked: nothing more was replayed
  4  messages in flight were not seen (held by a consumer or an interrupted run):
     run again after their visibility timeout
  5  messages the queue counts were not read: on a FIFO queue, past the first
     messages of a group (run again with --rotate-groups), or past a message that
     could not be moved, or leases that lapsed mid-read (give a longer
     --visibility-timeout)
 130 stopped by SIGINT (Ctrl-C) or SIGTERM: what it held is visible again";
