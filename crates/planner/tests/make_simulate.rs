//! `make simulate` runs `recommend` on a few built-in traces (the Makefile's
//! `SIMULATE_TRACES`) and `make simulate-full` on all of them. The first look
//! is only quicker, not a different answer: each trace's recommendation is
//! the same whichever traces run beside it.

#![allow(clippy::unwrap_used)]

#[allow(dead_code)]
mod common;

use capacity_planner::trace::BuiltIn;
use clap::ValueEnum;
use common::{scratch, simulate, text};

/// The traces `make simulate` recommends on, as the Makefile lists them.
fn simulate_traces() -> Vec<String> {
    let makefile = concat!(env!("CARGO_MANIFEST_DIR"), "/../../Makefile");
    let makefile = std::fs::read_to_string(makefile).unwrap();
    let line = makefile.lines().find_map(|l| l.strip_prefix("SIMULATE_TRACES := ")).unwrap();
    line.split_whitespace().map(str::to_owned).collect()
}

#[test]
fn make_simulate_recommends_on_built_in_traces_and_not_on_all_of_them() {
    let traces = simulate_traces();
    for name in &traces {
        assert!(BuiltIn::from_str(name, false).is_ok(), "{name} is not a built-in trace");
    }
    assert!(traces.len() < BuiltIn::ALL.len(), "make simulate-full is the one that runs all");
    assert!(traces.iter().any(|t| t == "burst-from-idle"), "the README's trace: {traces:?}");
}

#[test]
fn a_traces_recommendation_is_the_same_alone_and_beside_other_traces() {
    let dir = scratch("make-simulate");
    let out = dir.to_str().unwrap();
    for consumer in ["ecs", "lambda"] {
        let run = |traces: &[&str]| {
            let traces = traces.iter().flat_map(|t| ["--trace", t]);
            let args: Vec<&str> = ["recommend", "--consumer", consumer, "--out", out]
                .into_iter()
                .chain(traces)
                .collect();
            let output = simulate(&args);
            assert!(output.status.success(), "{}", text(&output.stderr));
            text(&output.stdout)
        };
        let alone = run(&["sparse-trickle"]);
        let beside = run(&["burst-from-idle", "sparse-trickle"]);
        assert!(alone.starts_with("### sparse-trickle"), "{alone}");
        assert!(beside.ends_with(&alone), "{consumer}: alone:\n{alone}\nbeside another:\n{beside}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}
