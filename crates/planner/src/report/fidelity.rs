//! What `simulate fidelity` prints: a table a person reads, or one JSON
//! object for a script.

use std::fmt::Write;

use crate::check::fidelity::{BAND, Check};

fn figure(value: f64) -> String {
    if value.is_finite() { format!("{value:.0}") } else { "none".to_owned() }
}

/// The table, each check's setup under it, and a closing line saying
/// whether every check holds.
pub fn table(checks: &[Check]) -> String {
    let mut out = String::new();
    let band = BAND * 100.0;
    let _ = writeln!(
        out,
        "| check | published | simulated | difference | within ±{band:.0} % |\n|---|---:|---:|---:|---|"
    );
    for check in checks {
        let verdict = match (check.within(), check.holds()) {
            (true, _) => "yes".to_owned(),
            (false, true) => "no, explained (below)".to_owned(),
            (false, false) => "NO".to_owned(),
        };
        let _ = writeln!(
            out,
            "| {} | {} {} | {} {} | {:+.1} % | {verdict} |",
            check.name,
            figure(check.published),
            check.unit,
            figure(check.simulated),
            check.unit,
            check.difference() * 100.0
        );
    }
    for check in checks {
        let _ = writeln!(out, "\n{}: {}.\n  source: {}", check.name, check.setup, check.source);
        if let Some(explained) = check.explained.filter(|_| !check.within()) {
            let (low, high) = explained.range;
            let _ = writeln!(
                out,
                "  explained ({:+.0} % to {:+.0} % accounted for): {}",
                low * 100.0,
                high * 100.0,
                explained.why
            );
        }
    }
    let failed: Vec<&str> = checks.iter().filter(|c| !c.holds()).map(|c| c.name).collect();
    let within = checks.iter().filter(|c| c.within()).count();
    let _ = if failed.is_empty() {
        writeln!(
            out,
            "\n{within} of {} checks within ±{band:.0} %; the other {} explained.",
            checks.len(),
            checks.len() - within
        )
    } else {
        writeln!(
            out,
            "\n{} of {} checks outside ±{band:.0} % and unexplained: {}",
            failed.len(),
            checks.len(),
            failed.join(", ")
        )
    };
    out
}

/// `{"checks":[{"name","published","simulated","unit","source","within",…}]}`.
pub fn json(checks: &[Check]) -> serde_json::Value {
    let rows: Vec<_> = checks
        .iter()
        .map(|check| {
            let finite =
                |v: f64| if v.is_finite() { serde_json::json!(v) } else { serde_json::Value::Null };
            serde_json::json!({
                "name": check.name,
                "published": check.published,
                "simulated": finite(check.simulated),
                "unit": check.unit,
                "source": check.source,
                "within": check.within(),
                "difference": finite(check.difference()),
                "setup": check.setup,
                "explained": check.explained.filter(|_| !check.within()).map(|e| serde_json::json!({
                    "why": e.why,
                    "range": [e.range.0, e.range.1],
                    "holds": check.holds(),
                })),
            })
        })
        .collect();
    serde_json::json!({ "band": BAND, "checks": rows, "holds": checks.iter().all(Check::holds) })
}
