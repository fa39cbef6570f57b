//! A received message's lease: when it runs out, and whether it was lost.

use std::time::{Duration, SystemTime};

use backpressure_batch::backoff::VisibilityChange;
use tokio::time::Instant;

/// SQS's limit on a message's visibility, counted from its first receipt.
pub const MAX_LEASE: Duration = Duration::from_secs(12 * 3600);

/// A message received and not yet settled.
#[derive(Debug)]
pub struct Lease {
    pub message_id: String,
    pub first_received: SystemTime,
    pub expires: Instant,
    /// A renewal was refused: SQS may already have handed the message to
    /// another consumer, so this worker's result must not delete it.
    pub lost: bool,
}

/// What became of a lease when its message settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unleased {
    Held,
    Lost,
    Gone,
}

/// Back on the queue at once.
pub fn release_now(receipt_handle: String) -> VisibilityChange {
    VisibilityChange { receipt_handle, timeout: Duration::ZERO }
}
