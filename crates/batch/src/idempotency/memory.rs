//! [`MemoryStore`]: the claim store in one process's memory, for tests and
//! for embedders' own tests. It runs the same state machine the DynamoDB
//! store's condition expressions encode.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use backpressure_core::sync::lock;

use super::claim::{self, ClaimOutcome, StoredRecord};
use super::requests::{ClaimRequest, CompleteRequest, LookupRequest, ReleaseRequest, RenewRequest};
use super::{IdempotencyStore, StoreError};

/// A claim store in memory, shared by its clones. Nothing survives the
/// process: use DynamoDB or Redis across processes.
#[derive(Debug, Clone, Default)]
pub(crate) struct MemoryStore {
    records: Arc<Mutex<HashMap<String, StoredRecord>>>,
}

impl MemoryStore {
    /// An empty store.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// The record stored for `id`, expired or not.
    #[cfg(test)]
    pub(crate) fn get(&self, id: &str) -> Option<StoredRecord> {
        self.lock().get(id).cloned()
    }

    /// Whether no record is stored.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, StoredRecord>> {
        lock(&self.records)
    }

    fn with<T>(&self, id: &str, change: impl FnOnce(&mut Option<StoredRecord>) -> T) -> T {
        let mut records = self.lock();
        let mut slot = records.remove(id);
        let answer = change(&mut slot);
        if let Some(record) = slot {
            records.insert(id.to_owned(), record);
        }
        answer
    }
}

fn held(ok: bool) -> Result<(), StoreError> {
    if ok { Ok(()) } else { Err(StoreError::NotHeld) }
}

impl IdempotencyStore for MemoryStore {
    async fn completed(
        &self,
        request: &LookupRequest<'_>,
    ) -> Result<HashMap<String, ClaimOutcome>, StoreError> {
        let LookupRequest { ids, now } = *request;
        let records = self.lock();
        Ok(ids
            .iter()
            .filter_map(|id| {
                let found = records.get(id)?.found(now)?;
                matches!(found, ClaimOutcome::Completed { .. }).then(|| (id.clone(), found))
            })
            .collect())
    }

    async fn claim(&self, request: &ClaimRequest<'_>) -> Result<ClaimOutcome, StoreError> {
        Ok(self.with(request.id, |slot| claim::claim(slot, request)))
    }

    async fn complete(&self, request: &CompleteRequest<'_>) -> Result<(), StoreError> {
        let CompleteRequest { id, holder, expiration, data } = *request;
        held(self.with(id, |slot| claim::complete(slot, holder, expiration, data)))
    }

    async fn renew(&self, request: &RenewRequest<'_>) -> Result<(), StoreError> {
        let RenewRequest { id, holder, lease_until } = *request;
        held(self.with(id, |slot| claim::renew(slot, holder, lease_until)))
    }

    async fn release(&self, request: &ReleaseRequest<'_>) -> Result<(), StoreError> {
        let ReleaseRequest { id, holder } = *request;
        held(self.with(id, |slot| claim::release(slot, holder)))
    }
}
