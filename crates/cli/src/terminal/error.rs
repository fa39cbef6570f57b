//! Why a command stopped.

use std::path::PathBuf;

use crate::terminal::explain::explain_sdk;

/// A failure of the command as a whole (a failure of one message is counted
/// and reported, and the command goes on).
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// A bad flag or setting: exit 2, as clap's own usage errors.
    #[error("{0}")]
    Usage(String),
    #[error("{flag} {value:?} is not a time: give {}", crate::args::times::TIME_FORMS)]
    BadTime { flag: &'static str, value: String },
    #[error("--rate {0} is not a positive number of messages per second")]
    BadRate(f64),
    #[error("{operation} on {queue} failed: {}", explain_sdk(.source.as_ref(), operation))]
    Sqs {
        operation: &'static str,
        queue: String,
        #[source]
        source: Box<aws_sdk_sqs::Error>,
    },
    #[error(
        "STS GetCallerIdentity failed, so the audit trail cannot name the operator: {}",
        explain_sdk(.0.as_ref(), "GetCallerIdentity")
    )]
    Identity(#[source] Box<aws_sdk_sts::Error>),
    #[error("{path}: {source}{}", file_hint(.source))]
    File {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the audit file {path} could not be written: {source}{}", file_hint(.source))]
    AuditWrite {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} line {line}: not an audit entry ({source}): {}", named.fix())]
    Audit {
        path: PathBuf,
        line: usize,
        /// How the person named the file, so the fix names the same thing.
        named: AuditNamed,
        #[source]
        source: serde_json::Error,
    },
    #[error("{} already exists: give --out a new file (an export never overwrites one)", .0.display())]
    Exists(PathBuf),
    #[error(
        "--out {} cannot be created: {source}; give --out a new file in a folder that exists and \
         this user may write",
        .path.display()
    )]
    Out {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("no message with id {0} on {1}")]
    NotFound(String, String),
    #[error("{0}")]
    Destination(String),
    #[error("not confirmed: nothing was changed")]
    NotConfirmed,
    #[error(
        "stdin is not a terminal, so there is no one to confirm with: add --yes to go on \
         (nothing was changed)"
    )]
    NoTerminal,
    #[error(
        "interrupted: {released} message(s) this command held are visible again{}",
        not_released_note(.not_released, .lease)
    )]
    Interrupted { released: usize, not_released: usize, lease: i32 },
    #[error(
        "a temporary store of this command failed ({0}): free space on the disk of its temporary \
         directory (SQLITE_TMPDIR, else TMPDIR, else /var/tmp) or point SQLITE_TMPDIR at a \
         larger one; what it held and could not release is visible again when its lease ends \
         (--visibility-timeout)"
    )]
    Spill(#[from] crate::reading::spill::SpillError),
    #[error("{source}; {}", template_hint(.source))]
    Template {
        #[from]
        source: backpressure_doctor::TemplateError,
    },
}

fn template_hint(error: &backpressure_doctor::TemplateError) -> &'static str {
    use backpressure_doctor::TemplateError;
    match error {
        // A template whose resources CloudFormation refuses is the right file, to mend.
        TemplateError::NotATemplate { reason, .. }
            if reason.starts_with("its Resources") || reason.starts_with("its resource") =>
        {
            "CloudFormation refuses it too: give its Resources at least one resource, each with a Type"
        }
        TemplateError::Template { .. } | TemplateError::NotATemplate { .. } => {
            "give --template the template file, YAML or JSON"
        }
        TemplateError::Cycle { .. } => {
            "CloudFormation refuses it too (a circular dependency): remove a reference on that path"
        }
        TemplateError::Unsupported(_) | TemplateError::TooDeep { .. } => {
            "check the deployed stack with doctor --queue instead, once it is deployed"
        }
        _ => "give --parameters a samconfig file (.toml) or a parameters JSON (.json)",
    }
}

/// Where the audit file was named: `--audit` of `replay` and `discard`, or
/// the file argument of `audit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuditNamed {
    Flag,
    Argument,
}

impl AuditNamed {
    fn fix(self) -> &'static str {
        match self {
            Self::Flag => "give --audit this tool's audit file of earlier runs, or a new one",
            Self::Argument => {
                "give `audit` the audit file a replay or discard wrote (their --audit)"
            }
        }
    }
}

/// What to do about a file that could not be read or written, where it is not plain.
fn file_hint(error: &std::io::Error) -> &'static str {
    use std::io::ErrorKind;
    match error.kind() {
        ErrorKind::FileTooLarge => {
            " (a file-size limit was reached, such as the shell's `ulimit -f`: raise it or name a \
             file where it allows more, then run the same command again; with the same --audit a \
             replay or discard resumes)"
        }
        ErrorKind::StorageFull | ErrorKind::QuotaExceeded => {
            " (no room for it: free space on its disk or name a file on another, then run the same \
             command again; with the same --audit a replay or discard resumes)"
        }
        ErrorKind::PermissionDenied | ErrorKind::ReadOnlyFilesystem => {
            " (not permitted: name a file this user may write)"
        }
        ErrorKind::NotFound => " (no such file: name one that exists, or check the path)",
        _ => "",
    }
}

fn not_released_note(not_released: &usize, lease: &i32) -> String {
    if *not_released == 0 {
        return String::new();
    }
    format!(
        "; {not_released} that SQS would not release are visible again within {lease} s \
         (--visibility-timeout)"
    )
}

impl CliError {
    /// Whether stdout was closed early (`| head`): the command ends quietly.
    pub fn is_closed_stdout(&self) -> bool {
        matches!(self, Self::File { path, source }
            if source.kind() == std::io::ErrorKind::BrokenPipe
                && (path.as_os_str() == "<stdout>" || path.as_os_str() == "-"))
    }

    /// A signal stopped the command after it released `held` messages, SQS
    /// refusing `refused` of them (all, when the release call itself failed).
    pub(crate) fn interrupted(held: usize, refused: &Result<usize, CliError>, lease: i32) -> Self {
        let not_released = refused.as_ref().map_or(held, |refused| *refused);
        Self::Interrupted { released: held - not_released, not_released, lease }
    }

    /// Whether a signal stopped the command (exit 130).
    pub fn is_interrupted(&self) -> bool {
        matches!(self, Self::Interrupted { .. })
    }

    /// Whether this is the operator's input, not the queue's or AWS's doing (exit 2).
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            Self::Usage(_)
                | Self::BadTime { .. }
                | Self::BadRate(_)
                | Self::NoTerminal
                | Self::Exists(_)
                | Self::Out { .. }
        )
    }

    /// An SQS call's failure, with the operation and queue it was for.
    pub(crate) fn sqs<E>(operation: &'static str, queue: &str, source: E) -> Self
    where
        aws_sdk_sqs::Error: From<E>,
    {
        Self::Sqs { operation, queue: queue.to_owned(), source: Box::new(source.into()) }
    }

    pub(crate) fn file(path: &std::path::Path, source: std::io::Error) -> Self {
        Self::File { path: path.to_owned(), source }
    }
}
