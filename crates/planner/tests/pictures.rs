//! `compare`'s two pictures as files: the overview a person reads at a
//! glance (one strip per policy on one clock, the same size whatever the
//! policies) and the detail beside it (three rows per policy).

#![allow(clippy::unwrap_used)]

#[allow(dead_code)]
mod common;

use std::path::Path;

use capacity_planner::plot::OVERVIEW_SIZE;
use capacity_planner::sim::policy::Policy;
use common::{scratch, simulate, text};

/// A PNG's width and height, from its header.
fn png_size(path: &Path) -> (u32, u32) {
    let png = std::fs::read(path).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "{} is a PNG", path.display());
    assert_eq!(&png[12..16], b"IHDR");
    let word = |at: usize| u32::from_be_bytes(png[at..at + 4].try_into().unwrap());
    (word(16), word(20))
}

/// An SVG's texts, one per element, in drawing order.
fn texts(path: &Path) -> Vec<String> {
    let svg = std::fs::read_to_string(path).unwrap();
    let mut lines = svg.lines().map(str::trim);
    let mut texts = Vec::new();
    while let Some(line) = lines.next() {
        if line.starts_with("<text") {
            texts.push(lines.next().unwrap_or_default().to_owned());
        }
    }
    texts
}

fn count(texts: &[String], wanted: impl Fn(&str) -> bool) -> usize {
    texts.iter().filter(|t| wanted(t)).count()
}

/// `simulate compare args…` into a scratch directory, which it returns.
fn compare(name: &str, args: &[&str]) -> std::path::PathBuf {
    let dir = scratch(name);
    let out = dir.to_str().unwrap().to_owned();
    let output = simulate(&[&["compare"], args, &["--out", &out][..]].concat());
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    assert!(stdout.contains("each run in detail: "), "the detail is named: {stdout}");
    dir
}

#[test]
fn the_overview_is_one_strip_per_policy_on_one_clock_in_a_fixed_size() {
    let dir = compare("overview", &["--trace", "burst-from-idle"]);
    let (overview, detail) =
        (dir.join("burst-from-idle.svg"), dir.join("burst-from-idle-detail.svg"));
    assert_eq!(png_size(&overview.with_extension("png")), OVERVIEW_SIZE);
    let svg = std::fs::read_to_string(&overview).unwrap();
    let (width, height) = OVERVIEW_SIZE;
    assert!(
        svg.starts_with(&format!("<svg width=\"{width}\" height=\"{height}\"")),
        "{}",
        &svg[..80]
    );

    let said = texts(&overview);
    for policy in Policy::ALL {
        assert_eq!(count(&said, |t| t == policy.label()), 1, "one strip for {}", policy.label());
    }
    // Each strip's second line says what its run cost.
    assert_eq!(count(&said, |t| t.contains(" task-min, ")), Policy::ALL.len(), "{said:?}");
    assert_eq!(count(&said, |t| t == "arrivals / min"), 2, "the legend and the arrivals' strip");
    // One clock for all: each time is labelled once, under the last strip.
    for time in ["00:20", "01:00"] {
        assert_eq!(count(&said, |t| t == time), 1, "{time}: {said:?}");
    }

    // The detail keeps three rows a policy, each on its own clock.
    let detail_said = texts(&detail);
    assert_eq!(count(&detail_said, |t| t == "wait, s (log)"), Policy::ALL.len());
    assert_eq!(count(&detail_said, |t| t == "00:20"), 3 * Policy::ALL.len());
    let (_, detail_height) = png_size(&detail.with_extension("png"));
    assert!(detail_height > height, "the detail is the tall one: {detail_height}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_best_settings_overview_names_each_policys_own_setting_once() {
    let dir = compare("overview-best", &["--best-settings", "--trace", "sparse-trickle"]);
    let overview = dir.join("sparse-trickle-best-settings.svg");
    assert_eq!(png_size(&overview.with_extension("png")), OVERVIEW_SIZE);
    let said = texts(&overview);
    for policy in Policy::ALL {
        let label = format!("{}, target ", policy.label());
        assert_eq!(count(&said, |t| t.starts_with(&label)), 1, "{label}: {said:?}");
    }
    assert!(dir.join("sparse-trickle-best-settings-detail.png").exists());
    std::fs::remove_dir_all(dir).unwrap();
}
