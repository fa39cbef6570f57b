//! sqs-worker: the ECS service that drains an SQS queue with the batch
//! library — long polling, bounded in flight, a visibility heartbeat, and a
//! graceful drain on SIGTERM.

pub mod config;
mod deleter;
mod groups;
mod health;
mod help;
mod leases;
mod metrics;
mod protection;
mod queue;
pub mod start;
mod worker;
