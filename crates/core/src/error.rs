//! The error every AWS adapter reports, and how errors are logged.

/// Any error, boxed, as the SDK's errors are kept.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// An AWS API call that failed, after the SDK's own retries.
#[derive(Debug, thiserror::Error)]
#[error("{operation} failed")]
pub struct ApiError {
    /// The API operation, such as `SendMessageBatch`.
    pub operation: &'static str,
    /// The SDK's error.
    #[source]
    pub source: BoxError,
}

impl ApiError {
    /// An error of `operation`.
    pub fn new(operation: &'static str, source: impl Into<BoxError>) -> Self {
        Self { operation, source: source.into() }
    }
}

/// The whole chain of an error's messages, for one log field.
pub fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_chain_joins_every_source() {
        let error = ApiError::new("GetQueueAttributes", std::io::Error::other("throttled"));
        assert_eq!(error_chain(&error), "GetQueueAttributes failed: throttled");
    }
}
