//! What each subcommand does: the reads (`stats`, `list`, `show`, `export`)
//! and what they say around their output, the changes (`replay`, `discard`)
//! with the prompt before one and the report after it, `audit FILE`, and the
//! manual pages (`man`).

pub(crate) mod audit_summary;
pub(crate) mod change_report;
pub(crate) mod consent;
pub(crate) mod discard;
pub(crate) mod doctor;
pub(crate) mod export;
pub(crate) mod list;
pub(crate) mod manual;
pub(crate) mod read_report;
pub(crate) mod replay;
pub(crate) mod stats;
