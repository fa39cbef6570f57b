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
    /// More than one variable is wrong: each, in the order they were read.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Several(Vec<ConfigError>),
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
    /// `Ok(value)` when `errors` is empty; [`ConfigError::gathered`] otherwise.
    pub fn all_or<T>(errors: Vec<ConfigError>, value: impl FnOnce() -> T) -> Result<T, Self> {
        if errors.is_empty() { Ok(value()) } else { Err(Self::gathered(errors)) }
    }

    /// The value of `result`, or `None` with its error kept in `errors`: for a
    /// loader that reports every bad variable at once.
    pub fn kept<T>(result: Result<T, Self>, errors: &mut Vec<Self>) -> Option<T> {
        result.map_err(|error| errors.push(error)).ok()
    }

    /// The one error, or [`ConfigError::Several`] of them.
    pub fn gathered(mut errors: Vec<ConfigError>) -> Self {
        if errors.len() == 1 { errors.remove(0) } else { Self::Several(errors) }
    }

    /// The errors this one stands for: itself, or each of [`ConfigError::Several`].
    pub fn into_each(self) -> Vec<ConfigError> {
        match self {
            Self::Several(all) => all,
            one => vec![one],
        }
    }

    /// An [`ConfigError::Invalid`] for `name`.
    pub fn invalid(name: &'static str, value: &str, reason: impl Into<String>) -> Self {
        Self::Invalid { name, value: value.to_owned(), reason: reason.into() }
    }
}
