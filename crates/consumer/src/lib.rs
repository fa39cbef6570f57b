//! batch-consumer: processes SQS batches with partial batch responses,
//! quarantines poison messages, and delivers work to a downstream service.

pub mod aws;
pub mod delivery;
pub mod handler;
pub mod rate_limit;
