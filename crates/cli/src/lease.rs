//! What a read holds, and the heartbeat that keeps holding it.
//!
//! A scan or a sweep holds every message it read and has not deleted, so the
//! next receive returns new ones. A queue that takes longer to read than
//! `--visibility-timeout` would hand the first messages out again half-way,
//! so the heartbeat extends each lease before it ends (batched
//! `ChangeMessageVisibilityBatch`, as sqs-worker's heartbeat does). A lease
//! that lapses anyway shows when its message is received again: counted, and
//! said with the flag that gives more time.

use std::collections::HashMap;
use std::convert::Infallible;
use std::time::Duration;

use futures::StreamExt;
use tokio::time::{Instant, sleep};

use crate::queue::Queue;

/// Lease extensions in flight at once (ten messages each).
const RENEWALS_AT_ONCE: usize = 32;

/// One message held.
#[derive(Debug, Clone)]
struct Lease {
    receipt_handle: String,
    expires: Instant,
}

/// Every message held, by the id SQS gave the copy received: the newest
/// receipt handle (an older one stops working once a message is received again).
#[derive(Debug, Default)]
pub struct Holding {
    leases: HashMap<String, Lease>,
    /// Messages received again while held: their lease ran out.
    pub lapsed: usize,
}

impl Holding {
    /// Holds a copy received before `expires` (the receive's start plus the lease).
    pub fn hold(&mut self, received_id: &str, receipt_handle: &str, expires: Instant) {
        let lease = Lease { receipt_handle: receipt_handle.to_owned(), expires };
        self.leases.insert(received_id.to_owned(), lease);
    }

    /// Whether this copy is held.
    pub fn holds(&self, received_id: &str) -> bool {
        self.leases.contains_key(received_id)
    }

    /// The newest handle of a held copy.
    pub fn handle(&self, received_id: &str) -> Option<&str> {
        self.leases.get(received_id).map(|lease| lease.receipt_handle.as_str())
    }

    /// A held copy received again: its lease had run out. Keeps the new handle.
    pub fn received_again(&mut self, received_id: &str, receipt_handle: &str, expires: Instant) {
        self.lapsed += 1;
        self.hold(received_id, receipt_handle, expires);
    }

    /// No longer held (deleted, moved or released).
    pub fn forget(&mut self, received_id: &str) {
        self.leases.remove(received_id);
    }

    pub fn is_empty(&self) -> bool {
        self.leases.is_empty()
    }

    /// Every handle held, and nothing held afterwards.
    pub fn take_handles(&mut self) -> Vec<String> {
        self.leases.drain().map(|(_, lease)| lease.receipt_handle).collect()
    }

    /// The copies whose lease ends before `horizon`: (received id, handle).
    fn due(&self, horizon: Instant) -> Vec<(String, String)> {
        self.leases
            .iter()
            .filter(|(_, lease)| lease.expires <= horizon)
            .map(|(id, lease)| (id.clone(), lease.receipt_handle.clone()))
            .collect()
    }

    /// Renewed until `expires`, unless refused or received again meanwhile.
    fn renewed(&mut self, renewed: &[(String, String)], refused: &[usize], expires: Instant) {
        for (index, (id, handle)) in renewed.iter().enumerate() {
            if refused.contains(&index) {
                continue;
            }
            if let Some(lease) = self.leases.get_mut(id)
                && lease.receipt_handle == *handle
            {
                lease.expires = expires;
            }
        }
    }
}

/// How long a lease lasts, from `--visibility-timeout`.
pub fn lease_of(queue: &Queue) -> Duration {
    Duration::from_secs(queue.lease.unsigned_abs().into())
}

/// Extends, for one more lease, every lease `holding` keeps that would end
/// within half a lease; forever, so it runs beside the read it serves.
/// `with` gives it the holding for a moment, never across a call.
pub async fn keep(queue: &Queue, with: impl Fn(&mut dyn FnMut(&mut Holding))) -> Infallible {
    let lease = lease_of(queue);
    let beat = (lease / 4).max(Duration::from_millis(250));
    loop {
        sleep(beat).await;
        let mut due = Vec::new();
        with(&mut |holding| due = holding.due(Instant::now() + lease / 2));
        // Many at once: one call after another would let the last leases of
        // a large holding lapse while the first are renewed; a bound keeps a
        // holding of 100,000 from opening 10,000 calls at a time.
        let renewals = due.chunks(10).map(|chunk| async move {
            let sent = Instant::now();
            let handles: Vec<&str> = chunk.iter().map(|(_, handle)| handle.as_str()).collect();
            (chunk, sent, queue.change_visibility(&handles, queue.lease).await)
        });
        let answers: Vec<_> =
            futures::stream::iter(renewals).buffer_unordered(RENEWALS_AT_ONCE).collect().await;
        for (chunk, sent, answer) in answers {
            match answer {
                Ok(refused) => with(&mut |holding| holding.renewed(chunk, &refused, sent + lease)),
                // A renewal that fails is tried again on the next beat; a lease
                // that lapses meanwhile shows when its message comes back.
                Err(error) => tracing::debug!(error = %error, "a lease extension failed"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn due_leases_are_renewed_unless_refused_or_received_again() {
        let now = Instant::now();
        let mut holding = Holding::default();
        holding.hold("a", "ha", now + Duration::from_secs(1));
        holding.hold("b", "hb", now + Duration::from_secs(1));
        holding.hold("c", "hc", now + Duration::from_secs(100));
        let mut due = holding.due(now + Duration::from_secs(2));
        due.sort();
        assert_eq!(due, [("a".into(), "ha".into()), ("b".into(), "hb".into())]);
        holding.received_again("a", "ha2", now + Duration::from_secs(1));
        holding.renewed(&due, &[1], now + Duration::from_secs(50));
        // "a" has a new handle the renewal did not carry; "b" was refused.
        let mut still = holding.due(now + Duration::from_secs(2));
        still.sort();
        assert_eq!(still, [("a".into(), "ha2".into()), ("b".into(), "hb".into())]);
        assert_eq!(holding.lapsed, 1);
        let mut handles = holding.take_handles();
        handles.sort();
        assert_eq!(handles, ["ha2", "hb", "hc"]);
        assert!(holding.is_empty());
    }
}
