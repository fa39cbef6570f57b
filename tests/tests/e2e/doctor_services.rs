//! doctor on the ECS services that read a queue. Each target tracking policy follows a metric
//! that is published: the backlog-publisher's (read from its environment on moto), or one
//! CloudWatch (LocalStack) holds datapoints of; a policy on a metric nobody puts is broken, and
//! a CloudWatch that cannot be read is never a pass. A backpressure-app worker in a service you
//! run has the stack's quarantine queue and a task role.

use serde_json::Value;

use crate::doctor::{deployment, doctor_command, endpoint};
use crate::doctor_regions::{rules, run};

#[tokio::test]
async fn a_policy_on_a_misspelt_namespace_and_queue_is_broken_and_says_both() {
    let queue = deployment("policy-metric-unpublished").await;
    let (report, code) = run(&mut doctor_command(&queue, true)).await;
    assert_eq!(report["unreadable"], Value::Array(vec![]), "{report}");
    assert_eq!((rules(&report), code), (vec!["policy-metric-unpublished"], 4), "{report}");
    let measured = report["findings"][0]["measured"].as_str().unwrap();
    assert!(measured.contains("namespace SqsBackpresure, not SqsBackpressure"), "{measured}");
    let misspelt = &queue[..queue.len() - 1];
    assert!(measured.contains(&format!("QueueName={misspelt}, not {queue}")), "{measured}");
    let fix = report["findings"][0]["fix"].as_str().unwrap();
    assert!(fix.contains("Namespace SqsBackpressure, MetricName ScalingLoad"), "{fix}");
}

#[tokio::test]
async fn a_policy_on_a_metric_only_something_else_puts_passes_once_cloudwatch_holds_it() {
    let queue = deployment("service-metric-elsewhere").await;
    let (report, code) = run(&mut doctor_command(&queue, true)).await;
    assert_eq!((rules(&report), code), (Vec::<&str>::new(), 0), "{report}");
    assert_eq!(report["unreadable"], Value::Array(vec![]), "{report}");
}

/// GetMetricData denied, throttled, failing or hanging: the policy is neither passed nor called
/// broken; the read is named and doctor exits 5.
#[tokio::test]
async fn a_policy_metric_cloudwatch_cannot_answer_for_is_never_a_pass() {
    use e2e_tests::fault_proxy::{Fault, FaultProxy, Rule};
    let queue = deployment("policy-metric-unpublished").await;
    let cloudwatch = endpoint("AWS_ENDPOINT_URL_CLOUDWATCH");
    for fault in [Fault::Deny, Fault::Throttle, Fault::ServerError, Fault::Hang] {
        let proxy = FaultProxy::start(&cloudwatch).await.unwrap();
        proxy.inject(Rule::new("GetMetricData", fault.clone()));
        let mut command = doctor_command(&queue, true);
        command.args(["--call-timeout", "3"]).env("AWS_ENDPOINT_URL_CLOUDWATCH", proxy.url());
        let (report, code) = run(&mut command).await;
        assert_eq!((rules(&report), code), (Vec::<&str>::new(), 5), "{}: {report}", fault.name());
        let reads = report["unreadable"].as_array().unwrap();
        let named = reads.iter().find(|r| r["action"] == "cloudwatch:GetMetricData");
        let named = named.unwrap_or_else(|| panic!("{}: not named: {report}", fault.name()));
        assert!(named["resource"].as_str().unwrap().starts_with("SqsBackpresure/ScalingLoad ("));
        assert!(!named["message"].as_str().unwrap().contains("Error {"), "{report}");
    }
}

/// A worker on backpressure-app in a service you run, its task definition without the stack's
/// quarantine queue: run_worker would not start, and doctor says so before a task does.
#[tokio::test]
async fn a_worker_without_its_quarantine_queue_is_broken() {
    let queue = deployment("worker-unwired").await;
    let (report, code) = run(&mut doctor_command(&queue, true)).await;
    assert_eq!((rules(&report), code), (vec!["worker-unwired"], 4), "{report}");
    let measured = report["findings"][0]["measured"].as_str().unwrap();
    assert!(measured.contains("no QUARANTINE_QUEUE_URL"), "{measured}");
}
