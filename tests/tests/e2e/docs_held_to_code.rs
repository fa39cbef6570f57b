//! Docs that a test can hold to the code: the README stays a front door (what
//! you bring in its first lines, within 12,000 bytes), and docs/consumer.md's
//! table of what a JSON pointer gives is what the code gives.

use backpressure_core::field::text_at;

fn doc(path: &str) -> String {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    std::fs::read_to_string(format!("{root}/{path}")).unwrap()
}

#[test]
fn the_readme_is_a_front_door() {
    let readme = doc("README.md");
    assert!(readme.len() <= 12_000, "README.md is {} bytes: move detail to docs/", readme.len());
    let opening: String = readme.lines().take(6).collect::<Vec<_>>().join("\n");
    assert!(opening.contains("**You bring**"), "what you bring, first: {opening}");
}

/// The backticked items of a table cell.
fn quoted(cell: &str) -> Vec<&str> {
    cell.split('`').skip(1).step_by(2).collect()
}

#[test]
fn what_a_pointer_gives_for_each_kind_of_value_is_what_the_docs_say() {
    let consumer = doc("docs/consumer.md");
    let table = consumer
        .split("| The body holds | The key or tenant |")
        .nth(1)
        .expect("docs/consumer.md has the table of what a pointer gives");
    let mut checked = 0;
    for row in table.lines().skip(2).take_while(|line| line.starts_with('|')) {
        let cells: Vec<&str> = row.split(" | ").collect();
        let (held, gives) = (cells[0].trim_start_matches("| "), cells[1]);
        for value in quoted(held) {
            let got = text_at(&format!(r#"{{"v":{value}}}"#), "/v");
            match got {
                None => assert!(gives.starts_with("none"), "{value}: none, the docs say {gives}"),
                Some(text) => {
                    assert!(gives.contains(&format!("`{text}`")), "{value} gives {text}: {gives}")
                }
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 9, "values checked");
}

/// The durations written in `text` ("13 min 40 s", "95 s", "20 min"), in order.
fn durations(text: &str) -> Vec<String> {
    let words: Vec<&str> =
        text.split(|c: char| c.is_whitespace() || c == ';' || c == ',').collect();
    let mut found = Vec::new();
    let mut at = 0;
    while at < words.len() {
        let number = words[at].chars().all(|c| c.is_ascii_digit()) && !words[at].is_empty();
        match (number, words.get(at + 1)) {
            (true, Some(&"min")) => {
                let seconds = words.get(at + 2).filter(|w| w.chars().all(|c| c.is_ascii_digit()));
                match (seconds, words.get(at + 3)) {
                    (Some(s), Some(&"s")) if !s.is_empty() => {
                        found.push(format!("{} min {s} s", words[at]));
                        at += 4;
                    }
                    _ => {
                        found.push(format!("{} min", words[at]));
                        at += 2;
                    }
                }
            }
            (true, Some(&"s")) => {
                found.push(format!("{} s", words[at]));
                at += 2;
            }
            _ => at += 1,
        }
    }
    found
}

#[test]
fn the_readmes_first_run_times_are_the_measured_ones() {
    let readme = doc("README.md");
    let paragraph = readme
        .split("\n\n")
        .find(|p| p.starts_with("First-run times"))
        .expect("the README gives its first-run times in a paragraph of their own");
    let testing = doc("docs/testing.md");
    let measured = testing
        .split("## How long each takes")
        .nth(1)
        .expect("docs/testing.md has 'How long each takes'");
    let rows: Vec<&str> = measured.lines().filter(|l| l.starts_with("| `")).collect();
    let spans: Vec<&str> = paragraph.split('`').collect();
    let mut checked = Vec::new();
    for pair in spans[1..].chunks(2) {
        let [command, after] = pair else { continue };
        let command = command.trim();
        if !(command.starts_with("make ") || command == ".ci/run") {
            continue;
        }
        let times = durations(after);
        assert!(!times.is_empty(), "the README gives `{command}` no time");
        for time in times {
            let row = format!("| `{command}` |");
            assert!(
                rows.iter().any(|r| r.starts_with(&row) && r.contains(&format!("| {time} |"))),
                "the README gives `{command}` {time}, which docs/testing.md's measured runs do not"
            );
            checked.push(format!("{command} {time}"));
        }
    }
    assert_eq!(
        checked.len(),
        5,
        "make demo, make test, make simulate, .ci/run cold and warm: {checked:?}"
    );
}

#[test]
fn durations_read_as_written() {
    assert_eq!(
        durations("takes 13 min 40 s; then 95 s, and 20 min with (x)"),
        ["13 min 40 s", "95 s", "20 min"]
    );
}

/// docs/your-code.md shows the ledger example whole, as it compiles.
#[test]
fn the_whole_function_in_the_docs_is_the_example_that_compiles() {
    let example = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../crates/app/examples/ledger.rs"
    ))
    .unwrap();
    let docs = doc("docs/your-code.md");
    assert!(
        docs.contains(&format!("```rust\n{example}```\n")),
        "docs/your-code.md's ledger differs"
    );
}
