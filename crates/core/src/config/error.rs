#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{name}={value:?} is invalid: {reason}")]
    Invalid { name: &'static str, value: String, reason: String },
    #[error("{name} is required: {reason}")]
    Missing { name: &'static str, reason: &'static str },
    #[error("{0}")]
    Conflict(&'static str),
    #[error("TARGETS={value:?} is invalid: {reason}")]
    Targets {
        value: String,
        reason: String,
        #[source]
        source: Option<serde_json::Error>,
    },
}

impl ConfigError {
    pub fn invalid(name: &'static str, value: &str, reason: impl Into<String>) -> Self {
        Self::Invalid { name, value: value.to_owned(), reason: reason.into() }
    }
}
