//! The store behind boxed futures, so the engine's type does not name it.

use std::collections::HashMap;
use std::time::SystemTime;

use futures::future::BoxFuture;

use super::claim::{ClaimOutcome, ClaimRequest};
use super::{IdempotencyStore, StoreError};

/// [`IdempotencyStore`] with boxed futures, so the engine's type does not name the store.
pub(crate) trait ErasedStore: Send + Sync {
    fn completed_boxed<'a>(
        &'a self,
        ids: &'a [String],
        now: SystemTime,
    ) -> BoxFuture<'a, Result<HashMap<String, ClaimOutcome>, StoreError>>;
    fn claim_boxed<'a>(
        &'a self,
        request: &'a ClaimRequest<'a>,
    ) -> BoxFuture<'a, Result<ClaimOutcome, StoreError>>;
    fn complete_boxed<'a>(
        &'a self,
        id: &'a str,
        holder: &'a str,
        expiration: SystemTime,
        data: Option<&'a str>,
    ) -> BoxFuture<'a, Result<(), StoreError>>;
    fn renew_boxed<'a>(
        &'a self,
        id: &'a str,
        holder: &'a str,
        until: SystemTime,
    ) -> BoxFuture<'a, Result<(), StoreError>>;
    fn release_boxed<'a>(
        &'a self,
        id: &'a str,
        holder: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>>;
}

impl<S: IdempotencyStore> ErasedStore for S {
    fn completed_boxed<'a>(
        &'a self,
        ids: &'a [String],
        now: SystemTime,
    ) -> BoxFuture<'a, Result<HashMap<String, ClaimOutcome>, StoreError>> {
        Box::pin(self.completed(ids, now))
    }
    fn claim_boxed<'a>(
        &'a self,
        request: &'a ClaimRequest<'a>,
    ) -> BoxFuture<'a, Result<ClaimOutcome, StoreError>> {
        Box::pin(self.claim(request))
    }
    fn complete_boxed<'a>(
        &'a self,
        id: &'a str,
        holder: &'a str,
        expiration: SystemTime,
        data: Option<&'a str>,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(self.complete(id, holder, expiration, data))
    }
    fn renew_boxed<'a>(
        &'a self,
        id: &'a str,
        holder: &'a str,
        until: SystemTime,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(self.renew(id, holder, until))
    }
    fn release_boxed<'a>(
        &'a self,
        id: &'a str,
        holder: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(self.release(id, holder))
    }
}
