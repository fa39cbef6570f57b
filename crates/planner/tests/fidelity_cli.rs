//! `simulate fidelity` and `simulate cross-validate` as a person runs them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

// Only `simulate` and `text` of the shared helpers are needed here.
#[allow(dead_code)]
mod common;

use common::{simulate, text};

#[test]
fn fidelity_holds_and_its_json_gives_every_check_with_its_source() {
    let table = simulate(&["fidelity"]);
    assert!(table.status.success(), "{}", text(&table.stderr));
    let table = text(&table.stdout);
    assert!(
        table.contains("| ecs-scale-out-trigger-20s | 86 s | 90 s | +4.7 % | yes |"),
        "{table}"
    );
    assert!(table.contains("checks within ±15 %; the other 3 explained."), "{table}");
    let json = simulate(&["fidelity", "--json"]);
    let value: serde_json::Value = serde_json::from_str(text(&json.stdout).trim()).unwrap();
    let checks = value["checks"].as_array().unwrap();
    assert_eq!(checks.len(), 10);
    assert_eq!(value["holds"], true);
    for check in checks {
        for key in ["name", "published", "simulated", "unit", "source", "within"] {
            assert!(!check[key].is_null(), "{key} in {check}");
        }
        // Out of its band only with a reason, and within the range that reason accounts for.
        if check["within"] == false {
            assert_eq!(check["explained"]["holds"], true, "{check}");
        }
    }
}

#[test]
fn cross_validate_judges_each_trace_at_defaults_chosen_without_it() {
    let output = simulate(&[
        "cross-validate",
        "--trace",
        "burst-from-idle",
        "--trace",
        "sparse-trickle",
        "--seeds",
        "1",
    ]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let table = text(&output.stdout);
    let rows: Vec<&str> =
        table.lines().filter(|l| l.starts_with("| burst") || l.starts_with("| sparse")).collect();
    assert_eq!(rows.len(), 2, "{table}");
    // With two traces, each is judged at the other's choice: sparse-trickle's 300 %, hold 15
    // minutes flaps past the bound on the trickle.
    assert!(
        rows[1].contains("300 %, hold 15 min, MinTasks 0:") && rows[1].contains("over the bound"),
        "{table}"
    );
    assert!(
        table.contains("Held out, each trace judged at the defaults chosen without it: 1 of 2"),
        "{table}"
    );
}

#[test]
fn cross_validate_refuses_what_it_cannot_use_as_a_usage_error() {
    let cases: [(&[&str], &str); 4] = [
        (&["--trace", "steady"], "give --trace at least twice"),
        (&["--consumer", "lambda"], "use `simulate recommend --consumer lambda`"),
        (&["--target-load", "100"], "cross-validate chooses --target-load itself"),
        (&["--target", "50"], "--target is not read"),
    ];
    for (args, expected) in cases {
        let output = simulate(&[&["cross-validate"][..], args].concat());
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(text(&output.stderr).contains(expected), "{args:?}: {}", text(&output.stderr));
    }
}
