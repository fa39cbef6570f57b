//! What a person sees: the error a command stops with and the AWS failure
//! explained in it, text from messages made safe to print, progress bars
//! and the log lines drawn around them, the signals that stop a command,
//! and the exit status.

pub(crate) mod error;
pub(crate) mod exit_status;
pub(crate) mod explain;
pub mod interrupt;
pub mod logging;
pub(crate) mod printable;
pub(crate) mod progress;
