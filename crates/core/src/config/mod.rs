//! Configuration from the environment, read once when a function starts. An
//! invalid value fails the function's init with the variable and the value.

mod consumer;
mod error;
mod publisher;
mod vars;

pub use consumer::{ConsumerConfig, Downstream};
pub use error::ConfigError;
pub use publisher::{DEFAULT_NAMESPACE, PublisherConfig, Sampling, StorageResolution};
pub use vars::Vars;
