//! Lists the public items of a library from its rustdoc JSON, one a line, so
//! `scripts/public-api.sh` can compare them with the recorded surface.
//!
//! `public-api <crate>.json`

use std::process::ExitCode;

fn main() -> ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: public-api <rustdoc JSON file>");
        return ExitCode::from(2);
    };
    let builder = public_api::Builder::from_rustdoc_json(&path)
        .omit_blanket_impls(true)
        .omit_auto_trait_impls(true)
        .omit_auto_derived_impls(true);
    match builder.build() {
        Ok(api) => {
            for item in api.items() {
                println!("{item}");
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("cannot read the public API from {path}: {error}");
            ExitCode::FAILURE
        }
    }
}
