//! sqs-worker: the ECS service that drains an SQS queue with the batch
//! library — long polling, bounded in flight, a visibility heartbeat, and a
//! graceful drain on SIGTERM.

pub mod config;
pub mod health;
mod help;
pub mod start;
