//! What each subcommand does: the reads (`stats`, `list`, `show`,
//! `export`), the changes (`replay`, `discard`) and the prompt before one,
//! `audit FILE`, and the manual pages.

pub(crate) mod audit_summary;
pub(crate) mod change_report;
pub(crate) mod consent;
pub(crate) mod discard;
pub(crate) mod export;
pub(crate) mod list;
pub(crate) mod manual;
pub(crate) mod read_report;
pub(crate) mod replay;
pub(crate) mod stats;
