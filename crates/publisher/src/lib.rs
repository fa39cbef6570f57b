//! backlog-publisher: reads SQS backlog and ECS task counts and publishes
//! backlog per task to CloudWatch for a target-tracking scaling policy.

pub mod aws;
pub mod collect;
pub mod handler;
pub mod publisher;
