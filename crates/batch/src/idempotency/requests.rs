//! What each call of an [`super::IdempotencyStore`] is asked: one request
//! struct per method, so a store reads each value by its name.

use std::time::SystemTime;

/// The pre-check of a batch: which of these keys are completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LookupRequest<'a> {
    /// The records' `id`s.
    pub ids: &'a [String],
    /// The reader's clock: a record expired by then is not completed.
    pub now: SystemTime,
}

/// A claim to write: the key's new in-progress record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// A held claim, completed: the message was processed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompleteRequest<'a> {
    /// The record's `id`.
    pub id: &'a str,
    /// The claim's token: only its holder completes it.
    pub holder: &'a str,
    /// The completed record expires then.
    pub expiration: SystemTime,
    /// What the processor returned ([`crate::Verdict::done_with`]), kept for
    /// the duplicates.
    pub data: Option<&'a str>,
}

/// A held claim's lease, extended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RenewRequest<'a> {
    /// The record's `id`.
    pub id: &'a str,
    /// The claim's token: only its holder renews it.
    pub holder: &'a str,
    /// The lease now ends then (already including the clock-skew margin).
    pub lease_until: SystemTime,
}

/// A held claim, removed: the message is retried, and the next receive
/// claims the key afresh.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReleaseRequest<'a> {
    /// The record's `id`.
    pub id: &'a str,
    /// The claim's token: only its holder releases it.
    pub holder: &'a str,
}
