//! The write that ends a claim (its completion or release): one that fails,
//! or is dropped unanswered because the deadline guard cut its batch, is
//! counted in `IdempotencyStoreErrors` and logged, never silently lost.

use std::sync::atomic::{AtomicUsize, Ordering};

use tracing::{error, warn};

/// A completion or release under way: one that fails, or is dropped
/// unfinished (the deadline guard cut its batch), is counted and logged.
pub(super) struct UnfinishedWrite<'c> {
    store_errors: &'c AtomicUsize,
    id: &'c str,
    completion: bool,
    /// Not yet answered, nor said to have failed.
    open: bool,
}

impl<'c> UnfinishedWrite<'c> {
    pub(super) fn new(store_errors: &'c AtomicUsize, id: &'c str, completion: bool) -> Self {
        Self { store_errors, id, completion, open: true }
    }

    pub(super) fn finished(&mut self) {
        self.open = false;
    }

    pub(super) fn failed(&mut self, why: &str) {
        self.store_errors.fetch_add(1, Ordering::Relaxed);
        if self.completion {
            error!(id = %self.id, error = %why,
                   "processed, but the completion was not recorded: the claim expires with its lease, and a redelivery then would be processed again");
        } else {
            warn!(id = %self.id, error = %why, "the claim was not released; it expires with its lease");
        }
        self.open = false;
    }
}

impl Drop for UnfinishedWrite<'_> {
    fn drop(&mut self) {
        if self.open {
            self.failed("cut by the deadline guard before the store answered");
        }
    }
}
