//! sqs-worker: the ECS service that drains an SQS queue with the batch
//! library's worker runtime and this project's HTTP forwarder.

pub mod cli;
mod help;
