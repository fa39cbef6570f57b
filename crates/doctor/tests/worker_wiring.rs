//! `worker-unwired`: a backpressure-app worker in a service you run, without what the stack
//! gives it.

use backpressure_doctor::{Deployment, Service, Wiring, check};

fn deployment(wiring: Option<Wiring>) -> Deployment {
    let mut service = Service::new("shop", "orders-worker");
    service.described = true;
    service.queue_arns = vec!["arn:aws:sqs:us-east-1:123456789012:orders".into()];
    service.stop_timeout_s = 120;
    service.wiring = wiring;
    let mut deployment = Deployment::default();
    deployment.services = vec![service];
    deployment
}

fn said(wiring: Wiring) -> Vec<String> {
    let report = check(&deployment(Some(wiring)));
    let wired = report.findings.iter().filter(|f| f.rule == "worker-unwired");
    wired.map(|f| format!("{}: {}", f.rule, f.measured)).collect()
}

const QUARANTINE: &str = "https://sqs.us-east-1.amazonaws.com/123456789012/orders-quarantine";

#[test]
fn a_worker_with_its_quarantine_queue_and_a_task_role_is_wired() {
    assert_eq!(
        said(Wiring::new("DRAIN_SECONDS", Some(QUARANTINE.into()), true)),
        Vec::<String>::new()
    );
    let foreign = check(&deployment(None)).findings;
    assert!(!foreign.iter().any(|f| f.rule == "worker-unwired"), "not ours: nothing to say");
}

#[test]
fn each_missing_piece_is_named_in_one_finding() {
    let mut gone = Wiring::new("CONSUMER_CONCURRENCY", Some(QUARANTINE.into()), false);
    gone.quarantine_missing = true;
    let found = said(gone);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with(
        "worker-unwired: the container reading the queue: its QUARANTINE_QUEUE_URL names"
    ));
    assert!(found[0].contains("has no taskRoleArn"), "{}", found[0]);
    let unset = said(Wiring::new("DRAIN_SECONDS", None, true));
    insta::assert_snapshot!(unset.join("\n"), @"worker-unwired: the container reading the queue: it sets DRAIN_SECONDS (a backpressure-app worker's) but no QUARANTINE_QUEUE_URL, without which run_worker does not start");
}
