//! doctor on queues named by ARN in another region or account than the one
//! configured: each is read where its ARN says, or its read fails (exit 5)
//! naming the ARN; a dead-letter queue that cannot be read is never a pass.
//! Moto keeps each region apart and answers `GetQueueUrl` for its own
//! account whatever owner is asked; LocalStack takes a redrive policy naming
//! a queue in another region or account, which moto refuses.

use aws_sdk_sqs::types::QueueAttributeName;
use serde_json::{Value, json};

use crate::doctor::{deployment, doctor_command, endpoint};

/// An SQS client of `endpoint` in `region`.
async fn sqs_in(endpoint: &str, region: &str) -> aws_sdk_sqs::Client {
    let config = aws_config::load_from_env().await;
    let config = aws_sdk_sqs::config::Builder::from(&config)
        .region(aws_sdk_sqs::config::Region::new(region.to_owned()))
        .endpoint_url(endpoint)
        .build();
    aws_sdk_sqs::Client::from_conf(config)
}

/// The report doctor prints in JSON, and its exit code.
pub(crate) async fn run(command: &mut tokio::process::Command) -> (Value, i32) {
    let output = command.output().await.unwrap();
    let report = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stderr)));
    (report, output.status.code().unwrap_or(-1))
}

pub(crate) fn rules(report: &Value) -> Vec<&str> {
    report["findings"].as_array().unwrap().iter().filter_map(|f| f["rule"].as_str()).collect()
}

fn unreadable(report: &Value) -> Vec<(&str, &str)> {
    let reads = report["unreadable"].as_array().unwrap().iter();
    reads.map(|r| (r["resource"].as_str().unwrap(), r["message"].as_str().unwrap())).collect()
}

/// The deployment as AWS advises, in eu-west-1, given by its ARN to a doctor
/// configured for us-east-1, where a queue of the same name nobody reads is.
#[tokio::test]
async fn a_queue_given_by_arn_is_read_in_the_region_its_arn_names() {
    let name = deployment("none").await;
    let moto = endpoint("AWS_ENDPOINT_URL_SQS");
    sqs_in(&moto, "us-east-1").await.create_queue().queue_name(&name).send().await.unwrap();
    let arn = format!("arn:aws:sqs:eu-west-1:123456789012:{name}");
    let mut command = doctor_command(&arn, true);
    command.args(["--region", "us-east-1"]);
    let (report, exit) = run(&mut command).await;
    assert_eq!((rules(&report), unreadable(&report), exit), (vec![], vec![], 0), "{report}");
    // A second queue in another region than the first: doctor reads one
    // region a run, so that one is a failed read saying how to read it
    // (alone, its own ARN names the region read).
    let elsewhere = format!("arn:aws:sqs:us-east-1:123456789012:{name}");
    let mut command = doctor_command(&arn, true);
    command.args(["--queue", &elsewhere]);
    let (report, exit) = run(&mut command).await;
    assert_eq!(exit, 5, "{report}");
    let reads = unreadable(&report);
    assert_eq!(reads.iter().map(|r| r.0).collect::<Vec<_>>(), [elsewhere.as_str()], "{report}");
    assert!(reads[0].1.contains(&format!("--queue {elsewhere} on its own")), "{report}");
}

/// Another account's queue of that name: moto answers with this account's,
/// which is not the queue asked about.
#[tokio::test]
async fn a_queue_of_another_account_that_sqs_answers_for_with_ours_is_a_failed_read() {
    let name = deployment("none").await;
    let arn = format!("arn:aws:sqs:eu-west-1:999999999999:{name}");
    let (report, exit) = run(&mut doctor_command(&arn, true)).await;
    assert_eq!(exit, 5, "{report}");
    let reads = unreadable(&report);
    assert_eq!(reads.len(), 1, "{report}");
    assert_eq!(reads[0].0, arn);
    assert!(reads[0].1.contains("arn:aws:sqs:eu-west-1:123456789012"), "{report}");
    assert_eq!(rules(&report), Vec::<&str>::new(), "nothing said of a queue not read");
}

/// On LocalStack, in eu-west-1: a queue whose dead-letter queue is in
/// us-west-2 (keeping messages no longer than its source; a queue of that
/// name in eu-west-1 keeps them 14 days), and one whose dead-letter queue is
/// another account's that cannot be seen.
#[tokio::test]
async fn dead_letter_queues_of_another_region_or_account_are_read_there_or_fail_the_read() {
    let localstack = endpoint("E2E_LOCALSTACK_SQS");
    let (here, there) =
        (sqs_in(&localstack, "eu-west-1").await, sqs_in(&localstack, "us-west-2").await);
    let dlq = e2e_tests::fixtures::unique("far-dlq");
    there.create_queue().queue_name(&dlq).send().await.unwrap();
    let fortnight = QueueAttributeName::MessageRetentionPeriod;
    here.create_queue().queue_name(&dlq).attributes(fortnight, "1209600").send().await.unwrap();
    let source = |name: &str, dead_letter: String| {
        let policy = json!({"deadLetterTargetArn": dead_letter, "maxReceiveCount": 5}).to_string();
        let create = here.create_queue().queue_name(name);
        create.attributes(QueueAttributeName::RedrivePolicy, policy).send()
    };
    let far = e2e_tests::fixtures::unique("far-source");
    let far_dlq = format!("arn:aws:sqs:us-west-2:000000000000:{dlq}");
    let far_url = source(&far, far_dlq.clone()).await.unwrap().queue_url.unwrap();
    let foreign = e2e_tests::fixtures::unique("foreign-source");
    let foreign_dlq = format!("arn:aws:sqs:eu-west-1:999999999999:{dlq}-gone");
    let foreign_url = source(&foreign, foreign_dlq.clone()).await.unwrap().queue_url.unwrap();

    let doctor = |url: String| {
        let mut command = doctor_command(&url, true);
        command.env("AWS_ENDPOINT_URL_SQS", &localstack);
        command
    };
    let (report, _) = run(&mut doctor(far_url)).await;
    assert!(rules(&report).contains(&"dead-letter-retention-short"), "read in us-west-2: {report}");
    assert_eq!(unreadable(&report), vec![], "{report}");

    let (report, exit) = run(&mut doctor(foreign_url)).await;
    assert_eq!(exit, 5, "{report}");
    let reads = unreadable(&report);
    assert_eq!(reads.iter().map(|r| r.0).collect::<Vec<_>>(), [foreign_dlq.as_str()], "{report}");
    assert!(
        !rules(&report).contains(&"dead-letter-queue-missing"),
        "unseen is not missing: {report}"
    );
}
