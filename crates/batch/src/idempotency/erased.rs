//! The store behind boxed futures, so neither the engine's type nor
//! [`super::Idempotency`]'s names it.

use std::collections::HashMap;
use std::sync::Arc;

use futures::future::BoxFuture;

use super::claim::ClaimOutcome;
use super::requests::{ClaimRequest, CompleteRequest, LookupRequest, ReleaseRequest, RenewRequest};
use super::{IdempotencyStore, StoreError};

/// [`IdempotencyStore`] with boxed futures, so the engine's type does not name the store.
pub(crate) trait ErasedStore: Send + Sync {
    fn check_boxed(&self) -> BoxFuture<'_, Result<(), StoreError>>;
    fn completed_boxed<'a>(
        &'a self,
        request: &'a LookupRequest<'a>,
    ) -> BoxFuture<'a, Result<HashMap<String, ClaimOutcome>, StoreError>>;
    fn claim_boxed<'a>(
        &'a self,
        request: &'a ClaimRequest<'a>,
    ) -> BoxFuture<'a, Result<ClaimOutcome, StoreError>>;
    fn complete_boxed<'a>(
        &'a self,
        request: &'a CompleteRequest<'a>,
    ) -> BoxFuture<'a, Result<(), StoreError>>;
    fn renew_boxed<'a>(
        &'a self,
        request: &'a RenewRequest<'a>,
    ) -> BoxFuture<'a, Result<(), StoreError>>;
    fn release_boxed<'a>(
        &'a self,
        request: &'a ReleaseRequest<'a>,
    ) -> BoxFuture<'a, Result<(), StoreError>>;
}

impl<S: IdempotencyStore> ErasedStore for S {
    fn check_boxed(&self) -> BoxFuture<'_, Result<(), StoreError>> {
        Box::pin(self.check())
    }
    fn completed_boxed<'a>(
        &'a self,
        request: &'a LookupRequest<'a>,
    ) -> BoxFuture<'a, Result<HashMap<String, ClaimOutcome>, StoreError>> {
        Box::pin(self.completed(request))
    }
    fn claim_boxed<'a>(
        &'a self,
        request: &'a ClaimRequest<'a>,
    ) -> BoxFuture<'a, Result<ClaimOutcome, StoreError>> {
        Box::pin(self.claim(request))
    }
    fn complete_boxed<'a>(
        &'a self,
        request: &'a CompleteRequest<'a>,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(self.complete(request))
    }
    fn renew_boxed<'a>(
        &'a self,
        request: &'a RenewRequest<'a>,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(self.renew(request))
    }
    fn release_boxed<'a>(
        &'a self,
        request: &'a ReleaseRequest<'a>,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(self.release(request))
    }
}

/// Any store, shared by the settings' clones and the engine that takes them.
#[derive(Clone)]
pub(crate) struct SharedStore(Arc<dyn ErasedStore>);

impl SharedStore {
    pub(crate) fn new(store: impl IdempotencyStore) -> Self {
        Self(Arc::new(store))
    }
}

impl std::fmt::Debug for SharedStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedStore")
    }
}

impl IdempotencyStore for SharedStore {
    async fn check(&self) -> Result<(), StoreError> {
        self.0.check_boxed().await
    }
    async fn completed(
        &self,
        request: &LookupRequest<'_>,
    ) -> Result<HashMap<String, ClaimOutcome>, StoreError> {
        self.0.completed_boxed(request).await
    }
    async fn claim(&self, request: &ClaimRequest<'_>) -> Result<ClaimOutcome, StoreError> {
        self.0.claim_boxed(request).await
    }
    async fn complete(&self, request: &CompleteRequest<'_>) -> Result<(), StoreError> {
        self.0.complete_boxed(request).await
    }
    async fn renew(&self, request: &RenewRequest<'_>) -> Result<(), StoreError> {
        self.0.renew_boxed(request).await
    }
    async fn release(&self, request: &ReleaseRequest<'_>) -> Result<(), StoreError> {
        self.0.release_boxed(request).await
    }
}
