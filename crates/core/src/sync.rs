//! Locking a mutex, or taking its value, whatever panicked while it was held.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `mutex`, taking it as it is when a thread panicked while holding it.
/// Every mutex of ours guards bookkeeping (leases, claims, rate slots) that
/// each holder leaves whole between statements, and a processor's panic must
/// retry its own message only, not stop every other message that needs the
/// lock after it.
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The value `mutex` guarded, taken as it is when a thread panicked while
/// holding it (see [`lock`]).
pub fn into_inner<T>(mutex: Mutex<T>) -> T {
    mutex.into_inner().unwrap_or_else(PoisonError::into_inner)
}
