//! `sqs-backpressure doctor` on the stack as deployed: our own template, as its defaults and each
//! parameter set give it, breaks none of the rules doctor checks.

use serde_json::Value;
use tokio::process::Command;

use e2e_tests::fixtures::binary;

use super::driver::Emulator;
use super::wiring::{Checks, Deployed};

/// doctor on the stack's work queue, every call sent to `endpoint` (the stack's emulator).
pub(super) async fn finds_nothing(deployed: &Deployed<'_>, endpoint: &str, checks: &mut Checks) {
    let queue = deployed.physical("WorkQueue");
    let report = doctor(&["--queue", &queue], endpoint).await;
    checks.eq("doctor: findings", &report["findings"], &Value::Array(vec![]));
    checks.eq("doctor: failed reads", &report["unreadable"], &Value::Array(vec![]));
    checks.eq("doctor: exit", report["exit"].as_i64(), Some(0));
}

/// doctor on the work queue and the worker service the stack creates: its stop timeout, drain,
/// health check and scaling, and the queue around it.
pub(super) async fn finds_nothing_on_the_service(
    deployed: &Deployed<'_>,
    endpoint: &str,
    checks: &mut Checks,
) {
    let queue = deployed.work_queue_url();
    let service = format!(
        "{}/{}",
        deployed.plan.value("EcsClusterName"),
        deployed.plan.value("EcsServiceName")
    );
    let report = doctor(&["--queue", &queue, "--service", &service], endpoint).await;
    let mut findings: Vec<Value> = report["findings"].as_array().cloned().unwrap_or_default();
    let unscaled = |f: &Value| f["rule"] == "service-unscaled";
    if deployed.emulator == Emulator::Moto && findings.iter().any(unscaled) {
        // Held where it can be: doctor's reading of a scalable target is tested on its own
        // fixtures (tests/e2e/doctor.rs), which register one through the API.
        checks.unreadable(
            "doctor: the service's scalable target",
            "moto's CloudFormation does not create AWS::ApplicationAutoScaling::ScalableTarget, so \
             doctor rightly finds the service unscaled there",
        );
        findings.retain(|f| !unscaled(f));
    }
    // moto's CloudFormation registers a task definition with its family, containers, volumes and
    // memory only: the template's TaskRoleArn (template_iam checks it) is dropped there.
    let roleless = |f: &Value| {
        f["rule"] == "worker-unwired"
            && f["measured"]
                .as_str()
                .is_some_and(|m| m.ends_with("its task definition has no taskRoleArn: the worker's calls to SQS have no credentials")
                    && !m.contains("QUARANTINE_QUEUE_URL"))
    };
    if deployed.emulator == Emulator::Moto && findings.iter().any(roleless) {
        checks.unreadable(
            "doctor: the task definition's task role",
            "moto's CloudFormation registers a task definition without its TaskRoleArn, so \
             doctor rightly finds none there; the quarantine queue's variable it found",
        );
        findings.retain(|f| !roleless(f));
    }
    let mut unreadable: Vec<Value> = report["unreadable"].as_array().cloned().unwrap_or_default();
    // What moto cannot answer the SDK, each named by doctor as a failed read.
    let gaps = [
        (
            "cloudwatch:DescribeAlarms",
            "moto answers CloudWatch in its query protocol only, the SDK asks in CBOR",
        ),
        (
            "lambda:ListFunctions",
            "moto's CloudFormation leaves a Number parameter a number in the publisher's \
             environment (AWS makes it a string), and the SDK refuses such a listing",
        ),
    ];
    for (action, why) in gaps {
        let failed = |read: &Value| read["action"] == action;
        if deployed.emulator == Emulator::Moto && unreadable.iter().any(failed) {
            checks.unreadable(&format!("doctor: {action}"), why);
            unreadable.retain(|read| !failed(read));
        }
    }
    checks.eq("doctor with the service: findings", &Value::Array(findings), &Value::Array(vec![]));
    checks.eq(
        "doctor with the service: failed reads",
        &Value::Array(unreadable),
        &Value::Array(vec![]),
    );
}

async fn doctor(args: &[&str], endpoint: &str) -> Value {
    let mut command = Command::new(binary("sqs-backpressure").unwrap());
    command.arg("doctor").args(args).arg("--json").env("AWS_ENDPOINT_URL", endpoint);
    // Every call to the stack's emulator: a service's own endpoint would win over it.
    for (name, _) in std::env::vars().filter(|(name, _)| name.starts_with("AWS_ENDPOINT_URL_")) {
        command.env_remove(name);
    }
    let output = command.output().await.unwrap();
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stderr)))
}
