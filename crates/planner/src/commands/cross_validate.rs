//! `simulate cross-validate`: the load's defaults chosen on all traces but
//! one and judged on it, each trace in turn.

use std::io::Write;
use std::time::Instant;

use super::Result;
use crate::args::ScenarioArgs;
use crate::check::held_out;
use crate::recommend::Robustness;
use crate::report;

/// The held-out table; each trace's time on stderr, as the searches are long.
pub fn cross_validate(scenario: &ScenarioArgs, seeds: u32, w: &mut impl Write) -> Result {
    let robustness = Robustness { seeds, ..Robustness::default() };
    let scenarios = scenario.scenarios()?;
    let mut results = Vec::new();
    for scenario in &scenarios {
        let started = Instant::now();
        results.push(held_out::evaluate(scenario, robustness));
        eprintln!("{}: {:.0} s", scenario.trace.name, started.elapsed().as_secs_f64());
    }
    let rows = held_out::rows(&results, seeds);
    write!(w, "{}", report::held_out::table(&results, &rows, seeds))?;
    w.flush()?;
    Ok(())
}
