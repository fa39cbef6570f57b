//! What `simulate` says when a setting cannot be simulated.

use std::path::PathBuf;

/// A setting outside what can be simulated.
#[derive(Debug, thiserror::Error)]
pub enum ArgsError {
    /// A number out of range.
    #[error("--{flag} {value}: {expected}")]
    Range {
        /// The flag.
        flag: &'static str,
        /// What was given.
        value: String,
        /// What is accepted.
        expected: &'static str,
    },
    /// A CSV larger than any trace that can be simulated.
    #[error("--csv {path}: {bytes} bytes; a trace file may hold at most {max} bytes")]
    TooBig {
        /// The file.
        path: PathBuf,
        /// Its size.
        bytes: u64,
        /// The limit.
        max: u64,
    },
    /// The CSV could not be read.
    #[error("--csv {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The CSV is not a trace.
    #[error("--csv {path}: {source}")]
    Csv {
        /// The file.
        path: PathBuf,
        /// What is wrong, and where.
        #[source]
        source: crate::trace::csv::CsvError,
    },
}

/// A month of one-second rows is about 50 MB; anything far larger is not a
/// trace, and is refused before it is read into memory.
pub(crate) const MAX_CSV_BYTES: u64 = 128 * 1024 * 1024;

pub(crate) fn check(
    ok: bool,
    flag: &'static str,
    value: impl ToString,
    expected: &'static str,
) -> Result<(), ArgsError> {
    if ok { Ok(()) } else { Err(ArgsError::Range { flag, value: value.to_string(), expected }) }
}
