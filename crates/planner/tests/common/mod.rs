//! What the `simulate` binary's tests share: running it, a scratch
//! directory, its output as text, and the check that a deploy line is one
//! `template.yaml` accepts.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::{Command, Output};

pub fn simulate(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_simulate")).args(args).output().unwrap()
}

pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("simulate-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

/// Every `Key=value` of a deploy line is a template parameter, with a value it allows.
pub fn assert_deployable(deploy: &str) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../template.yaml");
    let template: serde_norway::Value =
        serde_norway::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    // Split as a shell would: `"ScheduleRate='rate(1 minute)'"` is one word, without the
    // double quotes.
    let (mut words, mut word, mut quote) = (Vec::new(), String::new(), None);
    for c in deploy.trim_start_matches("sam deploy --parameter-overrides ").chars() {
        match (c, quote) {
            ('\'' | '"', None) => quote = Some(c),
            (c, Some(open)) if c == open => quote = None,
            (' ', None) => words.push(std::mem::take(&mut word)),
            (c, _) => word.push(c),
        }
    }
    words.push(word);
    for pair in &words {
        let (key, value) = pair.split_once('=').unwrap();
        // Then as SAM CLI reads each word: a value ends at a space unless it is quoted itself
        // (samcli/cli/types.py, CfnParameterOverridesType), and the quotes are dropped.
        let value = match value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')) {
            Some(inner) => inner,
            None => {
                assert!(!value.contains(' '), "SAM would read {key}={value} only up to the space");
                value
            }
        };
        let parameter = &template["Parameters"][key];
        assert!(parameter.is_mapping(), "{key} is not a template parameter");
        if let Some(allowed) = parameter["AllowedValues"].as_sequence() {
            let allowed: Vec<String> = allowed
                .iter()
                .map(|v| match v {
                    serde_norway::Value::Number(n) => n.to_string(),
                    other => other.as_str().unwrap().to_owned(),
                })
                .collect();
            assert!(allowed.iter().any(|a| a == value), "{key}={value} not in {allowed:?}");
        }
        if let Some(pattern) = parameter["AllowedPattern"].as_str() {
            let pattern = regex_lite::Regex::new(&format!("^(?:{pattern})$")).unwrap();
            assert!(pattern.is_match(value), "{key}={value} does not match {pattern}");
        }
        let number = |bound: &str| parameter[bound].as_f64();
        if let (Ok(value), Some(min), Some(max)) =
            (value.parse::<f64>(), number("MinValue"), number("MaxValue"))
        {
            assert!((min..=max).contains(&value), "{key}={value} outside {min}–{max}");
        }
    }
}
