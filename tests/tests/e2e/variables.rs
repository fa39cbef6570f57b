//! The table of variables (`backpressure_core::config::variables`) against
//! what a person reads and deploys: each program's configuration table in
//! docs/ and every range `template.yaml` allows.

use backpressure_core::config::variables::{Accepts, Reader, Unset, Variable, named, read_by};
use serde_norway::Value;

use crate::template::{resource, template, worker_env};

/// The rows of the markdown table that follows `heading_row` in `doc`: cells, trimmed.
fn table_rows(doc: &str, heading_row: &str) -> Vec<Vec<String>> {
    let path = format!("{}/../docs/{doc}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let start = text.find(heading_row).unwrap_or_else(|| panic!("{path} lacks {heading_row:?}"));
    text[start..]
        .lines()
        .skip(2)
        .take_while(|line| line.starts_with('|'))
        .map(|line| line.trim_matches('|').split(" | ").map(|c| c.trim().to_owned()).collect())
        .collect()
}

/// The backticked names of a row's first cell.
fn names_in(cell: &str) -> Vec<&str> {
    cell.split('`').skip(1).step_by(2).collect()
}

/// A number as docs write it (`1–3,600`, `` `32` ``), as the table prints it (`1-3600`).
fn plain(text: &str) -> String {
    text.replace(['`', ','], "").replace('–', "-")
}

/// Checks one doc's table: every name is a variable `reader` reads, each whole
/// default stated is the table's, and every variable `expected` lists has a row.
fn check_doc(doc: &str, reader: Reader, expected: &[&Variable], ranges: bool) -> usize {
    let heading = if ranges {
        "| Variable | Default | Range | Meaning |"
    } else {
        "| Variable | Default | Meaning |"
    };
    let rows = table_rows(doc, heading);
    let mut listed = Vec::new();
    for row in &rows {
        for name in names_in(&row[0]) {
            let variable = named(name).unwrap_or_else(|| panic!("{doc}: {name} is not a variable"));
            assert!(variable.is_read_by(reader), "{doc}: {name} is not read by {reader:?}");
            listed.push(name);
            if let Unset::Whole(default) = variable.unset {
                let stated = plain(row[1].split_whitespace().next().unwrap_or_default());
                assert_eq!(stated, default.to_string(), "{doc}: {name}'s default");
            }
            if ranges {
                assert_eq!(
                    plain(&row[2]),
                    plain(&variable.accepts_text()),
                    "{doc}: {name}'s range"
                );
            }
        }
    }
    for variable in expected {
        assert!(listed.contains(&variable.name), "{doc} has no row for {}", variable.name);
    }
    listed.len()
}

#[test]
fn the_docs_tables_are_the_table() {
    let consumer: Vec<&Variable> = read_by(Reader::Consumer).collect();
    let worker_own: Vec<&Variable> =
        read_by(Reader::Worker).filter(|v| !v.is_read_by(Reader::Consumer)).collect();
    // The publisher's CONSUMER_CONCURRENCY is described with TARGET_LOAD_PERCENT, which needs it.
    let publisher: Vec<&Variable> =
        read_by(Reader::Publisher).filter(|v| v.name != "CONSUMER_CONCURRENCY").collect();
    let checked = [
        check_doc("consumer.md", Reader::Consumer, &consumer, false),
        check_doc("worker.md", Reader::Worker, &worker_own, true),
        check_doc("publisher.md", Reader::Publisher, &publisher, false),
    ];
    assert_eq!(checked, [26, 12, 17]);
}

/// The `(MinValue, MaxValue, Default)` of the parameter a `!Ref` names, when it is a number's.
fn parameter_range(template: &Value, value: &Value) -> Option<(f64, f64, f64)> {
    let Value::Tagged(tagged) = value else { return None };
    let parameter = &template["Parameters"][tagged.value.as_str()?];
    let number = |key: &str| match &parameter[key] {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    };
    Some((number("MinValue")?, number("MaxValue")?, number("Default")?))
}

#[test]
fn every_range_the_template_allows_is_one_the_code_accepts() {
    let template = template();
    let mut deployed: Vec<(String, Value)> = worker_env(&template).into_iter().collect();
    for function in ["ConsumerFunction", "PublisherFunction"] {
        let variables = resource(&template, function)["Environment"]["Variables"].as_mapping();
        for (name, value) in variables.into_iter().flatten() {
            deployed.push((name.as_str().unwrap_or_default().to_owned(), value.clone()));
        }
    }
    let mut checked = 0;
    for (name, value) in &deployed {
        let Some((min, max, default)) = parameter_range(&template, value) else { continue };
        let variable = named(name).unwrap_or_else(|| panic!("{name} is not a variable"));
        let (low, high) = match variable.accepts {
            Accepts::Whole { min, max } => (min as f64, max as f64),
            Accepts::Decimal { min, max } => (min, max),
            _ => panic!("{name} has a numeric parameter but is not a number"),
        };
        for allowed in [min, max, default] {
            assert!((low..=high).contains(&allowed), "{name}: the template allows {allowed}");
        }
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} ranged variables found in the template");
}
