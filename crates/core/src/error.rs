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

/// Links of the AWS SDK's error chains that only name a layer, not a cause.
pub const SDK_LAYERS: [&str; 6] =
    ["unhandled error", "dispatch failure", "service error", "other", "io error", "response error"];

/// The whole chain of an error's messages on one line, for a log field or a
/// person: each link's first line, without the links that only name an SDK
/// layer (`dispatch failure`, `service error`, …) or say again what was
/// already said (the SDK's service errors wrap their exception and both say
/// its code and message; a message may quote its cause). Empty only when
/// every link is.
pub fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut said = String::new();
    let mut next = Some(error);
    while let Some(link) = next {
        next = link.source();
        let message = link.to_string();
        let text = first_line(&message);
        // An error AWS does not model reads `unhandled error (CODE)`, then its metadata says
        // the code and message again: only the metadata's is kept.
        let metadata = next.and_then(|source| service_error(&source.to_string()));
        if text.starts_with("unhandled error (") && metadata.is_some() {
            continue;
        }
        let readable = service_error(text);
        let text = readable.as_deref().unwrap_or(text);
        if !text.is_empty() && !SDK_LAYERS.contains(&text) && !said.contains(text) {
            if !said.is_empty() {
                said.push_str(": ");
            }
            said.push_str(text);
        }
    }
    if said.is_empty() { first_line(&error.to_string()).to_owned() } else { said }
}

/// The SDK's error metadata, which displays as `Error { code: "C", message: "M", … }`, as
/// `C: M`; `None` for any other text.
fn service_error(text: &str) -> Option<String> {
    let mut rest = text.strip_prefix("Error { ")?;
    let (mut code, mut message) = (None, None);
    while let Some((name, after)) = rest.split_once(": \"") {
        let mut value = String::new();
        let mut chars = after.char_indices();
        let end = loop {
            match chars.next()? {
                (i, '"') => break i,
                (_, '\\') => match chars.next()?.1 {
                    'n' => value.push(' '),
                    't' => value.push(' '),
                    other => value.push(other),
                },
                (_, c) => value.push(c),
            }
        };
        match name {
            "code" => code = Some(value),
            "message" => message = Some(value),
            _ => {}
        }
        rest = after[end + 1..].trim_start_matches(", ");
    }
    match (code, message) {
        (Some(code), Some(message)) => Some(format!("{code}: {message}")),
        (Some(code), None) => Some(code),
        (None, Some(message)) => Some(message),
        (None, None) => None,
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default().trim().trim_end_matches('.')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unmodelled_service_error_reads_as_its_code_and_message() {
        #[derive(Debug, thiserror::Error)]
        #[error(
            "Error {{ code: \"AccessDeniedException\", message: \"not \\\"yours\\\"\", aws_request_id: \"r-1\" }}"
        )]
        struct Metadata;
        #[derive(Debug, thiserror::Error)]
        #[error("unhandled error (AccessDeniedException)")]
        struct Unhandled(#[source] Metadata);
        let error = ApiError::new("GetQueueAttributes", Unhandled(Metadata));
        assert_eq!(
            error_chain(&error),
            "GetQueueAttributes failed: AccessDeniedException: not \"yours\""
        );
        assert_eq!(service_error("Error { code: \"Throttling\" }").as_deref(), Some("Throttling"));
        assert_eq!(service_error("connection refused"), None);
    }

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

    #[derive(Debug, thiserror::Error)]
    #[error("{0}")]
    struct Link(&'static str, #[source] Option<Box<Link>>);

    fn chain(texts: &[&'static str]) -> Link {
        texts
            .iter()
            .rev()
            .fold(None, |source, text| Some(Link(text, source.map(Box::new))))
            .unwrap()
    }

    #[test]
    fn layers_second_lines_and_quoted_causes_are_left_out() {
        let error =
            chain(&["dispatch failure", "other", "connection refused.\nat line 2", "other"]);
        assert_eq!(error_chain(&error), "connection refused");
        let quoted = chain(&["--csv trace.csv: line 7: no such column", "line 7: no such column"]);
        assert_eq!(error_chain(&quoted), "--csv trace.csv: line 7: no such column");
        assert_eq!(error_chain(&chain(&["service error"])), "service error");
    }
}
