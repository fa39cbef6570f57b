//! `simulate fidelity`: the model beside the figures AWS has published.

use std::io::Write;

use super::Result;
use crate::check::fidelity;
use crate::report;

/// A check outside its band and its explanation.
#[derive(Debug, thiserror::Error)]
#[error("{0} of the fidelity checks left their band unexplained (the table above names them)")]
struct FidelityFailed(usize);

/// The checks as a table (or one JSON object); an error when one does not hold.
pub fn fidelity(json: bool, w: &mut impl Write) -> Result {
    let checks = fidelity::checks();
    if json {
        writeln!(w, "{}", report::fidelity::json(&checks))?;
    } else {
        write!(w, "{}", report::fidelity::table(&checks))?;
    }
    w.flush()?;
    let failed = checks.iter().filter(|c| !c.holds()).count();
    if failed > 0 {
        return Err(FidelityFailed(failed).into());
    }
    Ok(())
}
