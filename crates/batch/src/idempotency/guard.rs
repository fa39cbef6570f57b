//! The engine's side of idempotency: the batch's pre-check, each message's
//! claim, its lease while the processor runs, and its completion or release.

use std::any::Any;
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use backpressure_core::error::error_chain;
use tokio::sync::watch;
use tokio::time::{Instant, sleep_until, timeout_at};
use tracing::{info, warn};

use super::claim::ClaimOutcome;
use super::erased::SharedStore;
use super::id::{id_head, id_in};
use super::requests::{ClaimRequest, CompleteRequest, LookupRequest, ReleaseRequest, RenewRequest};
use super::write::UnfinishedWrite;
use super::{CLOCK_SKEW_MARGIN, ClaimLease, Idempotency, IdempotencyStore, MissingKey, body_hash};
use crate::outcome::{ErrorCode, Outcome, RetryCause, Verdict};
use crate::settled::Settled;
use crate::worker::leases::{HeldClaim, Leases};

/// Results longer than this are not stored: a DynamoDB item holds at most 400 KB.
pub(crate) const MAX_STORED_RESULT_BYTES: usize = 300_000;

/// One message's claim, held while its processor runs.
#[derive(Debug)]
pub(crate) struct Claimed {
    id: String,
    holder: String,
    /// The message's entry in the lease table (its receipt handle).
    entry: String,
    /// When this consumer stops working under the claim, unless renewed.
    lapse: watch::Receiver<Instant>,
}

impl Claimed {
    /// When the claim lapses, as last renewed.
    pub(crate) fn lapse(&self) -> Instant {
        *self.lapse.borrow()
    }
}

/// What the engine does with a message after [`Guard::begin`]: run the
/// processor, under the claim if there is one (none: no key, and the policy
/// allows it), or settle it unprocessed (a duplicate, a contended key, a
/// claim the store did not answer, a key reused or missing).
pub(crate) type Before = Result<Option<Claimed>, Settled>;

/// A retry that stays invisible until the other holder's lease is over.
fn contended(until: SystemTime) -> Outcome {
    let left = until.duration_since(SystemTime::now()).unwrap_or_default();
    let retry_after = Duration::from_secs(left.as_secs_f64().ceil().max(1.0) as u64);
    Outcome::Retry {
        cause: RetryCause::ClaimContended,
        detail: "another consumer holds its idempotency claim".into(),
        retry_after: Some(retry_after),
    }
}

/// One batch's view of the store: the pre-check's answers and its counts.
#[derive(Debug)]
pub(crate) struct BatchClaims {
    /// What every id of the batch begins with: the prefix and the scope.
    scope: String,
    completed: HashMap<String, ClaimOutcome>,
    deadline: Instant,
    processing_deadline: Instant,
    pub store_errors: AtomicUsize,
}

/// Claims in a store, and the claims this process holds.
pub(crate) struct Guard {
    store: SharedStore,
    ttl: Duration,
    lease: ClaimLease,
    missing_key: MissingKey,
    scope: Option<String>,
    key_prefix: String,
    /// The processor's longest side effect: no renewed lease is shorter.
    side_effect: Option<Duration>,
    /// Where renewed claims are held: a worker's lease table, beside each
    /// message's visibility lease, or a table of this processor's own.
    table: Option<Arc<Leases>>,
}

impl std::fmt::Debug for Guard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guard").field("ttl", &self.ttl).field("lease", &self.lease).finish()
    }
}

/// `Instant` to `SystemTime`, through the time left until it.
fn wall(at: Instant) -> SystemTime {
    SystemTime::now() + at.saturating_duration_since(Instant::now())
}

impl Guard {
    pub(crate) fn new(settings: Idempotency) -> Self {
        Self {
            store: settings.store,
            ttl: settings.ttl,
            lease: settings.lease,
            missing_key: settings.missing_key,
            scope: settings.scope,
            key_prefix: settings.key_prefix,
            side_effect: None,
            table: matches!(settings.lease, ClaimLease::Renewed(_))
                .then(|| Arc::new(Leases::new(Duration::ZERO))),
        }
    }

    /// Claims of `lease` from now on, held in `table` beside each message's
    /// visibility lease (a worker's: its visibility timeout, renewed on its
    /// heartbeat).
    #[cfg(feature = "worker")]
    pub(crate) fn renew_in(&mut self, lease: Duration, table: Arc<Leases>) {
        self.lease = ClaimLease::Renewed(lease);
        self.table = Some(table);
    }

    /// Leases renewed claims for at least `timeout` and a margin: the
    /// processor's longest side effect, started at once, then ends before
    /// its claim can lapse, renewed or not.
    pub(crate) fn set_side_effect_timeout(&mut self, timeout: Option<Duration>) {
        self.side_effect = timeout;
    }

    /// A renewed claim's lease: the settings', or the processor's longest
    /// side effect and a margin when that is longer.
    fn renewed_lease(&self, lease: Duration) -> Duration {
        self.side_effect.map_or(lease, |side_effect| lease.max(side_effect + CLOCK_SKEW_MARGIN))
    }

    /// The batch's pre-check: which of its keys are already completed, one
    /// read per 100 keys, so a redelivered batch costs reads, not writes.
    pub(crate) async fn begin_batch<K: AsRef<str>>(
        &self,
        queue: Option<&str>,
        keys: impl Iterator<Item = K>,
        deadline: Instant,
        processing_deadline: Instant,
    ) -> BatchClaims {
        let scope = self.scope.as_deref().or(queue).unwrap_or("default");
        let scope = id_head(&self.key_prefix, scope);
        let mut ids: Vec<String> = keys.map(|key| id_in(&scope, key.as_ref())).collect();
        ids.sort_unstable();
        ids.dedup();
        let claims = BatchClaims {
            scope,
            completed: HashMap::new(),
            deadline,
            processing_deadline,
            store_errors: AtomicUsize::new(0),
        };
        if ids.is_empty() {
            return claims;
        }
        let lookup = LookupRequest { ids: &ids, now: SystemTime::now() };
        let read = timeout_at(processing_deadline, self.store.completed(&lookup));
        match read.await {
            Ok(Ok(completed)) => BatchClaims { completed, ..claims },
            Ok(Err(e)) => {
                warn!(error = %error_chain(&e), "the completed-keys pre-check failed; each message's claim decides");
                claims.store_errors.fetch_add(1, Ordering::Relaxed);
                claims
            }
            Err(_) => {
                warn!("the completed-keys pre-check ran out of time; each message's claim decides");
                claims.store_errors.fetch_add(1, Ordering::Relaxed);
                claims
            }
        }
    }

    /// Claims the message's key, or says what the message gets instead.
    pub(crate) async fn begin(
        &self,
        claims: &BatchClaims,
        key: Option<&str>,
        body: &str,
        message_id: &str,
        entry: &str,
    ) -> Before {
        let Some(key) = key.filter(|key| !key.is_empty()) else {
            return match self.missing_key {
                MissingKey::ProcessUnclaimed => {
                    warn!(message_id, "no idempotency key: processed without a claim");
                    Ok(None)
                }
                MissingKey::Quarantine => Err(Settled::to_quarantine(
                    ErrorCode::MissingIdempotencyKey,
                    "the message has no idempotency key, and messages without one are quarantined",
                )),
            };
        };
        let id = id_in(&claims.scope, key);
        let validation = body_hash(body);
        if let Some(found) = claims.completed.get(&id) {
            return Self::found(&id, &validation, found.clone(), message_id);
        }
        let now = SystemTime::now();
        let local_now = Instant::now();
        let until_deadline = claims.deadline.saturating_duration_since(local_now);
        let works_for = match self.lease {
            ClaimLease::UntilDeadline => until_deadline,
            ClaimLease::Renewed(lease) => self.renewed_lease(lease).min(until_deadline),
        };
        let lease_until = now + works_for + CLOCK_SKEW_MARGIN;
        let holder = format!("{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..));
        let request = ClaimRequest {
            id: &id,
            holder: &holder,
            validation: &validation,
            lease_until,
            expiration: lease_until.max(now + self.ttl),
            now,
        };
        let answer = timeout_at(claims.processing_deadline, self.store.claim(&request)).await;
        let found = match answer {
            Ok(Ok(ClaimOutcome::Claimed)) => {
                let (lapse, watching) = watch::channel(local_now + works_for);
                if let Some(table) = &self.table {
                    let (id, holder) = (id.clone(), holder.clone());
                    let held = HeldClaim { id, holder, lapse, deadline: claims.deadline };
                    table.hold_claim(entry, message_id, held);
                }
                let entry = entry.to_owned();
                return Ok(Some(Claimed { id, holder, entry, lapse: watching }));
            }
            Ok(Ok(found)) => found,
            Ok(Err(e)) => return Self::store_failed(claims, message_id, &error_chain(&e)),
            Err(_) => return Self::store_failed(claims, message_id, "the claim ran out of time"),
        };
        Self::found(&id, &validation, found, message_id)
    }

    /// What a message gets for a record another claim wrote.
    fn found(id: &str, validation: &str, found: ClaimOutcome, message_id: &str) -> Before {
        let (first, outcome) = match found {
            ClaimOutcome::Completed { validation, data } => {
                (validation, Outcome::Duplicate { result: data })
            }
            ClaimOutcome::InProgress { validation, until } => (validation, contended(until)),
            ClaimOutcome::Claimed => {
                let detail = "the store reported a claim it did not make";
                return Err(Settled::Final(Outcome::retry(RetryCause::IdempotencyStore, detail)));
            }
        };
        if first != validation {
            return Err(Settled::to_quarantine(
                ErrorCode::IdempotencyKeyReused,
                format!(
                    "idempotency key {id} was claimed by a body with SHA-256 {first}; this body's SHA-256 is {validation}"
                ),
            ));
        }
        match &outcome {
            Outcome::Retry { retry_after, .. } => {
                let retry_after_s = retry_after.unwrap_or_default().as_secs();
                info!(
                    message_id,
                    retry_after_s, "its idempotency key is claimed by another consumer"
                );
            }
            _ => info!(message_id, "duplicate: its idempotency key is already completed"),
        }
        Err(Settled::Final(outcome))
    }

    fn store_failed(claims: &BatchClaims, message_id: &str, why: &str) -> Before {
        claims.store_errors.fetch_add(1, Ordering::Relaxed);
        warn!(
            message_id,
            error = why,
            "the idempotency claim failed; the message will be retried, unprocessed"
        );
        let detail = format!("the idempotency claim failed: {why}");
        Err(Settled::Final(Outcome::retry(RetryCause::IdempotencyStore, detail)))
    }

    /// Runs `work` under the claim: completes the claim when it is done,
    /// releases it otherwise; `None` when the claim's lease lapsed unrenewed
    /// first (the work is dropped, the claim released). `done` is called as
    /// soon as the work returned done, before the completion is written: the
    /// side effect happened, so the message is acknowledged whatever the
    /// write does, and a deadline that cuts the write cannot send it round again.
    pub(crate) async fn run<F>(
        &self,
        claims: &BatchClaims,
        claim: Claimed,
        work: F,
        done: impl FnOnce(),
    ) -> Option<Result<Verdict, Box<dyn Any + Send>>>
    where
        F: Future<Output = Result<Verdict, Box<dyn Any + Send>>>,
    {
        let mut lapse = claim.lapse.clone();
        let mut work = std::pin::pin!(work);
        let verdict = loop {
            let until = *lapse.borrow_and_update();
            tokio::select! {
                verdict = &mut work => break Some(verdict),
                () = sleep_until(until) => if !lapse.has_changed().unwrap_or(false) { break None },
            }
        };
        if let Some(table) = &self.table {
            table.drop_claim(&claim.entry);
        }
        let completed = match &verdict {
            Some(Ok(Verdict::Done)) => Some(None),
            Some(Ok(Verdict::DoneWith { result })) if result.len() > MAX_STORED_RESULT_BYTES => {
                warn!(id = %claim.id, bytes = result.len(),
                      "the processor's result is too large to store; duplicates will carry none");
                Some(None)
            }
            Some(Ok(Verdict::DoneWith { result })) => Some(Some(result.as_str())),
            _ => None,
        };
        let mut write = UnfinishedWrite::new(&claims.store_errors, &claim.id, completed.is_some());
        let written = match completed {
            Some(data) => {
                done();
                let expiration = SystemTime::now() + self.ttl;
                let completion =
                    CompleteRequest { id: &claim.id, holder: &claim.holder, expiration, data };
                let call = self.store.complete(&completion);
                timeout_at(claims.deadline, call).await
            }
            None => {
                timeout_at(
                    claims.deadline,
                    self.store.release(&ReleaseRequest { id: &claim.id, holder: &claim.holder }),
                )
                .await
            }
        };
        let failed = match written {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(error_chain(&e)),
            Err(_) => Some("the call ran out of time".to_owned()),
        };
        match failed {
            None => write.finished(),
            Some(why) => write.failed(&why),
        }
        verdict
    }

    /// Renews every held claim whose lease ends within half a lease, for one
    /// more (never past its batch's deadline). Returns how many renewals
    /// failed: their processors are cut when their leases lapse.
    pub(crate) async fn renew(&self) -> usize {
        let (ClaimLease::Renewed(lease), Some(table)) = (self.lease, &self.table) else {
            return 0;
        };
        let lease = self.renewed_lease(lease);
        let due = table.claims_due(Instant::now(), lease);
        let renewals = due.iter().map(|due| async move {
            let lease_until = wall(due.until) + CLOCK_SKEW_MARGIN;
            let renewal = RenewRequest { id: &due.id, holder: &due.holder, lease_until };
            (due, self.store.renew(&renewal).await)
        });
        let mut failed = 0;
        for (due, result) in futures::future::join_all(renewals).await {
            match result {
                Ok(()) => table.claim_renewed(due),
                Err(e) => {
                    failed += 1;
                    warn!(error = %error_chain(&e), "a claim was not renewed; its work stops when its lease lapses");
                }
            }
        }
        failed
    }
}
