//! The batch consumer's pure side: records and their decoding, the queue
//! contract, the batch engine and its bookkeeping, quarantine records,
//! backoff, trace context, metrics and configuration.

pub mod backoff;
pub mod body;
pub mod config;
pub mod contract;
pub mod engine;
pub mod event;
pub mod outcome;
pub mod quarantine;
pub mod summary;
pub mod trace;

pub use config::ConsumerConfig;
