//! SQS adapters: the quarantine queue, the source queue's visibility, and
//! `ReceiveMessage` messages in the engine's source-neutral record form.

mod message;
mod quarantine;
mod visibility;

pub use backpressure_core::queue::QueueRef;
pub use message::record_from_message;
pub use quarantine::SqsQuarantine;
pub use visibility::SqsVisibility;
