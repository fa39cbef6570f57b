//! A canary on a dead-letter queue waits as long as a failure takes to come
//! back: its work queue's maxReceiveCount (2) receives, each held the longer of
//! its visibility timeout (3 s) and, with no event source mapping reading it, a
//! worker on the engine's default backoff (10 s, then 20 s), and a 20 s poll:
//! 50 s. A shorter wait is
//! refused before anything is sent; the computed one fails a canary whose
//! message still fails (sqs-worker on the work queue, the downstream
//! answering 503) and passes one that is now done. A Lambda consumer on the
//! engine mapped to the work queue holds each retry for its backoff: the
//! least wait counts that instead.

use aws_sdk_sqs::types::QueueAttributeName;
use e2e_tests::downstream::Downstream;
use e2e_tests::fixtures::{Aws, Sqs, binary, unique};
use e2e_tests::process::Process;
use serde_json::json;

use crate::operator_cli::{audit_lines, stderr, temp_path};
use crate::operator_cli_fifo::cli_on;
use crate::worker_setup::request;

/// A work queue whose dead-letter queue (after 2 receives, 3 s apart) holds
/// two messages of `operation`: (aws, dead-letter queue, work queue).
async fn dead_letters(operation: &str) -> (Aws, String, String) {
    dead_letters_on(Sqs::Moto, operation).await
}

async fn dead_letters_on(sqs: Sqs, operation: &str) -> (Aws, String, String) {
    let aws = Aws::from_env().await.unwrap().with_sqs(sqs).await.unwrap();
    let dlq = aws.create_queue(&unique("dlq")).await.unwrap();
    let policy = json!({"deadLetterTargetArn": aws.queue_arn(&dlq).await.unwrap(),
                        "maxReceiveCount": 2})
    .to_string();
    let created = aws.sqs.create_queue().queue_name(unique("work"));
    let created = created
        .attributes(QueueAttributeName::RedrivePolicy, policy)
        .attributes(QueueAttributeName::VisibilityTimeout, "3")
        .send()
        .await
        .unwrap();
    for key in ["k-1", "k-2"] {
        let body = request(operation, key);
        aws.sqs.send_message().queue_url(&dlq).message_body(body).send().await.unwrap();
    }
    (aws, dlq, created.queue_url.unwrap())
}

fn worker(sqs: Sqs, work: &str, downstream: &Downstream, quarantine: &str) -> Process {
    let url = downstream.url();
    let endpoint = sqs.endpoint().unwrap();
    let env = [
        ("AWS_ENDPOINT_URL_SQS", endpoint.as_str()),
        ("QUEUE_URL", work),
        ("QUARANTINE_QUEUE_URL", quarantine),
        ("DOWNSTREAM_URL", url.as_str()),
        ("RECEIVE_WAIT_SECONDS", "1"),
        ("VISIBILITY_TIMEOUT_SECONDS", "3"),
        ("WORKER_POLLERS", "1"),
    ];
    Process::start(&binary("sqs-worker").unwrap(), &env).unwrap()
}

async fn replay(dlq: &str, work: &str, extra: &[&str]) -> (Option<i32>, String, usize) {
    replay_on(Sqs::Moto, dlq, work, extra).await
}

async fn replay_on(
    sqs: Sqs,
    dlq: &str,
    work: &str,
    extra: &[&str],
) -> (Option<i32>, String, usize) {
    let audit = temp_path("audit.jsonl");
    let mut args = vec!["replay", "--queue-url", dlq, "--to", work, "--canary", "1", "--yes"];
    args.extend(["--wait-seconds", "1", "--audit", audit.to_str().unwrap()]);
    args.extend_from_slice(extra);
    let output = cli_on(sqs, &args).await;
    let replayed = if audit.exists() { audit_lines(&audit).len() } else { 0 };
    (output.status.code(), stderr(&output), replayed)
}

#[tokio::test]
async fn a_canary_wait_shorter_than_a_failure_takes_to_come_back_is_refused() {
    let (aws, dlq, work) = dead_letters("ledger.fail").await;
    let (code, said, replayed) = replay(&dlq, &work, &["--canary-wait", "10"]).await;
    assert_eq!(code, Some(2), "{said}");
    assert!(said.contains("--canary-wait 10 s cannot tell whether the canary failed"), "{said}");
    assert!(said.contains("maxReceiveCount of 2 receives"), "{said}");
    assert!(said.contains("give --canary-wait 50 or more"), "{said}");
    assert!(said.starts_with("note: no event source mapping reads"), "{said}");
    assert_eq!(replayed, 0, "nothing sent");
    assert_eq!(aws.counts(&dlq).await.unwrap(), (2, 0), "both still dead-lettered");
    // Allowed, it goes on, and says the canary proved nothing.
    let (code, said, replayed) =
        replay(&dlq, &work, &["--canary-wait", "1", "--canary-unproven"]).await;
    assert_eq!(code, Some(0), "{said}");
    assert!(said.contains("canary unproven: none came back within 1 s"), "{said}");
    assert_eq!(replayed, 2);
}

/// The computed wait, on both sides: a message that still fails comes back
/// within it (exit 3, nothing more sent), one that is done does not.
#[tokio::test]
async fn the_computed_canary_wait_tells_a_failure_from_a_fix() {
    computed_wait_tells(Sqs::Moto).await;
}

/// Redrive is SQS's own: the same on LocalStack's SQS.
#[tokio::test]
async fn the_computed_canary_wait_tells_a_failure_from_a_fix_on_localstack() {
    computed_wait_tells(Sqs::LocalStack).await;
}

async fn computed_wait_tells(sqs: Sqs) {
    let run = |operation: &'static str| async move {
        let (aws, dlq, work) = dead_letters_on(sqs, operation).await;
        let quarantine = aws.create_queue(&unique("quarantine")).await.unwrap();
        let downstream = Downstream::start().await.unwrap();
        let consumer = worker(sqs, &work, &downstream, &quarantine);
        let outcome = replay_on(sqs, &dlq, &work, &[]).await;
        drop(consumer);
        outcome
    };
    let (failing, fixed) = tokio::join!(run("ledger.fail"), run("ledger.post"));
    let (code, said, replayed) = failing;
    assert_eq!(code, Some(3), "{said}");
    assert!(said.contains("checking") && said.contains("in 50 s"), "the computed wait: {said}");
    assert!(said.contains("canary failed: 1 of 1"), "{said}");
    assert_eq!(replayed, 1, "one replayed, then stopped");
    let (code, said, replayed) = fixed;
    assert_eq!(code, Some(0), "{said}");
    assert!(said.contains("canary passed: none came back"), "{said}");
    assert_eq!(replayed, 2);
}

/// The canary's figure read from a work queue SQS will not describe (denied,
/// then failing past the SDK's retries, then hung): one sentence naming the
/// call and the queue, and nothing sent.
#[tokio::test]
async fn a_canary_whose_queue_cannot_be_read_sends_nothing() {
    use e2e_tests::fault_proxy::{Fault, FaultProxy, Rule};
    let (aws, dlq, work) = dead_letters("ledger.fail").await;
    let name = work.rsplit('/').next().unwrap().to_owned();
    for fault in [Fault::Deny, Fault::ServerError, Fault::Hang] {
        let proxy = FaultProxy::start(&std::env::var("AWS_ENDPOINT_URL_SQS").unwrap()).await;
        let proxy = proxy.unwrap();
        proxy.inject(Rule::new("GetQueueAttributes", fault.clone()).when_body_contains(&name));
        let audit = temp_path("audit.jsonl");
        let output = tokio::process::Command::new(binary("sqs-backpressure").unwrap())
            .args(["replay", "--queue-url", &dlq, "--to", &work, "--canary", "1", "--yes"])
            .args(["--call-timeout", "2", "--audit", audit.to_str().unwrap()])
            .env("AWS_ENDPOINT_URL_SQS", proxy.url())
            .stdin(std::process::Stdio::null())
            .output()
            .await
            .unwrap();
        let said = String::from_utf8_lossy(&output.stderr).into_owned();
        let cell = fault.name();
        assert_eq!(output.status.code(), Some(1), "{cell}: {said}");
        assert!(said.contains("GetQueueAttributes") && said.contains(&name), "{cell}: {said}");
        assert!(!said.contains("Error {") && !said.contains("source:"), "{cell}: no dump: {said}");
        assert!(!audit.exists() || audit_lines(&audit).is_empty(), "{cell}: nothing sent");
        assert_eq!(aws.counts(&dlq).await.unwrap(), (2, 0), "{cell}: both still dead-lettered");
    }
}

/// The work queue read by a Lambda consumer on the engine, made as its owner would (boto3 on
/// moto: a role, the function with its variables, the mapping).
fn mapped_consumer(work: &str, variables: &serde_json::Value) {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let script = r##"
import io, json, sys, zipfile, boto3
endpoint, queue_url, variables, name = sys.argv[1:5]
def client(service):
    return boto3.client(service, endpoint_url=endpoint, region_name="us-east-1")
arn = client("sqs").get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}]}
role = client("iam").create_role(RoleName=name, AssumeRolePolicyDocument=json.dumps(trust))
code = io.BytesIO()
with zipfile.ZipFile(code, "w") as zf:
    zf.writestr("bootstrap", "#!/bin/sh\n")
lam = client("lambda")
lam.create_function(FunctionName=name, Runtime="provided.al2023", Role=role["Role"]["Arn"], Handler="bootstrap",
                    Code={"ZipFile": code.getvalue()}, Environment={"Variables": json.loads(variables)})
lam.create_event_source_mapping(EventSourceArn=arn, FunctionName=name, BatchSize=10)
"##;
    let output = std::process::Command::new(format!("{root}/.venv/bin/python"))
        .args(["-c", script, &std::env::var("AWS_ENDPOINT_URL_SQS").unwrap(), work])
        .arg(variables.to_string())
        .arg(unique("consumer"))
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
}

/// The consumer on the engine holds a retried message for its backoff (RETRY_BASE_SECONDS 300,
/// RETRY_MAX_SECONDS 900), not the queue's 3 s: 300 + 600 for the two receives, and the poll.
#[tokio::test]
async fn a_consumers_retry_backoff_lengthens_the_least_canary_wait() {
    let (aws, dlq, work) = dead_letters("ledger.fail").await;
    let variables = json!({"QUARANTINE_QUEUE_URL": "q", "RETRY_BASE_SECONDS": "300",
                           "RETRY_MAX_SECONDS": "900"});
    mapped_consumer(&work, &variables);
    let (code, said, replayed) = replay(&dlq, &work, &["--canary-wait", "30"]).await;
    assert_eq!(code, Some(2), "{said}");
    assert!(said.contains("give --canary-wait 920 or more"), "{said}");
    assert!(said.contains("RETRY_BASE_SECONDS 300, RETRY_MAX_SECONDS 900"), "{said}");
    assert_eq!((replayed, aws.counts(&dlq).await.unwrap()), (0, (2, 0)), "nothing sent");
}

/// Lambda denied (the fault proxy's denial, in a body Lambda's JSON client cannot parse),
/// throttled, failing or hung: the least wait counts the visibility timeout alone, and the
/// replay says first that a consumer holding retries longer needs a longer wait.
#[tokio::test]
async fn a_consumer_that_cannot_be_read_is_said_before_the_canary() {
    use e2e_tests::fault_proxy::{Fault, FaultProxy, Rule};
    let (aws, dlq, work) = dead_letters("ledger.fail").await;
    let args = ["replay", "--queue-url", &dlq, "--to", &work, "--canary", "1", "--yes"];
    for fault in [Fault::Deny, Fault::Throttle, Fault::ServerError, Fault::Hang] {
        let lambda = std::env::var("AWS_ENDPOINT_URL_LAMBDA").unwrap();
        let proxy = FaultProxy::start(&lambda).await.unwrap();
        proxy.inject(Rule::new("unknown", fault.clone()));
        let output = tokio::process::Command::new(binary("sqs-backpressure").unwrap())
            .args(args)
            .args(["--canary-wait", "10", "--call-timeout", "3"])
            .env("AWS_ENDPOINT_URL_LAMBDA", proxy.url())
            .stdin(std::process::Stdio::null())
            .output()
            .await
            .unwrap();
        let said = stderr(&output);
        let name = fault.name();
        assert_eq!(output.status.code(), Some(2), "{name}: {said}");
        assert!(
            said.starts_with(
                "note: the canary's wait counts the visibility timeout alone: the retry \
                 backoff of the queue's consumer could not be read \
                 (lambda:ListEventSourceMappings: "
            ),
            "{name}: {said}"
        );
        assert!(!said.contains("Error {"), "{name}: a Debug dump: {said}");
        assert!(said.contains("give --canary-wait 26 or more"), "{name}: {said}");
        assert!(proxy.total() > 0, "{name}: Lambda never called");
    }
    assert_eq!(aws.counts(&dlq).await.unwrap(), (2, 0), "nothing sent");
}
