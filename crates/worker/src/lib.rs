//! sqs-worker: the ECS service that drains an SQS queue with the batch
//! library — long polling, bounded in flight, a visibility heartbeat, and a
//! graceful drain on SIGTERM.

pub mod config;
pub mod deleter;
pub mod groups;
pub mod health;
pub mod help;
pub mod leases;
pub mod limit;
pub mod metrics;
pub mod protection;
pub mod queue;
pub mod start;
pub mod worker;
