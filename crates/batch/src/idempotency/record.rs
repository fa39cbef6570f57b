//! The claim state machine, pure: what a stored record is, and what a claim,
//! a completion, a renewal or a release makes of it at a given time. The
//! in-memory store runs it directly; the DynamoDB store runs the same rules as
//! condition expressions, and reads its answers back through it.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A key's state in the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Status {
    /// A holder is processing it until `in_progress_until`.
    InProgress,
    /// Processed; acknowledged without processing until `expiration`.
    Completed,
}

impl Status {
    /// The `status` attribute's value (Powertools' spelling).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InProgress => "INPROGRESS",
            Self::Completed => "COMPLETED",
        }
    }

    /// The status an attribute value names.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "INPROGRESS" => Some(Self::InProgress),
            "COMPLETED" => Some(Self::Completed),
            _ => None,
        }
    }
}

/// One key's record, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredRecord {
    /// `status`.
    pub status: Status,
    /// `expiration`: epoch seconds after which the record no longer counts
    /// (DynamoDB's TTL attribute; DynamoDB deletes lazily, so it is compared).
    pub expiration: u64,
    /// `in_progress_expiration`: epoch milliseconds after which an
    /// in-progress claim may be taken over.
    pub in_progress_until: u64,
    /// `validation`: the SHA-256 of the body that claimed the key, hex.
    pub validation: String,
    /// `holder`: the token of the claim that wrote the record.
    pub holder: String,
    /// `data`: what the processor returned, if anything.
    pub data: Option<String>,
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
    pub fn counts_at(&self, now: SystemTime) -> bool {
        let now_ms = epoch_ms(now);
        let alive = self.expiration.saturating_mul(1000) > now_ms;
        match self.status {
            Status::Completed => alive,
            Status::InProgress => alive && self.in_progress_until > now_ms,
        }
    }

    /// What a claim finds in this record at `now`, when it counts.
    pub fn found(&self, now: SystemTime) -> Option<ClaimOutcome> {
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
    pub fn held_by(&self, holder: &str) -> bool {
        self.status == Status::InProgress && self.holder == holder
    }
}

/// A claim to write: the key's new in-progress record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimRequest<'a> {
    /// The record's `id`.
    pub id: &'a str,
    /// This claim's token, unique per attempt.
    pub holder: &'a str,
    /// The body's SHA-256, hex.
    pub validation: &'a str,
    /// The lease ends then (already including the clock-skew margin).
    pub lease_until: SystemTime,
    /// The record expires then, whatever happens to the claim.
    pub expiration: SystemTime,
    /// The claimer's clock.
    pub now: SystemTime,
}

impl ClaimRequest<'_> {
    /// The in-progress record this claim writes.
    pub fn record(&self) -> StoredRecord {
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
#[path = "record_tests.rs"]
mod tests;
