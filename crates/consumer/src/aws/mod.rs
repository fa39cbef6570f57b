//! SQS adapters: the quarantine queue and the source queue's visibility.

mod quarantine;
mod visibility;

pub use quarantine::SqsQuarantine;
pub use visibility::SqsVisibility;
