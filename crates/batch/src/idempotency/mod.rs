//! Idempotency: no side effect before an atomic claim. With a store
//! configured ([`crate::Builder::idempotency`]), each message's
//! idempotency key is claimed before its processor runs:
//!
//! - the key already **completed** → acknowledged without processing
//!   ([`crate::report::Outcome::Duplicate`], with the processor's stored result);
//! - **in progress** under another holder's lease → retried, not visible
//!   again before that lease ends;
//! - the same key with a **different body** → quarantined as
//!   `idempotency_key_reused`, never processed;
//! - the processor done → the record is completed for the TTL; a retry,
//!   a permanent failure or a panic → the claim is released.
//!
//! A claim lasts as long as its holder can still be working: until the
//! batch's deadline (a Lambda invocation's), or, under a worker
//! (`worker::Worker`), one visibility timeout at a time, renewed by its
//! heartbeat, with the processor cut before an unrenewed lease lapses. Each
//! lease is written [`CLOCK_SKEW_MARGIN`] longer than the holder works under
//! it, so a peer whose clock runs that much ahead still sees it held.
//! `docs/idempotency.md` has the states, the one window in which a
//! redelivery can repeat a side effect, and the comparison with Powertools.

use std::collections::HashMap;
use std::future::Future;
use std::time::Duration;

mod claim;
#[cfg(feature = "dynamodb")]
mod dynamodb;
mod erased;
pub(crate) mod guard;
mod id;
mod memory;
#[cfg(test)]
mod processor_tests;
#[cfg(feature = "redis")]
mod redis;
#[cfg(feature = "redis")]
mod redis_link;
mod requests;
mod write;

/// The hex SHA-256 of a body: the record's `validation`.
pub(crate) use backpressure_core::quarantine::body_hash;

pub use backpressure_core::error::ApiError;
pub use claim::ClaimOutcome;
#[cfg(feature = "dynamodb")]
use dynamodb::DynamoDbStore;
use erased::SharedStore;
pub use id::record_id;
pub(crate) use memory::MemoryStore;
#[cfg(feature = "redis")]
use redis::RedisStore;
pub use requests::{ClaimRequest, CompleteRequest, LookupRequest, ReleaseRequest, RenewRequest};

/// How much longer a claim is written than its holder works under it: the
/// clock difference between two consumers this design tolerates. A store of
/// one's own compares expiry times as they are written; this is for its tests.
// Hidden: only the stores' tests name it.
#[doc(hidden)]
pub const CLOCK_SKEW_MARGIN: Duration = Duration::from_secs(1);

/// How long a completed key is remembered unless [`Idempotency::ttl`] says otherwise.
pub const DEFAULT_TTL: Duration = Duration::from_secs(3_600);

/// Why a store call did not give an answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The call failed (denied, throttled, a 5xx, a timeout), after the SDK's retries.
    #[error(transparent)]
    Call(#[from] ApiError),
    /// A call on the named table failed, after the SDK's retries.
    #[error("idempotency table {table}")]
    Table {
        /// The table.
        table: String,
        /// The call and the service's error.
        #[source]
        source: ApiError,
    },
    /// A call to the Redis or Valkey store failed (refused, timed out, the
    /// server's error), after the client's reconnects.
    #[cfg(feature = "redis")]
    #[error("the Redis store at {address}: {operation} failed")]
    Redis {
        /// `host:port`, never the password.
        address: String,
        /// What was asked: `connect`, `claim`, `complete`, `renew`, `release`, `HMGET`, `PING`.
        operation: &'static str,
        /// The client's error.
        #[source]
        source: ::redis::RedisError,
    },
    /// The claim is no longer this holder's: its lease ran out and another
    /// holder took the key, or it was released.
    #[error("the claim is no longer held by this consumer")]
    NotHeld,
    /// The store answered with a record this crate cannot read.
    #[error("the stored record for {id} cannot be read: {why}")]
    Unreadable {
        /// The record's id.
        id: String,
        /// What is wrong with it.
        why: String,
    },
}

/// Where claims live, for a store of one's own ([`Idempotency::new`]); the
/// library's are [`Idempotency::dynamodb`], [`Idempotency::redis`] and
/// [`Idempotency::in_memory`]. Every call compares expiry times itself: a store
/// may keep expired records readable (DynamoDB's TTL deletes lazily).
///
/// The contract the engine relies on, beyond each method's own: a claim by
/// the holder that already holds the key answers [`ClaimOutcome::Claimed`]
/// (a retried call whose answer was lost); releasing a record that is gone
/// is `Ok`; the store returns the `validation` it found and the engine, not
/// the store, compares it with the body's. A backend's failure is
/// [`StoreError::Call`] with an [`ApiError`] (`ApiError::new(operation, error)`).
pub trait IdempotencyStore: Send + Sync + 'static {
    /// Whether the store answers (a cheap read): a long-lived worker calls it
    /// at start-up. The default answers yes without a call.
    fn check(&self) -> impl Future<Output = Result<(), StoreError>> + Send {
        async { Ok(()) }
    }

    /// The records among `ids` that are completed and not expired at `now`:
    /// the cheap pre-check of a batch. A key it cannot read is left out (a
    /// claim then decides it).
    fn completed(
        &self,
        request: &LookupRequest<'_>,
    ) -> impl Future<Output = Result<HashMap<String, ClaimOutcome>, StoreError>> + Send;

    /// Claims a key atomically: written when absent, expired, or in progress
    /// past its lease; otherwise what is there.
    fn claim(
        &self,
        request: &ClaimRequest<'_>,
    ) -> impl Future<Output = Result<ClaimOutcome, StoreError>> + Send;

    /// The holder's claim becomes completed until `expiration`, with `data`.
    fn complete(
        &self,
        request: &CompleteRequest<'_>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// The holder's lease now ends at `lease_until`.
    fn renew(
        &self,
        request: &RenewRequest<'_>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// The holder's claim is removed.
    fn release(
        &self,
        request: &ReleaseRequest<'_>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;
}

/// How long a claim's lease is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum ClaimLease {
    /// Until the batch's deadline (a Lambda invocation's): nothing to renew.
    #[default]
    UntilDeadline,
    /// This long at a time, never past the batch's deadline, renewed by a
    /// worker's heartbeat, with its visibility timeout.
    Renewed(Duration),
}

/// What a message without an idempotency key gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum MissingKey {
    /// Processed without a claim, with a warning (the default).
    #[default]
    ProcessUnclaimed,
    /// A permanent failure, `missing_idempotency_key`.
    Quarantine,
}

/// The idempotency settings for [`crate::Builder::idempotency`]:
/// the store and how claims are kept in it.
#[derive(Debug, Clone)]
pub struct Idempotency {
    pub(crate) store: SharedStore,
    pub(crate) ttl: Duration,
    pub(crate) lease: ClaimLease,
    pub(crate) missing_key: MissingKey,
    pub(crate) scope: Option<String>,
    pub(crate) key_prefix: String,
}

impl Idempotency {
    /// Claims in a DynamoDB table whose partition key is the string `id`,
    /// with TTL on `expiration` (`docs/idempotency.md` has the table).
    #[cfg(feature = "dynamodb")]
    #[cfg_attr(docsrs, doc(cfg(feature = "dynamodb")))]
    pub fn dynamodb(client: aws_sdk_dynamodb::Client, table: impl Into<String>) -> Self {
        Self::new(DynamoDbStore::new(client, table))
    }

    /// Claims in Redis or Valkey at `url` (`redis://` or `rediss://` for TLS,
    /// with AUTH's user and password if any), every key under `namespace`,
    /// each call given up after `call_timeout`. No connection is opened yet.
    #[cfg(feature = "redis")]
    #[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
    pub fn redis(url: &str, namespace: &str, call_timeout: Duration) -> Result<Self, StoreError> {
        Ok(Self::new(RedisStore::new(url, namespace, call_timeout)?))
    }

    /// Claims in this process's memory: for tests, and for one process alone.
    pub fn in_memory() -> Self {
        Self::new(MemoryStore::new())
    }

    /// Claims in a store of one's own. Completed keys are remembered for an
    /// hour, leases last until the batch's deadline (under a
    /// [`crate::worker::Worker`]: one visibility timeout, renewed), keys are
    /// scoped by the source queue's name.
    pub fn new(store: impl IdempotencyStore) -> Self {
        Self {
            store: SharedStore::new(store),
            ttl: DEFAULT_TTL,
            lease: ClaimLease::default(),
            missing_key: MissingKey::default(),
            scope: None,
            key_prefix: String::new(),
        }
    }

    /// The store claims are written to, to call directly (in a test of a
    /// store, or to read a record back).
    // Hidden: only the stores' tests call it.
    #[doc(hidden)]
    pub fn store(&self) -> &impl IdempotencyStore {
        &self.store
    }

    /// Whether the store answers: one cheap read (DynamoDB's `DescribeTable`,
    /// Redis's `PING`), for a long-lived worker to stop at start-up when it
    /// cannot reach its store.
    pub async fn check(&self) -> Result<(), StoreError> {
        self.store.check().await
    }

    /// How long a completed key is remembered.
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// How long a claim's lease is.
    #[cfg(test)]
    pub(crate) fn lease(mut self, lease: ClaimLease) -> Self {
        self.lease = lease;
        self
    }

    /// What a message without a key gets.
    pub fn missing_key(mut self, missing_key: MissingKey) -> Self {
        self.missing_key = missing_key;
        self
    }

    /// Put before the scope in every record's id (see [`record_id`]): consumers that share one table or one Redis never
    /// meet each other's keys, whatever their prefixes and scopes.
    pub fn key_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.key_prefix = prefix.into();
        self
    }

    /// The scope of every key (see [`record_id`]); the default scope is the
    /// source queue's name, so a replay onto the same queue finds its key.
    pub fn scope(mut self, scope: impl Into<String>) -> Self {
        self.scope = Some(scope.into());
        self
    }
}
