//! An AWS call's failure in one line a person can act on: the service's code
//! and message once, or the root cause of a call that got no answer, and a
//! hint naming the flag or variable that fixes it. Never the SDK's `Debug`.

use std::error::Error;

use aws_config::meta::ProviderChainError;
use aws_credential_types::provider::error::CredentialsError;
use aws_smithy_types::error::metadata::ProvideErrorMetadata;
use backpressure_core::error::{SDK_LAYERS, error_chain};

/// `error` (an SDK error of `operation`, with the service's `code` and
/// `message` when it answered), explained.
pub(crate) fn explain(
    error: &(dyn Error + 'static),
    code: Option<&str>,
    message: Option<&str>,
    operation: &str,
) -> String {
    if let Some(code) = code {
        let said = said(code, message);
        return match hint_for_code(code, operation) {
            Some(hint) => format!("{said} ({hint})"),
            None => said,
        };
    }
    if let Some(chain) = find::<ProviderChainError<CredentialsError>>(error) {
        return format!(
            "no AWS credentials were found: tried {} (set --profile or AWS_PROFILE, or \
             AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)",
            tried(chain.attempts().iter().map(|attempt| attempt.name()))
        );
    }
    if let Some(credentials) = find::<CredentialsError>(error) {
        return format!(
            "no usable AWS credentials: {} (set --profile or AWS_PROFILE, or AWS_ACCESS_KEY_ID and \
             AWS_SECRET_ACCESS_KEY)",
            root_cause(credentials)
        );
    }
    let cause = root_cause(error);
    let lower = cause.to_lowercase();
    if lower.contains("timeout") || lower.contains("timed out") {
        return format!(
            "no answer within the call's time ({cause}): raise --call-timeout, or check the \
             endpoint and the network"
        );
    }
    if lower.contains("signing region") {
        return "no AWS region is set: give --region or set AWS_REGION".to_owned();
    }
    if ["connect", "dns error", "connection refused", "connection reset", "broken pipe"]
        .iter()
        .any(|s| lower.contains(s))
    {
        let service = service(operation);
        return format!(
            "could not reach {service}: {cause} (check --endpoint-url or AWS_ENDPOINT_URL_{service}, \
             and the network)"
        );
    }
    cause
}

/// `explain` for an SDK error that carries its metadata.
pub(crate) fn explain_sdk<E>(error: &E, operation: &str) -> String
where
    E: Error + ProvideErrorMetadata + 'static,
{
    explain(error, error.code(), error.message(), operation)
}

/// The service's code and the first line of its message.
fn said(code: &str, message: Option<&str>) -> String {
    match message.map(one_line).filter(|m| !m.is_empty()) {
        Some(message) => format!("{code}: {message}"),
        None => code.to_owned(),
    }
}

/// What the service answered, without a hint: for a caller that knows a
/// better one. `None` for a call that got no answer.
pub(crate) fn answered<E: ProvideErrorMetadata>(error: &E) -> Option<String> {
    error.code().map(|code| said(code, error.message()))
}

/// Whether SQS's code says the queue does not exist.
pub(crate) fn is_missing_queue(code: &str) -> bool {
    code.contains("NonExistentQueue") || code == "QueueDoesNotExist"
}

fn hint_for_code(code: &str, operation: &str) -> Option<String> {
    if operation == "GetCallerIdentity" {
        // It needs no permission: a refusal is of the credentials themselves.
        return Some(
            "GetCallerIdentity needs no permission, so the credentials were refused: check \
             --profile, AWS_PROFILE or AWS_ACCESS_KEY_ID"
                .to_owned(),
        );
    }
    let hint = match code {
        c if c.contains("AccessDenied")
            || c.contains("NotAuthorized")
            || c == "AuthorizationError" =>
        {
            format!(
                "the identity lacks {} on this {}: use the template's OperatorRole \
                 (--profile), or grant it",
                iam_action(operation),
                if is_s3(operation) { "bucket" } else { "queue" }
            )
        }
        c if is_missing_queue(c) => {
            "check the queue: a queue URL, ARN or name of this account and --region".to_owned()
        }
        c if c.contains("Throttl") || c == "RequestThrottled" || c == "SlowDown" => {
            "throttled past the SDK's retries: run the same command again, or with a lower \
             --rate or --concurrency"
                .to_owned()
        }
        "InvalidClientTokenId"
        | "UnrecognizedClientException"
        | "SignatureDoesNotMatch"
        | "IncompleteSignature"
        | "InvalidSignatureException" => {
            "the credentials were refused: check --profile, AWS_PROFILE or AWS_ACCESS_KEY_ID"
                .to_owned()
        }
        "ExpiredToken" | "ExpiredTokenException" | "RequestExpired" => {
            "the credentials have expired: sign in again (aws sso login) or refresh them".to_owned()
        }
        "InternalError" | "InternalFailure" | "ServiceUnavailable" => {
            let service = service(operation);
            format!("{service} failed past the SDK's retries: run the same command again")
        }
        _ => return None,
    };
    Some(hint)
}

/// The IAM action of an API operation (SQS batch calls use the single action).
fn iam_action(operation: &str) -> String {
    if is_s3(operation) {
        return format!("s3:{operation}");
    }
    format!("sqs:{}", operation.strip_suffix("Batch").unwrap_or(operation))
}

/// The service an operation of this tool's is of (each has its `AWS_ENDPOINT_URL_…`).
fn service(operation: &str) -> &'static str {
    match operation {
        "GetCallerIdentity" => "STS",
        operation if is_s3(operation) => "S3",
        _ => "SQS",
    }
}

/// The S3 operations this tool calls: on the bodies kept in a quarantine bucket.
fn is_s3(operation: &str) -> bool {
    operation.ends_with("Object")
}

/// The first error of type `T` in `error`'s chain.
/// The sources of the SDK's default chain, named as a person sets them.
fn tried<'a>(providers: impl Iterator<Item = &'a str>) -> String {
    let file = |variable: &str, default: &str| {
        std::env::var(variable).unwrap_or_else(|_| default.to_owned())
    };
    let named: Vec<String> = providers
        .map(|provider| match provider {
            "Environment" => "the environment (AWS_ACCESS_KEY_ID)".to_owned(),
            "Profile" => format!(
                "the shared config files ({}, {})",
                file("AWS_CONFIG_FILE", "~/.aws/config"),
                file("AWS_SHARED_CREDENTIALS_FILE", "~/.aws/credentials")
            ),
            "WebIdentityToken" => "a web identity token (AWS_WEB_IDENTITY_TOKEN_FILE)".to_owned(),
            "EcsContainer" => "the ECS container endpoint".to_owned(),
            "Ec2InstanceMetadata" => "EC2 instance metadata".to_owned(),
            other => other.to_owned(),
        })
        .collect();
    match named.as_slice() {
        [] => "no source".to_owned(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

fn find<'a, T: Error + 'static>(error: &'a (dyn Error + 'static)) -> Option<&'a T> {
    let mut next = Some(error);
    while let Some(current) = next {
        if let Some(found) = current.downcast_ref::<T>() {
            return Some(found);
        }
        next = current.source();
    }
    None
}

/// The chain's messages ([`error_chain`]), or that nothing says what happened.
fn root_cause(error: &(dyn Error + 'static)) -> String {
    let chain = error_chain(error);
    if chain.is_empty() || SDK_LAYERS.contains(&chain.as_str()) {
        "an unknown error".to_owned()
    } else {
        chain
    }
}

fn one_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().trim().trim_end_matches('.').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("{text}")]
    struct Link {
        text: &'static str,
        #[source]
        source: Option<Box<dyn Error + Send + Sync>>,
    }

    fn chain(texts: &[&'static str]) -> Box<dyn Error + Send + Sync> {
        let mut error: Option<Box<dyn Error + Send + Sync>> = None;
        for text in texts.iter().rev() {
            error = Some(Box::new(Link { text, source: error }));
        }
        error.unwrap_or_else(|| Box::new(Link { text: "", source: None }))
    }

    #[test]
    fn a_service_error_is_its_code_its_message_and_a_hint() {
        let error = chain(&["service error"]);
        let text = explain(
            error.as_ref(),
            Some("AccessDenied"),
            Some("not allowed.\nmore"),
            "DeleteMessageBatch",
        );
        assert_eq!(
            text,
            "AccessDenied: not allowed (the identity lacks sqs:DeleteMessage on this queue: use the \
             template's OperatorRole (--profile), or grant it)"
        );
    }

    #[test]
    fn a_call_without_an_answer_names_its_root_cause_and_what_to_change() {
        let refused = chain(&[
            "unhandled error",
            "dispatch failure",
            "io error",
            "tcp connect error",
            "Connection refused (os error 111)",
        ]);
        let text = explain(refused.as_ref(), None, None, "ReceiveMessage");
        assert_eq!(
            text,
            "could not reach SQS: tcp connect error: Connection refused (os error 111) (check \
             --endpoint-url or AWS_ENDPOINT_URL_SQS, and the network)"
        );
        let sts = explain(refused.as_ref(), None, None, "GetCallerIdentity");
        assert!(sts.starts_with("could not reach STS: ") && sts.contains("AWS_ENDPOINT_URL_STS"));
        let s3 = explain(refused.as_ref(), None, None, "GetObject");
        assert!(s3.starts_with("could not reach S3: ") && s3.contains("AWS_ENDPOINT_URL_S3"));
        let timeout = chain(&[
            "unhandled error",
            "timeout",
            "operation timeout (all attempts including retries) occurred after 2s",
        ]);
        assert!(
            explain(timeout.as_ref(), None, None, "ReceiveMessage")
                .starts_with("no answer within the call's time")
        );
        let region = chain(&["dispatch failure", "other", "missing signing region"]);
        assert_eq!(
            explain(region.as_ref(), None, None, "ReceiveMessage"),
            "no AWS region is set: give --region or set AWS_REGION"
        );
    }

    #[test]
    fn missing_credentials_give_the_chains_first_line() {
        let credentials = CredentialsError::not_loaded(
            "no credentials found in chain. Attempted:\n  Environment: not set",
        );
        let error = Link { text: "dispatch failure", source: Some(Box::new(credentials)) };
        let text = explain(&error, None, None, "GetQueueAttributes");
        assert!(text.starts_with("no usable AWS credentials: "), "{text}");
        assert!(text.contains("no credentials found in chain"), "{text}");
        assert!(!text.contains('\n') && text.contains("AWS_PROFILE"), "{text}");
    }
}
