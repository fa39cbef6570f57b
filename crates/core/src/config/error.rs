/// A configuration a function cannot start with; the message names the
/// variable and the value.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A variable holds a value outside what it accepts.
    #[error("{name}={value:?} is invalid: {reason}")]
    Invalid {
        /// The variable.
        name: &'static str,
        /// Its value.
        value: String,
        /// What it accepts.
        reason: String,
    },
    /// A required variable is unset or empty.
    #[error("{name} is required: {reason}")]
    Missing {
        /// The variable.
        name: &'static str,
        /// Why it is needed.
        reason: &'static str,
    },
    /// Variables that cannot be set together.
    #[error("{0}")]
    Conflict(&'static str),
    /// `TARGETS` is not the JSON list of targets expected.
    #[error("TARGETS={value:?} is invalid: {reason}")]
    Targets {
        /// The value.
        value: String,
        /// What is wrong.
        reason: String,
        /// The JSON error, when it is one.
        #[source]
        source: Option<serde_json::Error>,
    },
}

impl ConfigError {
    /// An [`ConfigError::Invalid`] for `name`.
    pub fn invalid(name: &'static str, value: &str, reason: impl Into<String>) -> Self {
        Self::Invalid { name, value: value.to_owned(), reason: reason.into() }
    }
}
