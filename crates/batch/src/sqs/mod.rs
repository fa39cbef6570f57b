//! SQS adapters: the quarantine queue, the source queue's visibility, and
//! `ReceiveMessage` messages in the engine's source-neutral record form.

pub(crate) use backpressure_core::sqs_calls as calls;
mod message;
#[cfg(feature = "s3-overflow")]
mod overflow;
pub(crate) mod quarantine;
#[cfg(test)]
mod settled_visibility_tests;
mod visibility;

pub use message::record_from_message;
#[cfg(feature = "s3-overflow")]
pub use overflow::S3Overflow;
pub(crate) use visibility::SqsVisibility;
