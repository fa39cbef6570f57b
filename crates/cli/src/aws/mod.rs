//! The AWS SDK: the configuration and clients a command runs with, the SQS
//! calls on a queue, and who the caller is.

pub(crate) mod connect;
pub(crate) mod identity;
pub(crate) mod queue;
