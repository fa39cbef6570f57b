//! `sqs-backpressure doctor` on the stack as deployed: our own template, as its defaults and each
//! parameter set give it, breaks none of the rules doctor checks.

use serde_json::Value;
use tokio::process::Command;

use e2e_tests::fixtures::binary;

use super::wiring::{Checks, Deployed};

/// doctor on the stack's work queue, every call sent to `endpoint` (the stack's emulator).
pub(super) async fn finds_nothing(deployed: &Deployed<'_>, endpoint: &str, checks: &mut Checks) {
    let queue = deployed.physical("WorkQueue");
    let output = Command::new(binary("sqs-backpressure").unwrap())
        .args(["doctor", "--queue", &queue, "--json"])
        .env("AWS_ENDPOINT_URL", endpoint)
        .env_remove("AWS_ENDPOINT_URL_SQS")
        .env_remove("AWS_ENDPOINT_URL_CLOUDWATCH")
        .output()
        .await
        .unwrap();
    let report: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stderr)));
    checks.eq("doctor: findings", &report["findings"], &Value::Array(vec![]));
    checks.eq("doctor: failed reads", &report["unreadable"], &Value::Array(vec![]));
    checks.eq("doctor: exit", output.status.code(), Some(0));
}
