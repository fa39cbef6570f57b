//! docs/doctor.md's rules table and refused rules are the code's, row for row.

use backpressure_doctor::{REFUSED, RULES, Severity};

fn doc() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/doctor.md");
    std::fs::read_to_string(path).unwrap_or_default()
}

fn rows() -> Vec<String> {
    RULES
        .iter()
        .map(|rule| {
            let severity = match rule.severity {
                Severity::Broken => "broken",
                Severity::Warning => "warning",
            };
            let page = rule.source.rsplit('/').next().unwrap_or(rule.source);
            format!(
                "| `{}` | {severity} | {} | [{page}]({}) | {} |",
                rule.id, rule.threshold, rule.source, rule.peers
            )
        })
        .collect()
}

fn refused() -> Vec<String> {
    REFUSED.iter().map(|(rule, why)| format!("- **{rule}**: {why}.")).collect()
}

#[test]
fn the_rules_table_is_the_codes() {
    let doc = doc();
    let missing: Vec<String> = rows().into_iter().filter(|row| !doc.contains(row)).collect();
    assert!(missing.is_empty(), "docs/doctor.md lacks these rows:\n{}", missing.join("\n"));
    let listed = doc.lines().filter(|line| line.starts_with("| `")).count();
    assert_eq!(listed, RULES.len(), "docs/doctor.md lists rules the code does not have");
}

#[test]
fn the_refused_rules_are_the_codes() {
    let doc = doc();
    let missing: Vec<String> = refused().into_iter().filter(|row| !doc.contains(row)).collect();
    assert!(missing.is_empty(), "docs/doctor.md lacks:\n{}", missing.join("\n"));
}
