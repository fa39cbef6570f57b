//! Where the engine leaves a record before the batch report: what the
//! engine's steps (the claim, the processor, the quarantine) hand each other.

use crate::body::Labels;
use crate::outcome::{ErrorCode, Outcome};

/// A record settled by one of the engine's steps: its final [`Outcome`], or a
/// permanent failure whose quarantine record is still to be written (an
/// outcome only once the store confirmed it).
#[derive(Debug)]
pub(crate) enum Settled {
    /// The record's outcome.
    Final(Outcome),
    /// Permanently failed; quarantined next.
    ToQuarantine {
        /// The quarantine record's `errorCode`.
        code: ErrorCode,
        /// What is wrong, for an operator.
        detail: String,
        /// The labels read from the body, for the quarantine record; empty
        /// when the step that failed it never read the body (the claim), and
        /// the engine fills them in.
        labels: Labels,
    },
}

impl Settled {
    /// A permanent failure, its body's fields not read yet.
    pub(crate) fn to_quarantine(code: ErrorCode, detail: impl Into<String>) -> Self {
        Self::ToQuarantine { code, detail: detail.into(), labels: Labels::default() }
    }

    /// Whether the record is acknowledged (deleted from its queue) as it stands.
    pub(crate) fn acknowledges(&self) -> bool {
        matches!(
            self,
            Self::Final(
                Outcome::Done
                    | Outcome::Skipped
                    | Outcome::Duplicate { .. }
                    | Outcome::Quarantined { .. }
            )
        )
    }
}
