//! Adapters from the core ports to the AWS SDK clients. Each is a thin
//! translation: no retries or policy of its own beyond the SDK's.

mod cloudwatch;
mod ecs;
mod sqs;

pub use cloudwatch::CloudWatchSink;
pub use ecs::EcsServices;
pub use sqs::SqsQueues;
