//! The batch consumer's pure side: event decoding, the queue contract, the
//! batch engine and its bookkeeping, quarantine records, backoff and metrics.

pub mod backoff;
pub mod contract;
pub mod delivery;
pub mod engine;
pub mod event;
pub mod outcome;
pub mod quarantine;
pub mod response;
pub mod summary;
