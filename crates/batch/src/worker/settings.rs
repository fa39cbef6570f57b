//! What the builder settles and the running worker reads.

use std::time::Duration;

/// How the worker polls, leases and drains (set by the builder's setters).
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub(crate) queue_name: String,
    pub(crate) pollers: usize,
    pub(crate) max_in_flight: usize,
    pub(crate) receive_wait: Duration,
    pub(crate) visibility_timeout: Duration,
    pub(crate) message_timeout: Duration,
    pub(crate) drain: Duration,
}
