//! The lease table: every message in work, when its visibility lease runs
//! out, whether it was lost or given back, and, with idempotency, the claim
//! held on it; the beat that renews the visibility leases (the claims are
//! renewed on the same beat, through the idempotency store); and whether the
//! task is busy (for scale-in protection). A batch processor outside a worker
//! keeps the claims it renews in a table of its own.

use backpressure_core::sync::lock;
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::backoff::VisibilityChange;
use crate::record::SqsRecord;
use tokio::sync::watch;
use tokio::time::Instant;
use tracing::warn;

#[cfg(feature = "worker")]
use crate::worker::queue::WorkQueue;

/// SQS's limit on a message's visibility, counted from its first receipt.
pub(crate) const MAX_LEASE: Duration = Duration::from_secs(12 * 3600);

/// A message in work: its visibility lease, when this worker received it,
/// and the idempotency claim held on it.
#[derive(Debug)]
struct Lease {
    message_id: String,
    /// Whether this table renews the message's visibility (a worker's
    /// receive); a batch processor's own table holds claims alone.
    leased: bool,
    first_received: SystemTime,
    expires: Instant,
    /// A renewal was refused: SQS may already have handed the message to
    /// another consumer, so this worker's result must not delete it.
    lost: bool,
    /// Given back by a drain: no longer in work, and the same message
    /// received again is not released a second time in the count.
    released: bool,
    claim: Option<HeldClaim>,
}

impl Lease {
    /// Leased by a worker's receive and not given back.
    fn in_work(&self) -> bool {
        self.leased && !self.released
    }
}

/// An idempotency claim held on a message while its processor runs.
#[derive(Debug)]
pub(crate) struct HeldClaim {
    pub(crate) id: String,
    pub(crate) holder: String,
    /// When the processor's work under the claim must stop, unless renewed.
    pub(crate) lapse: watch::Sender<Instant>,
    /// The batch's deadline: never renewed past it.
    pub(crate) deadline: Instant,
}

/// A claim due for renewal: the entry it is held on, its record and holder,
/// and the lapse a renewal gives it.
#[derive(Debug, Clone)]
pub(crate) struct ClaimDue {
    pub(crate) entry: String,
    pub(crate) id: String,
    pub(crate) holder: String,
    pub(crate) until: Instant,
}

/// What became of a lease when its message settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unleased {
    /// Still held: the result may delete the message.
    Held,
    /// Lost: another consumer may hold the message; its result must not delete it.
    Lost,
    /// Already given up (a drain released it).
    Gone,
}

/// Back on the queue at once.
pub(crate) fn release_now(receipt_handle: String) -> VisibilityChange {
    VisibilityChange { receipt_handle, timeout: Duration::ZERO }
}

/// Every message in work, keyed by receipt handle (by message id for a
/// record without one).
#[derive(Debug)]
pub(crate) struct Leases {
    table: Mutex<HashMap<String, Lease>>,
    /// Leases in work (leased, not given back), changed only under the
    /// table's lock, so that asking needs no walk through the table.
    in_work: AtomicUsize,
    visibility: Duration,
    /// Whether any message is in work, for task scale-in protection.
    busy: watch::Sender<bool>,
}

impl Leases {
    /// An empty table for leases of `visibility` each.
    pub(crate) fn new(visibility: Duration) -> Self {
        Self {
            table: Mutex::default(),
            in_work: AtomicUsize::new(0),
            visibility,
            busy: watch::Sender::new(false),
        }
    }

    /// Turns true while any message is in work.
    pub(crate) fn busy(&self) -> watch::Receiver<bool> {
        self.busy.subscribe()
    }

    /// Messages in work: leased, not given back.
    pub(crate) fn len(&self) -> usize {
        self.in_work.load(Ordering::Relaxed)
    }

    /// Whether a drain already gave this message back (under another receipt handle).
    pub(crate) fn released_before(&self, message_id: &str) -> bool {
        lock(&self.table).values().any(|lease| lease.released && lease.message_id == message_id)
    }

    /// Leases the received records.
    pub(crate) fn lease(&self, records: &[SqsRecord]) {
        let now = SystemTime::now();
        let expires = Instant::now() + self.visibility;
        let mut table = lock(&self.table);
        for record in records {
            let Some(handle) = record.receipt_handle.clone() else { continue };
            let first_received = record
                .first_receive_timestamp_ms()
                .map_or(now, |ms| UNIX_EPOCH + Duration::from_millis(ms));
            let message_id = record.message_id.clone().unwrap_or_default();
            let lease = Lease {
                message_id,
                leased: true,
                first_received,
                expires,
                lost: false,
                released: false,
                claim: None,
            };
            let replaced = table.insert(handle, lease);
            if !replaced.is_some_and(|old| old.in_work()) {
                self.in_work.fetch_add(1, Ordering::Relaxed);
            }
        }
        if self.in_work.load(Ordering::Relaxed) > 0 {
            self.busy.send_if_modified(|busy| !std::mem::replace(busy, true));
        }
    }

    /// Stops renewing these leases, and any claim held on them; says whether
    /// the last was still held, lost (its result must not delete it), or
    /// already given up, and counts the lost ones.
    pub(crate) fn unlease<'a>(
        &self,
        handles: impl Iterator<Item = &'a str>,
        lost: &mut u64,
    ) -> Unleased {
        let mut table = lock(&self.table);
        let mut last = Unleased::Gone;
        for handle in handles {
            let removed = table.remove(handle);
            if removed.as_ref().is_some_and(Lease::in_work) {
                self.in_work.fetch_sub(1, Ordering::Relaxed);
            }
            last = match removed {
                Some(lease) if lease.released || !lease.leased => Unleased::Gone,
                Some(lease) if lease.lost => {
                    warn!(message_id = %lease.message_id, "its lease was lost: its result does not delete it");
                    *lost += 1;
                    Unleased::Lost
                }
                Some(_) => Unleased::Held,
                None => Unleased::Gone,
            };
        }
        if self.in_work.load(Ordering::Relaxed) == 0 {
            self.busy.send_if_modified(|busy| std::mem::replace(busy, false));
        }
        last
    }

    /// Gives up every lease still in work: the changes that put each message
    /// back at once. The leases stay, marked, so that a message a receive
    /// takes back is known as released already.
    pub(crate) fn release_all(&self) -> Vec<VisibilityChange> {
        let mut table = lock(&self.table);
        let unfinished = table
            .iter_mut()
            .filter(|(_, lease)| lease.in_work())
            .map(|(handle, lease)| {
                lease.released = true;
                release_now(handle.clone())
            })
            .collect();
        self.in_work.store(0, Ordering::Relaxed);
        drop(table);
        self.busy.send_replace(false);
        unfinished
    }

    /// The visibility renewals due now: every lease in work and not lost
    /// that runs out within half a visibility timeout, renewed for one more,
    /// never past 12 hours from its first receipt.
    fn due(&self, now: Instant, wall_now: SystemTime) -> Vec<VisibilityChange> {
        let visibility = self.visibility;
        lock(&self.table)
            .iter()
            .filter(|(_, lease)| {
                lease.leased
                    && !lease.lost
                    && !lease.released
                    && lease.expires <= now + visibility / 2
            })
            .map(|(handle, lease)| {
                let age = wall_now.duration_since(lease.first_received).unwrap_or_default();
                VisibilityChange {
                    receipt_handle: handle.clone(),
                    timeout: visibility.min(MAX_LEASE.saturating_sub(age)),
                }
            })
            .collect()
    }

    /// Records what SQS made of the renewals: refused (or at the 12-hour
    /// limit) → lost; otherwise the lease runs on.
    fn renewed(&self, now: Instant, renewals: &[VisibilityChange], refused: &[String]) {
        let refused: HashSet<&str> = refused.iter().map(String::as_str).collect();
        let mut table = lock(&self.table);
        for VisibilityChange { receipt_handle, timeout } in renewals {
            if let Some(lease) = table.get_mut(receipt_handle) {
                if refused.contains(receipt_handle.as_str()) || timeout.is_zero() {
                    lease.lost = true;
                } else {
                    lease.expires = now + *timeout;
                }
            }
        }
    }

    /// One beat: renews, before it runs out, the visibility lease of every
    /// message still in work.
    #[cfg(feature = "worker")]
    pub(crate) async fn renew_visibility(&self, queue: &WorkQueue) {
        let now = Instant::now();
        let renewals = self.due(now, SystemTime::now());
        if renewals.is_empty() {
            return;
        }
        let refused = queue.set_visibility(&renewals).await;
        self.renewed(now, &renewals, &refused);
    }

    /// Holds `claim` on the message in work under `entry` (its receipt handle).
    pub(crate) fn hold_claim(&self, entry: &str, message_id: &str, claim: HeldClaim) {
        let mut table = lock(&self.table);
        let lease = table.entry(entry.to_owned()).or_insert_with(|| Lease {
            message_id: message_id.to_owned(),
            leased: false,
            first_received: SystemTime::now(),
            expires: Instant::now(),
            lost: false,
            released: false,
            claim: None,
        });
        lease.claim = Some(claim);
    }

    /// The claim on `entry` is over (its work returned, or was cut): no more renewals.
    pub(crate) fn drop_claim(&self, entry: &str) {
        let mut table = lock(&self.table);
        if let Some(lease) = table.get_mut(entry) {
            lease.claim = None;
            if !lease.leased {
                table.remove(entry);
            }
        }
    }

    /// The claims whose lease ends within half of `lease` from `now`, each
    /// renewed for one more, never past its batch's deadline. A claim whose
    /// work is gone (cut at its batch's deadline before its own clean-up) is
    /// dropped.
    pub(crate) fn claims_due(&self, now: Instant, lease: Duration) -> Vec<ClaimDue> {
        let mut table = lock(&self.table);
        for held in table.values_mut() {
            if held.claim.as_ref().is_some_and(|c| c.deadline <= now || c.lapse.is_closed()) {
                held.claim = None;
            }
        }
        table.retain(|_, held| held.leased || held.claim.is_some());
        table
            .iter()
            .filter_map(|(entry, held)| Some((entry, held.claim.as_ref()?)))
            .filter(|(_, claim)| *claim.lapse.borrow() <= now + lease / 2)
            .map(|(entry, claim)| ClaimDue {
                entry: entry.clone(),
                id: claim.id.clone(),
                holder: claim.holder.clone(),
                until: (now + lease).min(claim.deadline),
            })
            .collect()
    }

    /// A renewal the store confirmed: the claim's work may run on until `due.until`.
    pub(crate) fn claim_renewed(&self, due: &ClaimDue) {
        let table = lock(&self.table);
        let claim = table.get(&due.entry).and_then(|lease| lease.claim.as_ref());
        if let Some(claim) = claim.filter(|claim| claim.holder == due.holder) {
            claim.lapse.send_replace(due.until);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn record(handle: &str, first_received_ms: u64) -> SqsRecord {
        SqsRecord::new(format!("m-{handle}"))
            .with_receipt_handle(handle)
            .with_attribute("ApproximateFirstReceiveTimestamp", first_received_ms.to_string())
    }

    #[tokio::test(start_paused = true)]
    async fn renewals_run_on_until_refused_or_twelve_hours_old() {
        let leases = Leases::new(Duration::from_secs(30));
        let now_ms = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64;
        let almost_twelve_hours = MAX_LEASE.as_millis() as u64 - 10_000;
        leases.lease(&[record("young", now_ms), record("old", now_ms - almost_twelve_hours)]);
        assert!(*leases.busy().borrow());
        assert!(leases.due(Instant::now(), SystemTime::now()).is_empty(), "not due yet");
        let later = Instant::now() + Duration::from_secs(20);
        let mut due = leases.due(later, SystemTime::now());
        due.sort_by(|a, b| a.receipt_handle.cmp(&b.receipt_handle));
        let timeouts: Vec<(&str, u64)> =
            due.iter().map(|c| (c.receipt_handle.as_str(), c.timeout.as_secs())).collect();
        assert_eq!(timeouts[1], ("young", 30));
        assert_eq!(timeouts[0].0, "old");
        assert!(timeouts[0].1 <= 10, "capped at the 12-hour limit: {timeouts:?}");
        leases.renewed(later, &due, &["young".to_owned()]);
        let mut lost = 0;
        assert_eq!(leases.unlease(std::iter::once("young"), &mut lost), Unleased::Lost);
        assert_eq!(leases.unlease(std::iter::once("old"), &mut lost), Unleased::Held);
        assert_eq!(leases.unlease(std::iter::once("old"), &mut lost), Unleased::Gone);
        assert_eq!(lost, 1);
        assert!(!*leases.busy().borrow(), "idle once every lease is settled");
    }
}
