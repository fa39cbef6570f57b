//! What a person reads in `simulate`'s output: the tables, the recommended
//! lines and the words of the pictures (titles, captions, axes), as insta
//! snapshots, so a change of wording or of what a row or figure is called is
//! reviewed. Each run is seeded, so the figures are the same on every machine.

#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;

use common::{assert_deployable, scratch, simulate, text};

/// `simulate args… --out DIR` on stdout, the directory written as `[out]`.
fn run(name: &str, args: &[&str]) -> (String, std::path::PathBuf) {
    let dir = scratch(name);
    let out = dir.to_str().unwrap().to_owned();
    let output = simulate(&[args, &["--out", &out][..]].concat());
    assert!(output.status.success(), "{}", text(&output.stderr));
    (text(&output.stdout).replace(&out, "[out]"), dir)
}

/// Every line a person pastes is one the template accepts.
fn deployable(stdout: &str) {
    let deploys: Vec<&str> =
        stdout.lines().map(str::trim_start).filter(|l| l.starts_with("sam deploy ")).collect();
    assert!(!deploys.is_empty(), "{stdout}");
    deploys.into_iter().for_each(assert_deployable);
}

/// The words of an SVG, in drawing order: every text with a letter in it
/// (tick numbers and clock times left out: they follow the data).
fn words(svg: &Path) -> String {
    let svg = std::fs::read_to_string(svg).unwrap();
    let mut lines = svg.lines().map(str::trim);
    let mut said = Vec::new();
    while let Some(line) = lines.next() {
        if line.starts_with("<text") {
            let content = lines.next().unwrap_or_default();
            if content.chars().any(char::is_alphabetic) {
                said.push(content.replace("&lt;", "<").replace("&gt;", ">"));
            }
        }
    }
    said.join("\n")
}

#[test]
fn compare_at_the_defaults_names_each_policy_and_says_the_settings_are_the_templates() {
    let (stdout, dir) = run("read-compare", &["compare", "--trace", "burst-from-idle"]);
    insta::assert_snapshot!("compare_burst_from_idle", stdout);
    insta::assert_snapshot!(
        "compare_burst_from_idle_picture",
        words(&dir.join("burst-from-idle-detail.svg"))
    );
    insta::assert_snapshot!(
        "compare_burst_from_idle_overview",
        words(&dir.join("burst-from-idle.svg"))
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn best_settings_names_each_runs_setting_and_the_seed_its_picture_shows() {
    let args = ["compare", "--best-settings", "--trace", "burst-from-idle"];
    let (stdout, dir) = run("read-best", &args);
    insta::assert_snapshot!("best_settings_burst_from_idle", stdout);
    let picture = words(&dir.join("burst-from-idle-best-settings-detail.svg"));
    insta::assert_snapshot!("best_settings_burst_from_idle_picture", picture);
    let overview = words(&dir.join("burst-from-idle-best-settings.svg"));
    insta::assert_snapshot!("best_settings_burst_from_idle_overview", overview);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn recommend_says_which_figures_are_means_and_which_run_its_row_and_picture_are() {
    let args = ["recommend", "--trace", "burst-from-idle", "--seeds", "2"];
    let (stdout, dir) = run("read-recommend", &args);
    insta::assert_snapshot!("recommend_burst_from_idle", stdout);
    deployable(&stdout);
    let picture = words(&dir.join("burst-from-idle-recommended.svg"));
    insta::assert_snapshot!("recommend_burst_from_idle_picture", picture);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn recommend_lambda_says_which_figures_are_means_and_which_run_its_row_and_picture_are() {
    let args = ["recommend", "--consumer", "lambda", "--trace", "burst-from-idle", "--seeds", "2"];
    let (stdout, dir) = run("read-recommend-lambda", &args);
    insta::assert_snapshot!("recommend_lambda_burst_from_idle", stdout);
    deployable(&stdout);
    let picture = words(&dir.join("burst-from-idle-lambda-recommended.svg"));
    insta::assert_snapshot!("recommend_lambda_burst_from_idle_picture", picture);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn recommend_beside_a_cpu_policy_says_what_adding_the_load_changes_and_how_to_add_it() {
    let args = [
        "recommend",
        "--scaling-target",
        "existing",
        "--trace",
        "steady",
        "--min-tasks",
        "1",
        "--cpu-per-message",
        "1",
        "--seeds",
        "2",
    ];
    let (stdout, dir) = run("read-existing", &args);
    insta::assert_snapshot!("recommend_existing_steady", stdout);
    deployable(&stdout);
    let picture = words(&dir.join("steady-existing.svg"));
    insta::assert_snapshot!("recommend_existing_steady_picture", picture);
    std::fs::remove_dir_all(dir).unwrap();
}
