//! The capacity planner's model against the real thing: two sqs-worker
//! processes of 4 messages at once drain a burst from moto into a downstream
//! taking 300 ms a message, and `simulate`'s model, given the same arrivals,
//! tasks and service time, predicts the drain time and the p50/p99 wait
//! within 15 %.

use std::time::{Duration, Instant};

use backlog_publisher::BacklogTarget;
use capacity_planner::random::ServiceTime;
use capacity_planner::trace::Trace;
use capacity_planner::{Policy, Scenario, run};

use crate::worker_setup::{SETTLED, STARTED, setup, start_worker};

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
fn compared(name: &str, measured: f64, predicted: f64) -> (String, f64) {
    let error = (predicted / measured - 1.0) * 100.0;
    (format!("{name}: worker {measured:.2} s, model {predicted:.2} s ({error:+.1} %)"), error)
}

#[tokio::test]
#[ignore = "the model is 16-18 % short of the real worker's drain (issue 25, part 8, open); run with --run-ignored"]
async fn the_model_predicts_the_real_workers_drain_and_waits_within_15_percent() {
    let setup = setup().await;
    let downstream = setup.downstream.url();
    let env = [
        ("CONSUMER_CONCURRENCY", SLOTS),
        ("WORKER_MAX_IN_FLIGHT", "20"),
        ("WORKER_POLLERS", "2"),
        ("RETRY_BASE_SECONDS", "0"),
    ];
    let mut workers: Vec<_> = (0..TASKS)
        .map(|_| start_worker(&setup.work_url, &setup.quarantine_url, &downstream, &env))
        .collect();
    for worker in &workers {
        assert!(worker.wait_for_line("sqs-worker starting", STARTED).await.is_some());
    }
    // Both are polling the empty queue before the burst, as the model's running tasks.
    tokio::time::sleep(Duration::from_secs(2)).await;

    let started = Instant::now();
    let mut sent_at = Vec::with_capacity(MESSAGES);
    for chunk in 0..MESSAGES / 10 {
        let bodies: Vec<String> = (0..10)
            .map(|i| crate::worker_setup::request("model.pause", &format!("k{}", chunk * 10 + i)))
            .collect();
        setup.send(&bodies).await;
        sent_at.extend(std::iter::repeat_n(started.elapsed().as_secs_f64(), 10));
    }
    setup.wait_until_empty().await;
    let received = setup.downstream.received();
    assert_eq!(received.len(), MESSAGES, "each message once");
    for mut worker in workers.drain(..) {
        worker.signal("TERM").await.unwrap();
        worker.exit(SETTLED).await.unwrap();
    }

    // Measured: each message's wait from its send to the downstream's receipt.
    let mut waits: Vec<f64> = received
        .iter()
        .map(|r| {
            let key = r.idempotency_key.as_deref().unwrap_or_default();
            let index: usize = key.trim_start_matches('k').parse().unwrap();
            (r.at.duration_since(started).as_secs_f64() - sent_at[index]).max(0.0)
        })
        .collect();
    waits.sort_by(f64::total_cmp);
    let last =
        received.iter().map(|r| r.at.duration_since(started).as_secs_f64()).fold(0.0, f64::max);
    let drain = last + SERVICE_SECONDS;

    // Predicted: the same arrivals, per second, on two tasks that never scale.
    let mut arrivals = vec![0_u32; 120];
    for &at in &sent_at {
        arrivals[at as usize] += 1;
    }
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
    // middle of that second is its estimate. Its last message arrives in the last second of
    // sends and starts after the longest wait; the drain ends one service time later.
    let model = |q: f64| outcome.waits.quantile(q).unwrap() as f64 - 0.5;
    let last_second = sent_at.iter().fold(0.0_f64, |a, &b| a.max(b)).floor();
    let report = [
        compared("drain", drain, last_second + model(1.0) + SERVICE_SECONDS),
        compared("p50 wait", quantile(&waits, 0.5), model(0.5)),
        compared("p99 wait", quantile(&waits, 0.99), model(0.99)),
    ];
    let text: Vec<&str> = report.iter().map(|(line, _)| line.as_str()).collect();
    println!("{}", text.join("\n"));
    for (line, error) in &report {
        assert!(error.abs() <= 15.0, "more than 15 % off: {line}");
    }
}
