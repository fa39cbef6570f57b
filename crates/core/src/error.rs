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

/// The whole chain of an error's messages, for one log field. A cause that
/// only repeats the message before it (the SDK's service errors wrap their
/// exception, and both say the code and message) is said once.
pub fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut last = error.to_string();
    let mut text = last.clone();
    let mut source = error.source();
    while let Some(cause) = source {
        let said = cause.to_string();
        if said != last {
            text.push_str(": ");
            text.push_str(&said);
        }
        last = said;
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

    #[derive(Debug, thiserror::Error)]
    #[error("ResourceNotFoundException: not found")]
    struct Exception;

    #[derive(Debug, thiserror::Error)]
    #[error("ResourceNotFoundException: not found")]
    struct Wrapper(#[source] Exception);

    #[test]
    fn a_cause_that_repeats_its_wrapper_is_said_once() {
        let error = ApiError::new("GetItem", Wrapper(Exception));
        assert_eq!(error_chain(&error), "GetItem failed: ResourceNotFoundException: not found");
    }
}
