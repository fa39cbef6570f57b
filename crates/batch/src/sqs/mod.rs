//! SQS adapters: the source queue's visibility, and `ReceiveMessage` messages
//! in the engine's source-neutral record form.

pub(crate) use backpressure_core::sqs_calls as calls;
mod message;
#[cfg(test)]
mod settled_visibility_tests;
mod visibility;

pub use message::record_from_message;
pub(crate) use visibility::SqsVisibility;
