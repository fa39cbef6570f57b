//! What a person running sqs-worker sees: `--help` and `--version`, one
//! start-up line with the effective settings, every bad variable at once, a
//! misspelt variable named, and a health stamp of its own per process.

use std::time::Duration;

use e2e_tests::fixtures::binary;
use e2e_tests::process::Process;

use crate::worker_setup::{SETTLED, STARTED, setup};

async fn worker(args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    tokio::process::Command::new(binary("sqs-worker").unwrap())
        .args(args)
        .envs(env.iter().copied())
        .output()
        .await
        .unwrap()
}

#[tokio::test]
async fn help_and_version_exit_0_and_list_every_variable() {
    let help = worker(&["--help"], &[]).await;
    assert_eq!(help.status.code(), Some(0));
    let text = String::from_utf8(help.stdout).unwrap();
    for name in
        ["QUEUE_URL", "WORKER_POLLERS", "DRAIN_SECONDS", "HEALTH_FILE", "DOWNSTREAM_MAX_RPS"]
    {
        assert!(text.contains(name), "{name}: {text}");
    }
    let version = worker(&["--version"], &[]).await;
    assert_eq!(version.status.code(), Some(0));
    assert!(String::from_utf8(version.stdout).unwrap().starts_with("sqs-worker "));
    let bad = worker(&["--polers", "3"], &[]).await;
    assert_eq!(bad.status.code(), Some(2), "an argument it does not take is a usage error");
}

#[tokio::test]
async fn every_bad_variable_is_reported_in_one_line() {
    let output = worker(
        &[],
        &[
            ("WORKER_POLLERS", "0"),
            ("DRAIN_SECONDS", "500"),
            ("DOWNSTREAM_URL", "ftp://x"),
            ("WORKER_LOG_FORMAT", "jsn"),
        ],
    )
    .await;
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let all = format!("{stdout}{stderr}");
    let line = all
        .lines()
        .find(|l| l.contains("invalid configuration"))
        .unwrap_or_else(|| panic!("{all}"));
    for name in [
        "QUEUE_URL",
        "WORKER_POLLERS=\"0\"",
        "DRAIN_SECONDS=\"500\"",
        "QUARANTINE_QUEUE_URL",
        "DOWNSTREAM_URL=\"ftp://x\"",
        "WORKER_LOG_FORMAT=\"jsn\"",
    ] {
        assert!(line.contains(name), "{name}: {line}");
    }
    assert!(
        line.starts_with(|c: char| c.is_ascii_digit()),
        "text lines start with their timestamp: {line}"
    );
}

#[tokio::test]
async fn worker_log_format_json_gives_json_lines() {
    let output = worker(&[], &[("WORKER_LOG_FORMAT", "json"), ("WORKER_POLLERS", "0")]).await;
    assert_eq!(output.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let line = stdout
        .lines()
        .find(|l| l.contains("invalid configuration"))
        .unwrap_or_else(|| panic!("{stdout}{}", String::from_utf8_lossy(&output.stderr)));
    let json: serde_json::Value = serde_json::from_str(line).unwrap();
    assert_eq!(json["level"], "ERROR", "{json}");
    assert!(json["timestamp"].is_string(), "{json}");
}

#[tokio::test]
async fn a_started_worker_says_how_it_runs_names_a_misspelt_variable_and_stamps_its_own_file() {
    let setup = setup().await;
    let misspelt = [("WORKER_POLLER", "3"), ("HEALTH_FILE", "")];
    let first = setup.start(&misspelt);
    let second = setup.start(&misspelt);
    let started = first.wait_for_line("sqs-worker starting", STARTED).await.unwrap();
    for field in ["queue=", "pollers=1", "max_in_flight=100", "drain_s=90", "health_file="] {
        assert!(started.contains(field), "{field}: {started}");
    }
    let warning = first.wait_for_line("WORKER_POLLER", STARTED).await.unwrap();
    assert!(warning.contains("did you mean WORKER_POLLERS"), "{warning}");
    // Each process stamps its own file, and `healthcheck PID` reads it.
    for process in [&first, &second] {
        let pid = process.id().unwrap().to_string();
        let file = std::env::temp_dir().join(format!("sqs-worker-{pid}.last-poll"));
        // A PID used again may find an earlier process's stamp: the worker removes it at
        // start, so the check passes only once this process has polled.
        let give_up = tokio::time::Instant::now() + SETTLED;
        loop {
            let check = worker(&["healthcheck", &pid], &[]).await;
            if check.status.code() == Some(0) {
                break;
            }
            assert!(
                tokio::time::Instant::now() < give_up,
                "{}: {}\n{:#?}",
                file.display(),
                String::from_utf8_lossy(&check.stderr),
                process.lines()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(file.exists(), "its own stamp: {}", file.display());
        let _ = std::fs::remove_file(file);
    }
    drop::<[Process; 2]>([first, second]);
}
