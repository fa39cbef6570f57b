//! The claim state machine, pure: what a stored record is, and what a claim,
//! a completion, a renewal or a release makes of it at a given time. The
//! in-memory store runs it directly; the DynamoDB store runs the same rules as
//! condition expressions, and reads its answers back through it.

use super::requests::ClaimRequest;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A key's state in the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) enum Status {
    /// A holder is processing it until `in_progress_until`.
    InProgress,
    /// Processed; acknowledged without processing until `expiration`.
    Completed,
}

impl Status {
    /// The `status` attribute's value (Powertools' spelling).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::InProgress => "INPROGRESS",
            Self::Completed => "COMPLETED",
        }
    }

    /// The status an attribute value names.
    pub(crate) fn parse(text: &str) -> Option<Self> {
        match text {
            "INPROGRESS" => Some(Self::InProgress),
            "COMPLETED" => Some(Self::Completed),
            _ => None,
        }
    }
}

/// One key's record, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StoredRecord {
    /// `status`.
    pub(crate) status: Status,
    /// `expiration`: epoch seconds after which the record no longer counts
    /// (DynamoDB's TTL attribute; DynamoDB deletes lazily, so it is compared).
    pub(crate) expiration: u64,
    /// `in_progress_expiration`: epoch milliseconds after which an
    /// in-progress claim may be taken over.
    pub(crate) in_progress_until: u64,
    /// `validation`: the SHA-256 of the body that claimed the key, hex.
    pub(crate) validation: String,
    /// `holder`: the token of the claim that wrote the record.
    pub(crate) holder: String,
    /// `data`: what the processor returned, if anything.
    pub(crate) data: Option<String>,
}

/// What a claim found.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClaimOutcome {
    /// The key is now this claim's, in progress.
    Claimed,
    /// The key was already processed.
    Completed {
        /// The body hash it was processed with.
        validation: String,
        /// What its processor returned.
        data: Option<String>,
    },
    /// Another holder is processing it.
    InProgress {
        /// The body hash it is being processed with.
        validation: String,
        /// Its lease ends then.
        until: SystemTime,
    },
}

/// Epoch milliseconds.
pub(crate) fn epoch_ms(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Epoch seconds, rounded up: a record never expires before `at`.
pub(crate) fn epoch_s_ceil(at: SystemTime) -> u64 {
    epoch_ms(at).div_ceil(1000)
}

/// The time `ms` epoch milliseconds name.
pub(crate) fn from_epoch_ms(ms: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(ms)
}

impl StoredRecord {
    /// Whether the record still counts at `now`: not expired, and (in
    /// progress) its lease not over. A record that does not count is
    /// claimable; DynamoDB's condition expression is the same test.
    pub(crate) fn counts_at(&self, now: SystemTime) -> bool {
        let now_ms = epoch_ms(now);
        let alive = self.expiration.saturating_mul(1000) > now_ms;
        match self.status {
            Status::Completed => alive,
            Status::InProgress => alive && self.in_progress_until > now_ms,
        }
    }

    /// What a claim finds in this record at `now`, when it counts.
    pub(crate) fn found(&self, now: SystemTime) -> Option<ClaimOutcome> {
        if !self.counts_at(now) {
            return None;
        }
        let validation = self.validation.clone();
        Some(match self.status {
            Status::Completed => ClaimOutcome::Completed { validation, data: self.data.clone() },
            Status::InProgress => ClaimOutcome::InProgress {
                validation,
                until: from_epoch_ms(self.in_progress_until),
            },
        })
    }

    /// Whether `holder` holds this record in progress: the condition of a
    /// completion, a renewal and a release.
    pub(crate) fn held_by(&self, holder: &str) -> bool {
        self.status == Status::InProgress && self.holder == holder
    }
}

impl ClaimRequest<'_> {
    /// The in-progress record this claim writes.
    pub(crate) fn record(&self) -> StoredRecord {
        StoredRecord {
            status: Status::InProgress,
            expiration: epoch_s_ceil(self.expiration),
            in_progress_until: epoch_ms(self.lease_until),
            validation: self.validation.to_owned(),
            holder: self.holder.to_owned(),
            data: None,
        }
    }
}

/// The claim's effect on `slot`: the record it finds, or the record it writes.
pub(crate) fn claim(slot: &mut Option<StoredRecord>, request: &ClaimRequest<'_>) -> ClaimOutcome {
    if let Some(found) = slot.as_ref().and_then(|record| record.found(request.now)) {
        return found;
    }
    *slot = Some(request.record());
    ClaimOutcome::Claimed
}

/// A completion: the holder's record becomes completed until `expiration`.
/// False when the holder no longer holds it (its lease ran out and another
/// took it, or it was released).
pub(crate) fn complete(
    slot: &mut Option<StoredRecord>,
    holder: &str,
    expiration: SystemTime,
    data: Option<&str>,
) -> bool {
    match slot {
        Some(record) if record.held_by(holder) => {
            record.status = Status::Completed;
            record.expiration = epoch_s_ceil(expiration);
            record.data = data.map(str::to_owned);
            true
        }
        _ => false,
    }
}

/// A renewal: the holder's lease now ends at `lease_until`.
pub(crate) fn renew(
    slot: &mut Option<StoredRecord>,
    holder: &str,
    lease_until: SystemTime,
) -> bool {
    match slot {
        Some(record) if record.held_by(holder) => {
            record.in_progress_until = epoch_ms(lease_until);
            record.expiration = record.expiration.max(epoch_s_ceil(lease_until));
            true
        }
        _ => false,
    }
}

/// A release: the holder's record is removed, so the next claim succeeds.
pub(crate) fn release(slot: &mut Option<StoredRecord>, holder: &str) -> bool {
    if slot.as_ref().is_some_and(|record| record.held_by(holder)) {
        *slot = None;
        return true;
    }
    false
}

#[cfg(test)]
mod tests {
    //! The claim state machine under any order of claims, completions,
    //! renewals, releases and clocks: never two holders of one key at once.

    use std::time::{Duration, SystemTime, UNIX_EPOCH};

    use proptest::prelude::*;

    use super::*;
    use crate::idempotency::CLOCK_SKEW_MARGIN;

    #[derive(Debug, Clone)]
    enum Step {
        Claim { actor: usize, works_ms: u64 },
        Renew { actor: usize, works_ms: u64 },
        Complete { actor: usize },
        Release { actor: usize },
        Advance { ms: u64 },
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            (0..3usize, 1..5_000u64).prop_map(|(actor, works_ms)| Step::Claim { actor, works_ms }),
            (0..3usize, 1..5_000u64).prop_map(|(actor, works_ms)| Step::Renew { actor, works_ms }),
            (0..3usize).prop_map(|actor| Step::Complete { actor }),
            (0..3usize).prop_map(|actor| Step::Release { actor }),
            (0..6_000u64).prop_map(|ms| Step::Advance { ms }),
        ]
    }

    /// One consumer: its clock's offset from true time, and the claim it works under.
    #[derive(Debug, Default, Clone)]
    struct Actor {
        offset_ms: i64,
        /// (holder token, true time its work under the claim ends).
        holding: Option<(String, u64)>,
    }

    fn at(ms: i64) -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(ms.max(0) as u64)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        #[test]
        fn no_two_consumers_ever_hold_one_key_at_once(
            offsets in proptest::collection::vec(-500i64..=500, 3),
            steps in proptest::collection::vec(step(), 1..60),
        ) {
            let skew = CLOCK_SKEW_MARGIN.as_millis() as i64;
            prop_assert!(offsets.iter().all(|o| o.abs() * 2 <= skew), "offsets within the margin");
            let mut actors: Vec<Actor> =
                offsets.iter().map(|&offset_ms| Actor { offset_ms, holding: None }).collect();
            let mut slot: Option<StoredRecord> = None;
            let mut now: u64 = 1_000_000;
            let mut tokens = 0;
            for step in steps {
                match step {
                    Step::Advance { ms } => now += ms,
                    Step::Claim { actor, works_ms } => {
                        if actors[actor].holding.is_some() {
                            continue;
                        }
                        let local = now as i64 + actors[actor].offset_ms;
                        tokens += 1;
                        let holder = format!("t{tokens}");
                        let request = ClaimRequest {
                            id: "k",
                            holder: &holder,
                            validation: "h",
                            lease_until: at(local + works_ms as i64 + skew),
                            expiration: at(local + 3_600_000),
                            now: at(local),
                        };
                        if claim(&mut slot, &request) == ClaimOutcome::Claimed {
                            actors[actor].holding = Some((holder, now + works_ms));
                        }
                    }
                    Step::Renew { actor, works_ms } => {
                        let local = now as i64 + actors[actor].offset_ms;
                        if let Some((holder, ends)) = actors[actor].holding.as_mut()
                            && *ends > now
                            && renew(&mut slot, holder, at(local + works_ms as i64 + skew))
                        {
                            *ends = now + works_ms;
                        }
                    }
                    Step::Complete { actor } => {
                        if let Some((holder, ends)) = actors[actor].holding.take() {
                            let local = now as i64 + actors[actor].offset_ms;
                            // Work cut at its lease never completes.
                            if ends > now {
                                complete(&mut slot, &holder, at(local + 3_600_000), None);
                            }
                        }
                    }
                    Step::Release { actor } => {
                        if let Some((holder, _)) = actors[actor].holding.take() {
                            release(&mut slot, &holder);
                        }
                    }
                }
                let working = actors
                    .iter()
                    .filter(|a| a.holding.as_ref().is_some_and(|(_, ends)| *ends > now))
                    .count();
                prop_assert!(working <= 1, "{working} consumers work under one key at {now}: {actors:?} {slot:?}");
            }
        }
    }

    #[test]
    fn a_record_stops_counting_at_its_expiry_whatever_the_store_keeps() {
        let request = ClaimRequest {
            id: "k",
            holder: "a",
            validation: "h",
            lease_until: at(10_000),
            expiration: at(20_000),
            now: at(0),
        };
        let mut slot = None;
        assert_eq!(claim(&mut slot, &request), ClaimOutcome::Claimed);
        let retry = ClaimRequest { holder: "b", now: at(9_999), ..request };
        assert!(matches!(claim(&mut slot, &retry), ClaimOutcome::InProgress { .. }));
        let later = ClaimRequest { holder: "b", now: at(10_000), ..request };
        assert_eq!(claim(&mut slot, &later), ClaimOutcome::Claimed, "a lapsed lease is taken over");
        assert!(!complete(&mut slot, "a", at(50_000), None), "the first holder no longer holds it");
        assert!(complete(&mut slot, "b", at(50_000), Some("receipt")));
        let duplicate = ClaimRequest { holder: "c", now: at(49_999), ..request };
        assert_eq!(
            claim(&mut slot, &duplicate),
            ClaimOutcome::Completed { validation: "h".into(), data: Some("receipt".into()) }
        );
        let expired = ClaimRequest { holder: "c", now: at(50_000), ..request };
        assert_eq!(
            claim(&mut slot, &expired),
            ClaimOutcome::Claimed,
            "expired, though still stored"
        );
    }
}
