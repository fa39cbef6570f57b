//! What a person reads without any AWS call: every subcommand's `--help`,
//! each usage error, the exit codes, completions and the manual page.
//! Snapshots (insta), so a change of wording is reviewed.

#![allow(clippy::unwrap_used)]

mod common;

use std::process::Command;

use common::{cli, text};

const SUBCOMMANDS: [&str; 10] = [
    "stats",
    "list",
    "show",
    "export",
    "replay",
    "discard",
    "audit",
    "doctor",
    "completions",
    "man",
];

#[test]
fn help_of_the_tool_and_of_every_subcommand() {
    insta::assert_snapshot!("help", text(&cli(&["--help"])));
    for subcommand in SUBCOMMANDS {
        insta::assert_snapshot!(format!("help_{subcommand}"), text(&cli(&[subcommand, "--help"])));
    }
}

#[test]
fn the_help_lists_every_exit_code() {
    let help = String::from_utf8(cli(&["--help"]).stdout).unwrap();
    for code in [
        "0  done",
        "1  an error",
        "2  a usage error",
        "3  the canary",
        "4  messages in flight",
        "5  messages the queue counts",
    ] {
        assert!(help.contains(code), "{code}: {help}");
    }
}

#[test]
fn every_bad_input_is_a_usage_error_with_exit_2() {
    let cases: [(&str, &[&str]); 20] = [
        ("rate_zero", &["replay", "--queue-url", "q", "--rate", "0", "--yes"]),
        ("rate_not_a_number", &["replay", "--queue-url", "q", "--rate", "fast", "--yes"]),
        ("since_unparseable", &["stats", "--queue-url", "q", "--since", "yesterday"]),
        ("until_negative_age", &["list", "--queue-url", "q", "--until", "-2h"]),
        (
            "since_a_zone_in_brackets",
            &["list", "--queue-url", "q", "--since", "2026-12-05T10:30[Europe/Paris]"],
        ),
        // Dates and times without a zone are read as UTC, said back resolved.
        (
            "dates_without_a_zone_are_utc",
            &[
                "list",
                "--queue-url",
                "q",
                "--since",
                "2026-12-04 10:30:00",
                "--until",
                "2026-12-04",
            ],
        ),
        (
            "a_time_without_a_zone_is_utc",
            &[
                "list",
                "--queue-url",
                "q",
                "--since",
                "2026-12-04T10:30:00Z",
                "--until",
                "2026-12-04T10:30",
            ],
        ),
        ("visibility_out_of_range", &["stats", "--queue-url", "q", "--visibility-timeout", "0"]),
        ("unknown_flag", &["stats", "--queue-url", "q", "--colour"]),
        ("missing_queue", &["stats"]),
        ("not_a_queue", &["stats", "--queue-url", "not a queue"]),
        ("discard_without_yes_or_terminal", &["discard", "--queue-url", "q"]),
        ("replay_without_yes_or_terminal", &["replay", "--queue-url", "q"]),
        ("rate_negative", &["replay", "--queue-url", "q", "--rate", "-1", "--yes"]),
        ("canary_negative", &["replay", "--queue-url", "q", "--canary", "-1", "--yes"]),
        (
            "canary_wait_not_a_wait",
            &["replay", "--queue-url", "q", "--canary-wait", "soon", "--yes"],
        ),
        ("canary_wait_negative", &["replay", "--queue-url", "q", "--canary-wait", "-5s", "--yes"]),
        ("limit_negative", &["list", "--queue-url", "q", "--limit", "-2"]),
        ("call_timeout_negative", &["stats", "--queue-url", "q", "--call-timeout", "-5"]),
        (
            "export_out_in_a_missing_folder",
            &[
                "export",
                "--queue-url",
                // An ARN: the folder is checked before the GetQueueUrl it needs.
                "arn:aws:sqs:us-east-1:123456789012:q",
                "--out",
                "/nonexistent/dir/x.jsonl",
            ],
        ),
    ];
    for (name, args) in cases {
        let output = cli(args);
        assert_eq!(output.status.code(), Some(2), "{name}: {}", text(&output));
        insta::assert_snapshot!(format!("usage_{name}"), text(&output));
    }
}

#[test]
fn a_profile_the_config_files_do_not_have_is_refused_not_ignored() {
    let dir = std::env::temp_dir().join(format!("sqs-backpressure-profile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("config");
    std::fs::write(
        &config,
        "[profile operator]\nregion = eu-west-1\n[default]\nregion = us-east-1\n",
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_sqs-backpressure"))
        .args(["--profile", "opertor", "stats", "--queue-url", "q"])
        .env("AWS_CONFIG_FILE", &config)
        .env("AWS_SHARED_CREDENTIALS_FILE", dir.join("credentials"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("\"opertor\"") && stderr.contains("default, operator"), "{stderr}");
    // After the subcommand, as its --help lists it, the same.
    let after = Command::new(env!("CARGO_BIN_EXE_sqs-backpressure"))
        .args(["stats", "--queue-url", "q", "--profile", "opertor"])
        .env("AWS_CONFIG_FILE", &config)
        .env("AWS_SHARED_CREDENTIALS_FILE", dir.join("credentials"))
        .output()
        .unwrap();
    assert_eq!(after.status.code(), Some(2), "{}", text(&after));
    assert!(String::from_utf8_lossy(&after.stderr).contains("\"opertor\""), "{}", text(&after));

    let no_region = Command::new(env!("CARGO_BIN_EXE_sqs-backpressure"))
        .args(["stats", "--queue-url", "q"])
        .env_remove("AWS_REGION")
        .env_remove("AWS_DEFAULT_REGION")
        .env_remove("AWS_PROFILE")
        .env("AWS_CONFIG_FILE", dir.join("none"))
        .env("AWS_SHARED_CREDENTIALS_FILE", dir.join("none"))
        .output()
        .unwrap();
    assert_eq!(no_region.status.code(), Some(2), "{}", text(&no_region));
    assert!(
        String::from_utf8_lossy(&no_region.stderr).contains("--region"),
        "{}",
        text(&no_region)
    );
}

/// No region and no credentials anywhere: the region comes from the queue's
/// ARN, and the credentials error names every source the SDK tried.
#[test]
fn with_nothing_configured_the_arn_gives_the_region_and_the_error_names_each_source() {
    let none = "no-such-aws-config";
    let mut command = Command::new(env!("CARGO_BIN_EXE_sqs-backpressure"));
    command
        .args(["stats", "--queue-url", "arn:aws:sqs:us-east-1:123456789012:orders"])
        .args(["--endpoint-url", "http://127.0.0.1:9"])
        .env("AWS_CONFIG_FILE", none)
        .env("AWS_SHARED_CREDENTIALS_FILE", none)
        .env("AWS_EC2_METADATA_DISABLED", "true");
    for variable in [
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
        "AWS_PROFILE",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    ] {
        command.env_remove(variable);
    }
    let output = command.output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    insta::assert_snapshot!("no_credentials_anywhere", text(&output));
}

#[test]
fn completions_and_the_manual_page_are_generated() {
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef sqs-backpressure"),
        ("fish", "complete -c sqs-backpressure"),
    ] {
        let output = cli(&["completions", shell]);
        assert_eq!(output.status.code(), Some(0), "{shell}");
        let script = String::from_utf8(output.stdout).unwrap();
        assert!(script.contains(marker), "{shell}: {script}");
        assert!(script.contains("rotate-groups"), "{shell}: every flag is completed");
    }
    let man = String::from_utf8(cli(&["man"]).stdout).unwrap();
    assert!(man.starts_with(".ie") || man.contains(".TH sqs-backpressure"), "{man}");
    for subcommand in ["stats", "replay", "discard", "audit"] {
        assert!(man.contains(subcommand), "{subcommand} in the manual page");
    }
}

#[test]
fn an_audit_trail_is_summed_up_across_runs() {
    let path =
        std::env::temp_dir().join(format!("sqs-backpressure-audit-{}.jsonl", std::process::id()));
    let line = |id: &str, result: &str, code: &str, time: &str| {
        format!(
            r#"{{"time":"{time}","operator":"arn:aws:sts::1:assumed-role/Op/alice","action":"replay","queueUrl":"https://sqs.eu-west-1.amazonaws.com/1/q","queueMessageId":"{id}","originalMessageId":"o-{id}","newMessageId":null,"destination":null,"errorCode":"{code}","result":"{result}","started":"{time}"}}"#
        )
    };
    let lines = [
        line("a", "replayed", "invalid_json", "2026-11-30T10:00:00.000Z"),
        line("b", "send_failed", "invalid_json", "2026-11-30T10:00:01.000Z"),
        line("b", "replayed", "invalid_json", "2026-11-30T11:00:00.000Z"),
        line("c", "deleted_on_resume", "downstream_rejected", "2026-11-30T11:00:02.000Z"),
        line("d", "duplicate_deleted", "invalid_json", "2026-11-30T11:00:03.000Z"),
    ];
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let output = cli(&["audit", path.to_str().unwrap(), "--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let trail = &json["https://sqs.eu-west-1.amazonaws.com/1/q"];
    assert_eq!(
        (&trail["moved"], &trail["deletedOnResume"], &trail["failed"], &trail["messages"]),
        (&2.into(), &1.into(), &1.into(), &4.into()),
        "{json}"
    );
    assert_eq!(trail["byErrorCode"]["invalid_json"], 4);
    assert_eq!(trail["duplicates"], 1);
    assert_eq!(
        (trail["first"].as_str(), trail["last"].as_str()),
        (Some("2026-11-30T10:00:00.000Z"), Some("2026-11-30T11:00:03.000Z"))
    );
    let text_output = String::from_utf8(cli(&["audit", path.to_str().unwrap()]).stdout).unwrap();
    insta::assert_snapshot!("audit_summary", text_output.replace(path.to_str().unwrap(), "[FILE]"));

    std::fs::write(&path, "not json\n").unwrap();
    let broken = cli(&["audit", path.to_str().unwrap()]);
    assert_eq!(broken.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&broken.stderr).contains("line 1: not an audit entry"),
        "{}",
        text(&broken)
    );
}

/// `audit FILE` given something else: the error names the file argument it
/// was given, not `--audit`, which `audit` does not take.
#[test]
fn a_file_that_is_not_an_audit_trail_is_named_as_it_was_given() {
    let path =
        std::env::temp_dir().join(format!("sqs-backpressure-bad-{}.jsonl", std::process::id()));
    std::fs::write(&path, "{\"orders\": 1}\n").unwrap();
    let output = cli(&["audit", path.to_str().unwrap()]);
    std::fs::remove_file(&path).unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    insta::assert_snapshot!(
        "audit_not_an_audit_file",
        text(&output).replace(path.to_str().unwrap(), "[FILE]")
    );
}

#[test]
fn doctor_names_a_template_or_parameters_file_it_cannot_read_and_what_to_give() {
    let dir = std::env::temp_dir().join(format!("sqs-backpressure-doctor-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let template = concat!(env!("CARGO_MANIFEST_DIR"), "/../../template.yaml");
    let cases: [(&str, &str, &str); 5] = [
        ("not_yaml", "template.yaml", "Resources: [unclosed\n"),
        ("samconfig_not_toml", "samconfig.toml", "[default.deploy\n"),
        ("parameters_not_json", "params.json", "{\"BatchSize\": \n"),
        ("parameters_wrong_shape", "params.json", "[1, 2]\n"),
        ("missing_file", "absent.json", ""),
    ];
    for (name, file, content) in cases {
        let path = dir.join(file);
        let _ = std::fs::remove_file(&path);
        if !content.is_empty() {
            std::fs::write(&path, content).unwrap();
        }
        let path = path.to_str().unwrap().to_owned();
        let args: Vec<&str> = if name == "not_yaml" {
            vec!["doctor", "--template", &path]
        } else {
            vec!["doctor", "--template", template, "--parameters", &path]
        };
        let output = cli(&args);
        assert_eq!(output.status.code(), Some(1), "{name}: {}", text(&output));
        insta::assert_snapshot!(
            format!("doctor_{name}"),
            text(&output).replace(&path, "[FILE]").replace(template, "[TEMPLATE]")
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
