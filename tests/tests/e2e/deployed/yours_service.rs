//! Your own worker in a service you run (docs/your-code.md, a service that scales itself), on
//! moto: the stack for the existing service gives the task definition's lines
//! (`WorkerEnvironment`) and the task role's policy (`ConsumerAccessPolicyArn`), and the
//! library's example worker, started with those lines alone, works the queue and quarantines
//! in the stack's quarantine queue.

use std::collections::BTreeMap;
use std::time::Duration;

use e2e_tests::downstream::Downstream;
use e2e_tests::fixtures::Aws;
use serde_json::{Value, json};

use super::driver::Emulator;
use super::wiring::{Checks, Deployed};

const SETTLED: Duration = Duration::from_secs(60);

#[tokio::test]
async fn your_worker_in_your_own_service_runs_on_the_stacks_outputs_alone() {
    let set = "ecs-existing-scaling-target";
    let aws = Aws::from_env().await.unwrap();
    let downstream = Downstream::start().await.unwrap();
    let overrides = super::prerequisites(set, &aws, &downstream).await;
    let (stack, plan, read) = super::yours::deploy(set, &overrides).await;
    let deployed = Deployed { read, plan: &plan, emulator: Emulator::Moto };
    let mut checks = Checks::default();

    let policy = deployed.read["outputs"]["ConsumerAccessPolicyArn"].as_str().unwrap_or_default();
    checks.eq("ConsumerAccessPolicyArn: an output", policy.is_empty(), false);
    let lines = deployed.read["outputs"]["WorkerEnvironment"].as_str().unwrap_or("[]");
    let lines: Vec<Value> = serde_json::from_str(lines).unwrap();
    let env: BTreeMap<String, String> = lines
        .iter()
        .map(|line| (line["name"].as_str().unwrap().into(), line["value"].as_str().unwrap().into()))
        .collect();
    let quarantine = deployed.physical("QuarantineQueue");
    checks.eq(
        "WorkerEnvironment: the stack's quarantine queue",
        env.get("QUARANTINE_QUEUE_URL"),
        Some(&quarantine),
    );
    checks.eq(
        "WorkerEnvironment: the work queue",
        env.get("QUEUE_URL"),
        Some(&deployed.work_queue_url()),
    );

    let (mut worker, health) = super::yours::example_worker(&env);
    let work = deployed.work_queue_url();
    let bodies = [
        json!({"image": "a.png", "width": 200}).to_string(),
        json!({"image": "wide.png", "width": 9_000}).to_string(),
    ];
    aws.send_batch(&work, &bodies).await.unwrap();
    aws.wait_for_counts(&work, (0, 0), SETTLED, Duration::from_millis(250)).await.unwrap();
    let quarantined = aws.quarantined(&quarantine, 1).await.unwrap();
    let codes: Vec<&str> =
        quarantined.iter().map(|q| q.record["errorCode"].as_str().unwrap_or("?")).collect();
    checks.eq("run: quarantined in the stack's queue", codes, vec!["too_wide"]);
    let made = worker.lines().iter().filter(|l| l.contains("thumbnail made")).count();
    checks.eq("run: thumbnails made", made, 1);
    worker.signal("TERM").await.unwrap();
    checks.eq("run: exit after SIGTERM", worker.exit(SETTLED).await.unwrap().code(), Some(0));
    let _ = std::fs::remove_file(&health);
    println!("{set}, your worker in your service:\n  held:\n    {}", checks.held.join("\n    "));
    stack.delete().await.unwrap();
}
