//! The capacity planner's model against the real thing: two sqs-worker
//! processes of 4 messages at once drain a backlog of 400 into a downstream
//! taking 300 ms a message, on LocalStack's SQS and on fauxqs, and
//! `simulate`'s model, given the same backlog, tasks and service time,
//! predicts the drain time and the p50/p99 wait within 15 %.
//!
//! The backlog is on the queue before the workers start, so every message
//! arrives in the model's second 0 whatever the emulator's speed. (Sent while
//! the workers polled, a burst's arrivals followed it: on a loaded moto they
//! spread over ten seconds and the waits shrank below what the model's
//! one-second step resolves within 15 %.)

use std::time::{Duration, Instant};

use futures::StreamExt;

use backlog_publisher::BacklogTarget;
use capacity_planner::random::ServiceTime;
use capacity_planner::trace::Trace;
use capacity_planner::{Policy, Scenario, run};
use e2e_tests::fixtures::Sqs;

use crate::worker_setup::{SETTLED, STARTED, Setup, request, setup_on};

const MESSAGES: usize = 400;
const TASKS: u64 = 2;
const SLOTS: &str = "4";
const SERVICE_SECONDS: f64 = 0.3;

/// The `q` quantile of `values` (sorted), as the model counts it: the value
/// at rank ⌈q·n⌉.
fn quantile(values: &[f64], q: f64) -> f64 {
    let rank = ((q * values.len() as f64).ceil() as usize).clamp(1, values.len());
    values[rank - 1]
}

/// How far `predicted` is from `measured`, for the report.
fn compared(sqs: Sqs, name: &str, measured: f64, predicted: f64) -> (String, f64) {
    let error = (predicted / measured - 1.0) * 100.0;
    let line =
        format!("{sqs:?} {name}: worker {measured:.2} s, model {predicted:.2} s ({error:+.1} %)");
    (line, error)
}

/// Puts the backlog on the queue (four batches at a time: moto serves
/// requests one by one), and waits until SQS counts all of it visible.
async fn send_backlog(setup: &Setup) {
    let sends = (0..MESSAGES / 10).map(|chunk| {
        let bodies: Vec<String> =
            (0..10).map(|i| request("model.pause", &format!("k{}", chunk * 10 + i))).collect();
        async move { setup.send(&bodies).await }
    });
    futures::stream::iter(sends).buffer_unordered(4).collect::<Vec<()>>().await;
    let (within, every) = (Duration::from_secs(60), Duration::from_millis(100));
    let wanted = (MESSAGES as u64, 0);
    setup.aws.wait_for_counts(&setup.work_url, wanted, within, every).await.unwrap();
}

async fn model_against_worker(sqs: Sqs) {
    let setup = setup_on(sqs, false).await;
    send_backlog(&setup).await;
    // The worker's own defaults otherwise (two pollers, 100 messages in hand), as deployed.
    let env = [("CONSUMER_CONCURRENCY", SLOTS), ("WORKER_POLLERS", "2")];
    // Waits count from the workers' start: their start-up (milliseconds) is in the measure.
    let started = Instant::now();
    let mut workers: Vec<_> = (0..TASKS).map(|_| setup.start(&env)).collect();
    for worker in &workers {
        assert!(worker.wait_for_line("sqs-worker starting", STARTED).await.is_some());
    }
    setup.wait_until_empty().await;
    let delivered = setup.delivered();
    assert_eq!(delivered.len(), MESSAGES, "every message reached the downstream");
    for mut worker in workers.drain(..) {
        worker.signal("TERM").await.unwrap();
        worker.exit(SETTLED).await.unwrap();
    }

    // Measured: each message's wait from the start to the downstream's first receipt of it.
    // SQS can deliver a message twice (at least once); a second delivery is not a wait.
    let mut first = std::collections::BTreeMap::new();
    for received in setup.downstream.received() {
        let at = received.at.duration_since(started).as_secs_f64();
        let key = received.idempotency_key.unwrap_or_default();
        first.entry(key).and_modify(|t: &mut f64| *t = t.min(at)).or_insert(at);
    }
    let drain = first.values().fold(0.0_f64, |a, &b| a.max(b)) + SERVICE_SECONDS;
    let mut waits: Vec<f64> = first.into_values().collect();
    waits.sort_by(f64::total_cmp);
    let duplicates = setup.downstream.received().len() - MESSAGES;

    // Predicted: the whole backlog in second 0, on two tasks that never scale.
    let arrivals = vec![MESSAGES as u32];
    let trace = Trace { name: "burst".into(), arrivals, start: None };
    let mut scenario = Scenario::new(trace, BacklogTarget::new(1_000_000.0).unwrap());
    scenario.initial_tasks = TASKS;
    scenario.scaling.min_tasks = TASKS;
    scenario.scaling.max_tasks = TASKS;
    scenario.workers.slots = SLOTS.parse().unwrap();
    scenario.workers.service = ServiceTime::Fixed(SERVICE_SECONDS);
    let outcome = run(&scenario, Policy::Ours);
    assert_eq!(outcome.processed, MESSAGES as u64);
    // The model counts a wait in [k, k + 1) s as k + 1 (never under-counting a miss): the
    // middle of that second is its estimate.
    let model = |q: f64| outcome.waits.quantile(q).unwrap() as f64 - 0.5;
    let report = [
        compared(sqs, "drain", drain, outcome.last_finish.unwrap()),
        compared(sqs, "p50 wait", quantile(&waits, 0.5), model(0.5)),
        compared(sqs, "p99 wait", quantile(&waits, 0.99), model(0.99)),
    ];
    let text: Vec<&str> = report.iter().map(|(line, _)| line.as_str()).collect();
    println!("{}\n{sqs:?}: {duplicates} duplicate deliveries", text.join("\n"));
    for (line, error) in &report {
        assert!(error.abs() <= 15.0, "more than 15 % off: {line}");
    }
}

// Not on moto: the model is of SQS, which answers a receive in milliseconds; moto serves one
// request at a time and deep-copies each message it hands out, and with 400 visible the workers'
// slots wait on its receives: its drain came out 10-18 % longer than the model's on an idle
// machine (15.0 s against 16.4-17.7 s), more under load. That is moto's speed, not the worker's.

#[tokio::test]
async fn the_model_predicts_the_real_workers_drain_and_waits_within_15_percent_on_localstack() {
    model_against_worker(Sqs::LocalStack).await;
}

#[tokio::test]
async fn the_model_predicts_the_real_workers_drain_and_waits_within_15_percent_on_fauxqs() {
    model_against_worker(Sqs::Fauxqs).await;
}
