//! A FIFO quarantine queue whose records are held back behind their group's
//! first messages, on moto and on LocalStack's SQS: the canary never passes
//! without reading the whole queue, and a replay with failures still says
//! what it could not reach.

use serde_json::{Value, json};

use e2e_tests::fixtures::{Sqs, binary};

use crate::operator_cli::{stderr, stdout, temp_path};
use crate::operator_cli_fifo::{aws_on, cli_on, queue, record, send_in_order};

fn code(output: &std::process::Output) -> Option<i32> {
    output.status.code()
}

fn show(output: &std::process::Output) -> String {
    format!("{:?}\nstdout: {}\nstderr: {}", output.status, stdout(output), stderr(output))
}

async fn fifo_canary(sqs: Sqs) {
    use e2e_tests::downstream::Downstream;
    use e2e_tests::process::Process;

    let aws = aws_on(sqs).await;
    let work = queue(&aws, "work", true).await;
    let work_arn = aws.queue_arn(&work).await.unwrap();
    let quarantine = queue(&aws, "quarantine", true).await;
    // Group G: one record whose body is still broken, then ten others.
    let mut records =
        vec![("G".to_owned(), record("bad", "invalid_json", "G", &work_arn, "not json"))];
    records.extend((0..10).map(|i| {
        let body = json!({"n": i}).to_string();
        (
            "G".to_owned(),
            record(&format!("other-{i}"), "downstream_rejected", "G", &work_arn, &body),
        )
    }));
    send_in_order(&aws, &quarantine, &records).await;
    // The work queue's consumer, as deployed: it quarantines the still-broken message again.
    let downstream = Downstream::start().await.unwrap();
    let (url, endpoint) = (downstream.url(), sqs.endpoint().unwrap());
    let worker = Process::start(
        &binary("sqs-worker").unwrap(),
        &[
            ("AWS_ENDPOINT_URL_SQS", endpoint.as_str()),
            ("QUEUE_URL", work.as_str()),
            ("QUARANTINE_QUEUE_URL", quarantine.as_str()),
            ("DOWNSTREAM_URL", url.as_str()),
            ("RECEIVE_WAIT_SECONDS", "1"),
            ("WORKER_POLLERS", "1"),
        ],
    )
    .unwrap();
    let canary = |rotate: bool| {
        let quarantine = quarantine.clone();
        async move {
            let audit = temp_path("audit.jsonl");
            let mut args = vec!["replay", "--queue-url", &quarantine, "--error-code"];
            args.extend(["invalid_json", "--canary", "1", "--canary-wait", "5", "--yes"]);
            args.extend(["--audit", audit.to_str().unwrap()]);
            if rotate {
                args.push("--rotate-groups");
            }
            cli_on(sqs, &args).await
        }
    };
    // The record came back behind ten others of its group: a read that holds
    // what it reads cannot see it, so the canary must not pass.
    let unchecked = canary(false).await;
    assert_eq!(code(&unchecked), Some(3), "{sqs:?}: {}", show(&unchecked));
    assert!(stderr(&unchecked).contains("canary not checked"), "{}", show(&unchecked));
    // Moving the group's messages, the check reads it, and finds it came back.
    let checked = canary(true).await;
    drop(worker);
    assert_eq!(code(&checked), Some(3), "{sqs:?}: {}", show(&checked));
    assert!(stderr(&checked).contains("canary failed: 1 of 1"), "{}", show(&checked));
    assert!(stderr(&checked).contains("invalid_json ×1"), "{}", show(&checked));
    let stats =
        cli_on(sqs, &["stats", "--queue-url", &quarantine, "--rotate-groups", "--json"]).await;
    assert_eq!(code(&stats), Some(0), "{sqs:?}: {}", show(&stats));
    let stats: Value = serde_json::from_str(&stdout(&stats)).unwrap();
    assert_eq!(stats["total"], 11, "{sqs:?}: ten untouched and the canary back: {stats}");
    assert_eq!(stats["byErrorCode"]["invalid_json"], 1, "{stats}");
}

#[tokio::test]
async fn a_canary_on_a_fifo_quarantine_queue_never_passes_without_reading_it_all_on_moto() {
    fifo_canary(Sqs::Moto).await;
}

#[tokio::test]
async fn a_canary_on_a_fifo_quarantine_queue_never_passes_without_reading_it_all_on_localstack() {
    fifo_canary(Sqs::LocalStack).await;
}

#[tokio::test]
async fn a_canary_on_a_fifo_quarantine_queue_never_passes_without_reading_it_all_on_fauxqs() {
    fifo_canary(Sqs::Fauxqs).await;
}

async fn failures_and_a_shortfall(sqs: Sqs) {
    let aws = aws_on(sqs).await;
    let work = queue(&aws, "work", false).await;
    let work_arn = aws.queue_arn(&work).await.unwrap();
    let quarantine = queue(&aws, "quarantine", true).await;
    // Group "big": 11 records that do not match, then one that does, out of reach.
    let mut records: Vec<(String, String)> = (0..11)
        .map(|i| ("big".to_owned(), record(&format!("b-{i}"), "code_b", "big", &work_arn, "{}")))
        .collect();
    records.push(("big".to_owned(), record("b-last", "code_a", "big", &work_arn, "{}")));
    // Group "bad": one that matches and cannot be sent (its source is no queue ARN).
    records.push(("bad".to_owned(), record("bad-0", "code_a", "bad", "not-an-arn", "{}")));
    send_in_order(&aws, &quarantine, &records).await;
    let audit = temp_path("audit.jsonl");
    let output = cli_on(
        sqs,
        &["replay", "--queue-url", &quarantine, "--error-code", "code_a", "--yes", "--audit"]
            .into_iter()
            .chain([audit.to_str().unwrap()])
            .collect::<Vec<_>>(),
    )
    .await;
    assert_eq!(
        code(&output),
        Some(1),
        "{sqs:?}: the failure decides the exit code\n{}",
        show(&output)
    );
    let text = stderr(&output);
    assert!(text.contains("could not be handled"), "{sqs:?}: {text}");
    assert!(
        text.contains("incomplete:") && text.contains("--rotate-groups"),
        "{sqs:?}: the unreached group is said too\n{text}"
    );
    assert_eq!(
        aws.counts(&quarantine).await.unwrap(),
        (13, 0),
        "{sqs:?}: nothing removed but what was sent"
    );
}

#[tokio::test]
async fn a_replay_with_failures_still_says_what_it_could_not_reach_on_moto() {
    failures_and_a_shortfall(Sqs::Moto).await;
}

#[tokio::test]
async fn a_replay_with_failures_still_says_what_it_could_not_reach_on_localstack() {
    failures_and_a_shortfall(Sqs::LocalStack).await;
}

#[tokio::test]
async fn a_replay_with_failures_still_says_what_it_could_not_reach_on_fauxqs() {
    failures_and_a_shortfall(Sqs::Fauxqs).await;
}
