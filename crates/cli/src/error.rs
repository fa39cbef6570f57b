//! Why a command stopped.

use std::path::PathBuf;

use aws_smithy_types::error::display::DisplayErrorContext;

/// A failure of the command as a whole (a failure of one message is counted
/// and reported, and the command goes on).
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error("{flag} {value:?} is neither an RFC 3339 time nor an age such as 2h, 30m or 7d")]
    BadTime { flag: &'static str, value: String },
    #[error("--rate {0} is not a positive number of messages per second")]
    BadRate(f64),
    #[error("{operation} on {queue} failed: {}", DisplayErrorContext(.source.as_ref()))]
    Sqs {
        operation: &'static str,
        queue: String,
        #[source]
        source: Box<aws_sdk_sqs::Error>,
    },
    #[error(
        "STS GetCallerIdentity failed, so the audit trail cannot name the operator: {}",
        DisplayErrorContext(.0.as_ref())
    )]
    Identity(#[source] Box<aws_sdk_sts::Error>),
    #[error("{path}: {source}")]
    File {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} line {line}: not an audit entry: {source}")]
    Audit {
        path: PathBuf,
        line: usize,
        #[source]
        source: serde_json::Error,
    },
    #[error("{} already exists: give --out a new file (an export never overwrites one)", .0.display())]
    Exists(PathBuf),
    #[error("no message with id {0} on the queue")]
    NotFound(String),
    #[error("{0}")]
    Destination(String),
    #[error("not confirmed: nothing was changed")]
    NotConfirmed,
}

impl CliError {
    /// An SQS call's failure, with the operation and queue it was for.
    pub fn sqs<E>(operation: &'static str, queue: &str, source: E) -> Self
    where
        aws_sdk_sqs::Error: From<E>,
    {
        Self::Sqs { operation, queue: queue.to_owned(), source: Box::new(source.into()) }
    }

    pub fn file(path: &std::path::Path, source: std::io::Error) -> Self {
        Self::File { path: path.to_owned(), source }
    }
}
