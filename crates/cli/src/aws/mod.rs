//! The AWS SDK: the configuration and clients a command runs with, and the
//! SQS calls on a queue.

pub(crate) mod connect;
pub(crate) mod queue;
