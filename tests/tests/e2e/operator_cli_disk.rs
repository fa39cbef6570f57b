//! The operator's CLI when the disk under its temporary stores fills: a read
//! of a queue larger than the stores' caches must spill to disk, and a disk
//! that refuses the write ends the command with one sentence and exit 1,
//! prints no count, and loses nothing: every message it held is visible
//! again by the end of its lease, and a rerun with room reads them all. A file-size limit
//! reached by a replay's audit file stops it the same way, not by a signal.
//!
//! The full disk on fauxqs only: a store spills past its 4 MiB cache, some 9,000 held
//! messages with SQS-sized receipt handles (fauxqs's are padded to 380
//! characters by `scripts/emulators.sh`), and moto accepts about 40 a second.

use std::process::Stdio;
use std::time::Duration;

use e2e_tests::fixtures::{Sqs, binary};
use serde_json::Value;

use crate::operator_cli::{stderr, stdout, temp_path};
use crate::operator_cli_fifo::{aws_on, queue};

const MESSAGES: usize = 12_000;

/// The lease of what the failed read held.
const LEASE_SECONDS: u64 = 5;

/// Largest file the CLI may write, in the 512-byte blocks of `sh`'s `ulimit -f`: far less
/// than a store of 12,000 holds spills, far more than a read of a few writes.
const FILE_SIZE_BLOCKS: &str = "256";

/// `command` (the CLI, or what execs it) reading `dlq` with `stats --json`, its stores in `spill`.
async fn stats(
    mut command: tokio::process::Command,
    dlq: &str,
    spill: &std::path::Path,
    extra: &[&str],
) -> std::process::Output {
    command
        .args(["stats", "--queue-url", dlq, "--json", "--wait-seconds", "1"])
        .args(extra)
        .env("AWS_ENDPOINT_URL_SQS", Sqs::Fauxqs.endpoint().unwrap())
        .env("SQLITE_TMPDIR", spill)
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap()
}

#[tokio::test]
async fn a_full_disk_under_a_reads_store_ends_it_with_a_sentence_and_loses_nothing_on_fauxqs() {
    let aws = aws_on(Sqs::Fauxqs).await;
    let dlq = queue(&aws, "full-disk", false).await;
    aws.send_messages(&dlq, MESSAGES).await.unwrap();
    let spill_dir = temp_path("spill");
    std::fs::create_dir_all(&spill_dir).unwrap();

    // A file-size limit is a full disk as SQLite meets it: the write past it is refused
    // (EFBIG once SIGXFSZ is ignored, which `exec` keeps).
    let mut limited = tokio::process::Command::new("sh");
    limited.arg("-c");
    limited.arg(format!("ulimit -f {FILE_SIZE_BLOCKS} && trap '' XFSZ && exec \"$0\" \"$@\""));
    limited.arg(binary("sqs-backpressure").unwrap());
    let lease = LEASE_SECONDS.to_string();
    let output = stats(limited, &dlq, &spill_dir, &["--visibility-timeout", &lease]).await;

    let said = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "stdout: {}\nstderr: {said}", stdout(&output));
    assert!(stdout(&output).is_empty(), "no count is printed from an incomplete read");
    let lines: Vec<&str> = said.lines().filter(|line| !line.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one sentence: {said}");
    assert!(
        said.contains("a temporary store of this command failed")
            && said.contains("SQLITE_TMPDIR")
            && !said.contains("Error {"),
        "{said}"
    );
    // What it could still read back was released at once; the rest returns when its lease
    // ends. fauxqs counts an ended lease as in flight until a receive: one, given back.
    let (visible, in_flight) = aws.counts(&dlq).await.unwrap();
    assert_eq!(visible + in_flight, MESSAGES as u64, "{said}");
    tokio::time::sleep(Duration::from_secs(LEASE_SECONDS + 1)).await;
    let received = aws.sqs.receive_message().queue_url(&dlq).send().await.unwrap();
    for message in received.messages() {
        let handle = message.receipt_handle().unwrap();
        let release = aws.sqs.change_message_visibility().queue_url(&dlq).receipt_handle(handle);
        release.visibility_timeout(0).send().await.unwrap();
    }
    let (within, every) = (Duration::from_secs(10), Duration::from_millis(200));
    aws.wait_for_counts(&dlq, (MESSAGES as u64, 0), within, every).await.unwrap();

    // The same read with room to spill: all of them, once.
    let cli = tokio::process::Command::new(binary("sqs-backpressure").unwrap());
    let output = stats(cli, &dlq, &spill_dir, &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let stats: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!((stats["read"].as_u64(), stats["complete"].as_bool()), (Some(12_000), Some(true)));
    let leftovers = std::fs::read_dir(&spill_dir).unwrap().count();
    assert_eq!(leftovers, 0, "SQLite removes its temporary files");
    aws.wait_for_counts(&dlq, (MESSAGES as u64, 0), within, every).await.unwrap();
}

/// A replay under a file-size limit its audit file reaches (`ulimit -f 4`, and SIGXFSZ left at
/// its default, which would kill the process): the write fails instead, and the command stops
/// with the sentence about space, exit 1; the same command with room finishes the replay.
#[tokio::test]
async fn a_file_size_limit_stops_a_replay_with_a_sentence_not_a_signal() {
    let aws = e2e_tests::fixtures::Aws::from_env().await.unwrap();
    let bodies: Vec<String> = (0..30).map(|i| format!("{i:03}-{}", "x".repeat(200))).collect();
    let (dlq, _) = crate::operator_cli::dead_letter_queue(&aws, false, &bodies).await;
    let target = aws.create_queue(&e2e_tests::fixtures::unique("target")).await.unwrap();
    let audit = temp_path("audit.jsonl");
    let replay = |limited: bool| {
        let mut command = tokio::process::Command::new("sh");
        let limit = if limited { "ulimit -f 4 && " } else { "" };
        command.arg("-c").arg(format!("{limit}exec \"$0\" \"$@\""));
        command.arg(binary("sqs-backpressure").unwrap());
        command.args(["replay", "--queue-url", &dlq, "--to", &target, "--yes", "--audit"]);
        command.arg(&audit).stdin(Stdio::null());
        command
    };
    let output = replay(true).output().await.unwrap();
    let said = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{:?}: {said}", output.status);
    assert!(
        said.contains("the audit file") && said.contains("a file-size limit was reached"),
        "{said}"
    );
    // What SQS accepted without an audit line is said, not counted as replayed: the two
    // counts together are what arrived.
    let count = |name: &str| -> u64 {
        let at = said.find(&format!("{name}=")).unwrap_or_else(|| panic!("no {name}=: {said}"));
        let digits = said[at + name.len() + 1..].chars().take_while(char::is_ascii_digit);
        digits.collect::<String>().parse().unwrap()
    };
    let (sent_first, _) = aws.counts(&target).await.unwrap();
    assert_eq!(count("replayed") + count("sent_not_on_record"), sent_first, "{said}");
    let output = replay(false).output().await.unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let (within, every) = (Duration::from_secs(10), Duration::from_millis(200));
    aws.wait_for_counts(&dlq, (0, 0), within, every).await.unwrap();
    // Sent twice at most: what SQS accepted before the audit line that says so was refused,
    // one batch for each of the 4 concurrent loops (docs/operator-cli.md).
    let (arrived, in_flight) = aws.counts(&target).await.unwrap();
    assert!((30..=70).contains(&arrived) && in_flight == 0, "{arrived} on the target");
}
