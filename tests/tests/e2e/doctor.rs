//! `sqs-backpressure doctor` on deployments the emulators hold (SQS, IAM and Lambda on moto,
//! alarms on LocalStack), each made as AWS advises and then changed to break one rule
//! (`scripts/doctor_fixture.py`): the rule is found, and only it; the deployment as advised gives
//! no finding; a read that fails gives the "could not check" exit.

use std::process::Output;

use e2e_tests::fixtures::{binary, unique};
use serde_json::Value;
use tokio::process::Command;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// The region these deployments live in, apart from the stacks other tests deploy in moto's
/// us-east-1: moto's CloudFormation leaves a Number parameter a number in a function's
/// environment (AWS makes it a string), and the SDK refuses a `ListFunctions` page holding one.
const REGION: &str = "eu-west-1";

/// `sqs-backpressure` in the deployments' region.
fn sqs_backpressure() -> Command {
    let mut command = Command::new(binary("sqs-backpressure").unwrap());
    command.env("AWS_REGION", REGION).env_remove("AWS_DEFAULT_REGION");
    command
}

pub(crate) fn endpoint(variable: &str) -> String {
    std::env::var(variable)
        .unwrap_or_else(|_| panic!("{variable} is not set: run under scripts/emulators.sh run"))
}

/// The deployment, named after the rule it breaks ("none" for none): its queue's name. Its
/// queues are on `sqs`; everything else on moto, its alarms on LocalStack.
pub(crate) async fn deployment(breaks: &str) -> String {
    deployment_on(breaks, &endpoint("AWS_ENDPOINT_URL_SQS")).await
}

async fn deployment_on(breaks: &str, sqs: &str) -> String {
    // A service rule's deployment is named so that doctor's call can give its service.
    let kind = if breaks == "service-unscaled" { "worker-" } else { "" };
    let name = unique(&format!("doc-{kind}{}", breaks.len()));
    let output = Command::new(format!("{ROOT}/.venv/bin/python"))
        .arg(format!("{ROOT}/scripts/doctor_fixture.py"))
        .args(["--endpoint", &endpoint("AWS_ENDPOINT_URL_SQS"), "--sqs", sqs])
        .args(["--cloudwatch", &endpoint("AWS_ENDPOINT_URL_CLOUDWATCH")])
        .args(["--name", &name, "--breaks", breaks, "--region", REGION])
        .output()
        .await
        .unwrap();
    assert!(
        output.status.success(),
        "doctor_fixture.py: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    name
}

/// doctor on `queue`, Lambda's, ECS's and Application Auto Scaling's calls sent to moto as
/// SQS's are.
async fn doctor(queue: &str, json: bool) -> Output {
    doctor_command(queue, json).output().await.unwrap()
}

/// The command [`doctor`] runs, for a test to change before it does.
pub(crate) fn doctor_command(queue: &str, json: bool) -> Command {
    let moto = endpoint("AWS_ENDPOINT_URL_SQS");
    let mut command = sqs_backpressure();
    command
        .args(["doctor", "--queue", queue])
        .env("AWS_ENDPOINT_URL_LAMBDA", &moto)
        .env("AWS_ENDPOINT_URL_ECS", &moto)
        .env("AWS_ENDPOINT_URL_APPLICATION_AUTO_SCALING", &moto);
    if queue.contains("-worker-") {
        // The one service no publisher names: given as a person would.
        command.args(["--service", &format!("{queue}-cluster/{queue}-worker")]);
    }
    if json {
        command.arg("--json");
    }
    command
}

/// The rules doctor found, and its exit code.
async fn found(breaks: &str) -> (Vec<String>, i32) {
    let queue = deployment(breaks).await;
    let output = doctor(&queue, true).await;
    let report: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stderr)));
    let unreadable = &report["unreadable"];
    assert_eq!(unreadable, &Value::Array(vec![]), "{breaks}: a read failed");
    let rules = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|finding| finding["rule"].as_str().unwrap().to_owned())
        .collect();
    (rules, output.status.code().unwrap_or(-1))
}

async fn finds_exactly(breaks: &str, exit: i32) {
    let (rules, code) = found(breaks).await;
    assert_eq!(rules, [breaks], "{breaks}");
    assert_eq!(code, exit, "{breaks}");
}

#[tokio::test]
async fn a_deployment_as_aws_advises_gives_no_finding() {
    let queue = deployment("none").await;
    let output = doctor(&queue, false).await;
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{text}{}", String::from_utf8_lossy(&output.stderr));
    assert!(text.contains("read 2 queue(s), 1 mapping(s), 1 function(s), 2 alarm(s)"), "{text}");
    assert!(text.ends_with("every rule holds\n"), "{text}");
}

#[tokio::test]
async fn visibility_below_six_function_timeouts_and_the_window_is_a_warning() {
    finds_exactly("visibility-below-six-timeouts", 3).await;
}

#[tokio::test]
async fn visibility_below_the_function_timeout_is_broken() {
    finds_exactly("visibility-below-timeout", 4).await;
}

#[tokio::test]
async fn a_max_receive_count_below_five_is_found() {
    finds_exactly("max-receive-count-low", 3).await;
}

#[tokio::test]
async fn a_read_queue_without_a_dead_letter_queue_is_found() {
    let (rules, code) = found("no-dead-letter-queue").await;
    // Its age alarm then stands alone: nothing catches a message that keeps failing.
    assert_eq!(rules, ["age-only-alarm", "no-dead-letter-queue"]);
    assert_eq!(code, 3);
}

#[tokio::test]
async fn a_dead_letter_queue_that_was_deleted_is_found() {
    let (rules, code) = found("dead-letter-queue-missing").await;
    // With no dead-letter queue to catch it, the age alarm alone hides a poison message too.
    assert_eq!(rules, ["dead-letter-queue-missing", "age-only-alarm"]);
    assert_eq!(code, 4);
}

#[tokio::test]
async fn a_dead_letter_queue_that_refuses_its_source_is_found_on_localstack() {
    // moto keeps no RedriveAllowPolicy: LocalStack's SQS, with no function reading the queue.
    let sqs = endpoint("E2E_LOCALSTACK_SQS");
    let queue = deployment_on("dead-letter-not-allowed", &sqs).await;
    let mut command = sqs_backpressure();
    let output = command
        .args(["doctor", "--queue", &queue, "--json"])
        .env("AWS_ENDPOINT_URL_SQS", &sqs)
        .env("AWS_ENDPOINT_URL_LAMBDA", endpoint("AWS_ENDPOINT_URL_SQS"))
        .output()
        .await
        .unwrap();
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let rules: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    assert_eq!(rules, ["dead-letter-not-allowed", "queue-nobody-reads"], "{report}");
    assert_eq!(output.status.code(), Some(4));
}

#[tokio::test]
async fn a_dead_letter_queue_keeping_messages_no_longer_than_its_source_is_found() {
    finds_exactly("dead-letter-retention-short", 3).await;
}

#[tokio::test]
async fn a_dead_letter_queue_alarmed_only_on_what_it_is_sent_is_found() {
    finds_exactly("dead-letter-unalarmed", 3).await;
}

#[tokio::test]
async fn a_queue_alarmed_only_on_its_oldest_message_is_found() {
    let (rules, code) = found("age-only-alarm").await;
    assert_eq!(rules, ["age-only-alarm", "dead-letter-unalarmed"]);
    assert_eq!(code, 3);
}

#[tokio::test]
async fn a_mapping_without_maximum_concurrency_is_found() {
    finds_exactly("no-maximum-concurrency", 3).await;
}

#[tokio::test]
async fn a_mapping_allowed_more_than_the_functions_reserved_concurrency_is_found() {
    finds_exactly("maximum-concurrency-above-reserved", 4).await;
}

#[tokio::test]
async fn a_mapping_that_drops_our_functions_item_failures_is_found() {
    finds_exactly("item-failures-ignored", 4).await;
}

#[tokio::test]
async fn provisioned_pollers_outside_their_limits_are_found() {
    finds_exactly("pollers-out-of-range", 4).await;
}

#[tokio::test]
async fn a_batch_larger_than_an_invocation_can_carry_is_found() {
    finds_exactly("batch-above-payload", 3).await;
}

#[tokio::test]
async fn a_queue_nobody_reads_is_found() {
    finds_exactly("queue-nobody-reads", 3).await;
}

#[tokio::test]
async fn a_read_that_fails_is_a_finding_of_its_own_and_the_could_not_check_exit() {
    let queue = deployment("none").await;
    // Lambda's calls go to a port nobody listens on: every Lambda read fails.
    let mut command = sqs_backpressure();
    let output = command
        .args(["doctor", "--queue", &queue, "--json", "--call-timeout", "5"])
        .env("AWS_ENDPOINT_URL_LAMBDA", "http://127.0.0.1:9")
        .output()
        .await
        .unwrap();
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(5), "{report}");
    let actions: Vec<&str> = report["unreadable"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["action"].as_str().unwrap())
        .collect();
    assert_eq!(actions, ["lambda:ListEventSourceMappings", "lambda:ListFunctions"], "{report}");
    // Without the mappings nothing may be said of who reads the queue.
    assert_eq!(report["findings"], Value::Array(vec![]), "{report}");
}

#[tokio::test]
async fn a_worker_service_as_aws_advises_gives_no_finding() {
    let (rules, code) = found("service-none").await;
    assert_eq!((rules, code), (Vec::<String>::new(), 0));
}

#[tokio::test]
async fn a_service_given_with_no_scalable_target_is_found() {
    finds_exactly("service-unscaled", 3).await;
}

#[tokio::test]
async fn a_publishers_service_scaled_on_cpu_alone_is_found() {
    finds_exactly("service-scaled-on-cpu-only", 3).await;
}

#[tokio::test]
async fn a_stop_timeout_shorter_than_the_workers_drain_is_found() {
    finds_exactly("stop-timeout-below-drain", 3).await;
}

#[tokio::test]
async fn a_worker_container_with_no_health_check_is_found() {
    finds_exactly("reader-without-health-check", 3).await;
}

#[tokio::test]
async fn a_publisher_target_whose_service_is_gone_is_broken() {
    finds_exactly("publisher-target-gone", 4).await;
}

/// Each service's first read denied, throttled, failing or hanging, through the fault proxy in
/// front of its emulator: never a crash or a silent pass, but the call and its permission named,
/// and the "could not check" exit.
#[tokio::test]
async fn every_service_denied_throttled_failing_or_hanging_is_named_and_exits_5() {
    use e2e_tests::fault_proxy::{Fault, FaultProxy, Rule};
    let queue = deployment("service-none").await;
    let moto = endpoint("AWS_ENDPOINT_URL_SQS");
    let cloudwatch = endpoint("AWS_ENDPOINT_URL_CLOUDWATCH");
    // Lambda's REST calls carry no operation name the proxy reads: it calls them "unknown".
    let cases = [
        (
            "AWS_ENDPOINT_URL_SQS",
            &moto,
            "GetQueueAttributes",
            Fault::Deny,
            "sqs:GetQueueAttributes",
        ),
        (
            "AWS_ENDPOINT_URL_LAMBDA",
            &moto,
            "unknown",
            Fault::Throttle,
            "lambda:ListEventSourceMappings",
        ),
        (
            "AWS_ENDPOINT_URL_ECS",
            &moto,
            "DescribeServices",
            Fault::ServerError,
            "ecs:DescribeServices",
        ),
        (
            "AWS_ENDPOINT_URL_APPLICATION_AUTO_SCALING",
            &moto,
            "DescribeScalableTargets",
            Fault::Hang,
            "application-autoscaling:DescribeScalableTargets",
        ),
        (
            "AWS_ENDPOINT_URL_CLOUDWATCH",
            &cloudwatch,
            "DescribeAlarms",
            Fault::Deny,
            "cloudwatch:DescribeAlarms",
        ),
    ];
    for (variable, upstream, operation, fault, action) in cases {
        let proxy = FaultProxy::start(upstream).await.unwrap();
        proxy.inject(Rule::new(operation, fault.clone()));
        let mut command = sqs_backpressure();
        command
            .args(["doctor", "--queue", &queue, "--json", "--call-timeout", "3"])
            .env("AWS_ENDPOINT_URL_LAMBDA", &moto)
            .env("AWS_ENDPOINT_URL_ECS", &moto)
            .env("AWS_ENDPOINT_URL_APPLICATION_AUTO_SCALING", &moto)
            .env(variable, proxy.url());
        let output = command.output().await.unwrap();
        let report: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
            panic!("{action}, {}: {e}: {}", fault.name(), String::from_utf8_lossy(&output.stderr))
        });
        assert_eq!(output.status.code(), Some(5), "{action}, {}: {report}", fault.name());
        let unreadable = report["unreadable"].as_array().unwrap();
        let named = unreadable.iter().find(|r| r["action"] == action);
        let named =
            named.unwrap_or_else(|| panic!("{action}, {}: not named: {report}", fault.name()));
        let message = named["message"].as_str().unwrap();
        assert!(!message.contains("Error {"), "{action}: a Debug dump: {message}");
        assert!(proxy.total() > 0, "{action}: never called");
    }
}

#[tokio::test]
async fn a_service_given_that_its_cluster_does_not_have_is_broken() {
    let queue = deployment("service-none").await;
    let moto = endpoint("AWS_ENDPOINT_URL_SQS");
    let output = sqs_backpressure()
        .args([
            "doctor",
            "--queue",
            &queue,
            "--json",
            "--service",
            &format!("{queue}-cluster/nope"),
        ])
        .env("AWS_ENDPOINT_URL_LAMBDA", &moto)
        .env("AWS_ENDPOINT_URL_ECS", &moto)
        .env("AWS_ENDPOINT_URL_APPLICATION_AUTO_SCALING", &moto)
        .output()
        .await
        .unwrap();
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let rules: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    assert_eq!((rules, output.status.code()), (vec!["service-missing"], Some(4)), "{report}");
}
