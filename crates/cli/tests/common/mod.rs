//! What the CLI's test binaries share: the binary run as a person would,
//! without a profile, and what it printed as one text for a snapshot.

use std::process::{Command, Output};

pub fn cli(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sqs-backpressure"))
        .args(args)
        .env_remove("AWS_PROFILE")
        .env("AWS_REGION", "us-east-1")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

/// The exit code, stdout and stderr, for a snapshot.
pub fn text(output: &Output) -> String {
    format!(
        "exit: {:?}\n--- stdout\n{}--- stderr\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}
