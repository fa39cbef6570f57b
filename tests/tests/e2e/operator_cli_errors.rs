//! What the operator's CLI says when an AWS call fails: for every subcommand,
//! each call it makes denied, throttled, failing with a 5xx and hanging,
//! through the fault proxy. The words are one sentence naming the operation,
//! the service's code and message once and a hint; never an SDK `Debug` dump.
//! A sample of them is snapshotted (insta), so wording changes are reviewed.

use e2e_tests::fault_proxy::{Fault, FaultProxy, Rule};
use e2e_tests::fixtures::{Aws, unique};
use futures::StreamExt;

use crate::operator_cli::{cli, dead_letter_queue, stderr, temp_path};

/// What only an SDK `Debug` dump prints.
const DEBUG_MARKERS: [&str; 8] = [
    "ErrorMetadata",
    "Unhandled(",
    "DispatchFailure",
    "ConnectorError",
    "Some(\"",
    "extras:",
    "source: ",
    "{ ",
];

/// Every subcommand with the calls it makes, and whether the command may go
/// on without the call (a lookup that only adds information).
const CASES: &[(&str, &str, bool)] = &[
    ("stats", "GetQueueUrl", false),
    ("stats", "GetCallerIdentity", true),
    ("stats", "GetQueueAttributes", false),
    ("stats", "ReceiveMessage", false),
    ("stats", "ChangeMessageVisibilityBatch", false),
    ("list", "ReceiveMessage", false),
    ("list", "ChangeMessageVisibilityBatch", false),
    ("show", "GetQueueAttributes", false),
    ("show", "ReceiveMessage", false),
    ("export", "ReceiveMessage", false),
    ("export", "ChangeMessageVisibilityBatch", false),
    ("replay", "GetQueueAttributes", false),
    ("replay", "ListDeadLetterSourceQueues", true),
    ("replay", "GetCallerIdentity", false),
    ("replay", "ReceiveMessage", false),
    ("replay", "SendMessageBatch", false),
    ("replay", "DeleteMessageBatch", false),
    // Called only for what it holds: nothing, when every message is replayed.
    ("replay", "ChangeMessageVisibilityBatch", true),
    ("discard", "GetCallerIdentity", false),
    ("discard", "ReceiveMessage", false),
    ("discard", "DeleteMessageBatch", false),
];

const FAULTS: [Fault; 4] = [Fault::Deny, Fault::Throttle, Fault::ServerError, Fault::Hang];

/// Runs `command` on a dead-letter queue of three messages (by its name, so
/// `GetQueueUrl` is called) with `operation` failing by `fault`; returns the
/// exit code and stderr with the run's names and numbers masked.
async fn run(aws: &Aws, command: &str, operation: &str, fault: Fault) -> (Option<i32>, String) {
    let bodies: Vec<String> = (0..3).map(|n| format!("m{n}")).collect();
    let (dlq, _) = dead_letter_queue(aws, false, &bodies).await;
    let work = aws.create_queue(&unique("work")).await.unwrap();
    let name = dlq.rsplit('/').next().unwrap().to_owned();
    let proxy = FaultProxy::start(&std::env::var("AWS_ENDPOINT_URL_SQS").unwrap()).await.unwrap();
    proxy.inject(Rule::new(operation, fault));
    let audit = temp_path("audit.jsonl");
    let mut args = vec!["--endpoint-url", proxy.url(), "--call-timeout", "2", command];
    args.extend(["--queue-url", &name, "--wait-seconds", "1", "--visibility-timeout", "5"]);
    let out = temp_path("export.jsonl");
    match command {
        "show" => args.extend(["--message-id", "nope"]),
        "export" => args.extend(["--out", out.to_str().unwrap()]),
        "replay" => args.extend(["--to", &work, "--yes", "--audit", audit.to_str().unwrap()]),
        "discard" => args.extend(["--yes", "--audit", audit.to_str().unwrap()]),
        _ => {}
    }
    let output = cli(&args).await;
    let sqs = std::env::var("AWS_ENDPOINT_URL_SQS").unwrap();
    let text = stderr(&output)
        .replace(proxy.url(), "[PROXY]")
        .replace(&sqs, "[SQS]")
        .replace(&name, "[QUEUE]")
        .replace(&work, "[WORK]")
        .replace(audit.to_str().unwrap(), "[AUDIT]")
        .replace(out.to_str().unwrap(), "[OUT]");
    (output.status.code(), text)
}

#[tokio::test]
async fn every_failing_call_of_every_subcommand_is_said_in_words() {
    let aws = Aws::from_env().await.unwrap();
    let runs: Vec<(String, Option<i32>, String, bool)> = futures::stream::iter(
        CASES.iter().flat_map(|case| FAULTS.iter().map(move |fault| (case, fault.clone()))),
    )
    .map(|((command, operation, optional), fault)| {
        let aws = aws.clone();
        async move {
            let label = format!("{command} with {operation} {}", fault.name());
            let (code, text) = run(&aws, command, operation, fault).await;
            (label, code, text, *optional)
        }
    })
    .buffer_unordered(6)
    .collect()
    .await;
    assert_eq!(runs.len(), CASES.len() * FAULTS.len());
    for (label, code, text, optional) in &runs {
        for marker in DEBUG_MARKERS {
            assert!(
                !text.contains(marker),
                "{label}: a Debug dump ({marker:?}) on stderr:\n{text}"
            );
        }
        let operation = label.split(' ').nth(2).unwrap();
        if *optional {
            assert!(matches!(code, Some(0 | 1 | 5)), "{label}: {code:?}\n{text}");
        } else {
            assert_ne!(*code, Some(0), "{label}: a failed call cannot end in success\n{text}");
            assert!(text.contains(operation), "{label}: the failing operation is named:\n{text}");
        }
        let errors = text.lines().filter(|l| l.starts_with("error: ")).count();
        assert!(errors <= 1, "{label}: one error, said once:\n{text}");
    }
}

#[tokio::test]
async fn the_words_of_each_kind_of_failure() {
    let aws = Aws::from_env().await.unwrap();
    for fault in FAULTS {
        let name = fault.name();
        let (code, text) = run(&aws, "stats", "ReceiveMessage", fault).await;
        let error: Vec<&str> = text.lines().filter(|l| l.starts_with("error: ")).collect();
        insta::assert_snapshot!(
            format!("stats_receive_{name}"),
            format!("exit {code:?}\n{}", error.join("\n"))
        );
    }
    let (code, text) = run(&aws, "replay", "GetCallerIdentity", Fault::Deny).await;
    insta::assert_snapshot!("replay_identity_deny", format!("exit {code:?}\n{text}"));
    let missing = cli(&["stats", "--queue-url", "no-such-queue-anywhere"]).await;
    insta::assert_snapshot!(
        "stats_missing_queue",
        format!("exit {:?}\n{}", missing.status.code(), stderr(&missing))
    );
    let refused = cli(&["--endpoint-url", "http://127.0.0.1:9", "stats", "--queue-url", "q"]).await;
    insta::assert_snapshot!(
        "stats_refused_connection",
        format!("exit {:?}\n{}", refused.status.code(), stderr(&refused))
    );
    // STS unreachable while SQS answers: the hint names STS's variable, not SQS's.
    let bodies = ["m0".to_owned()];
    let (dlq, _) = dead_letter_queue(&aws, false, &bodies).await;
    let work = aws.create_queue(&unique("work")).await.unwrap();
    let replay =
        tokio::process::Command::new(e2e_tests::fixtures::binary("sqs-backpressure").unwrap())
            .args(["replay", "--queue-url", &dlq, "--to", &work, "--yes", "--wait-seconds", "1"])
            .args(["--audit", &temp_path("audit.jsonl").to_string_lossy()])
            .env("AWS_ENDPOINT_URL_STS", "http://127.0.0.1:9")
            .stdin(std::process::Stdio::null())
            .output()
            .await
            .unwrap();
    insta::assert_snapshot!(
        "replay_identity_unreachable",
        format!("exit {:?}\n{}", replay.status.code(), stderr(&replay))
    );
    assert_eq!(aws.counts(&dlq).await.unwrap(), (1, 0), "nothing changed");
}
