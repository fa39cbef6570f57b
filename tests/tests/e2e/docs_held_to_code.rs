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
