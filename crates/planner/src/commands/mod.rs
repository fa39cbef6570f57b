//! The subcommands, a function each: what `simulate` does once its command
//! line is read, writing what a person reads (or JSON) to `w`.

mod compare;
mod cross_validate;
mod existing;
mod fidelity;
mod recommend;

use std::path::Path;

pub use compare::compare;
pub use cross_validate::cross_validate;
pub use existing::existing_json_and_text;
pub use fidelity::fidelity;
pub use recommend::{Found, RecommendSettings, recommend};

/// What a subcommand ends with: nothing, or the error `simulate` prints.
pub type Result = std::result::Result<(), Box<dyn std::error::Error>>;

/// Makes `--out` if it is not there yet.
fn out_dir(out: &Path) -> std::result::Result<(), String> {
    std::fs::create_dir_all(out).map_err(|e| format!("--out {}: {e}", out.display()))
}
