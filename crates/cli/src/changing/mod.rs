//! Changing a queue: the sweep that replays or discards what a filter
//! matches, where a replayed message goes and what is sent there, the pace
//! (`--rate`), and the audit trail that makes a rerun resume.

pub(crate) mod audit;
pub(crate) mod canary_wait;
mod consumer_backoff;
pub(crate) mod destination;
pub(crate) mod outgoing;
pub(crate) mod pace;
pub(crate) mod sweep;
