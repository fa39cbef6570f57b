//! Whole runs of the Lambda consumer's model: the event source mapping's
//! documented scaling, the function's deadline and timeout, the downstream's
//! capacity, conservation of messages, and the search.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use backlog_publisher::BacklogTarget;
use capacity_planner::Scenario;
use capacity_planner::lambda::esm::Mode;
use capacity_planner::lambda::run::run;
use capacity_planner::lambda::search::search;
use capacity_planner::random::ServiceTime;
use capacity_planner::recommend::Robustness;
use capacity_planner::trace::{BuiltIn, Trace};

fn scenario(arrivals: Vec<u32>) -> Scenario {
    let trace = Trace { name: "t".into(), arrivals, start: None };
    let mut scenario = Scenario::new(trace, BacklogTarget::new(100.0).unwrap());
    scenario.queue.visibility_timeout = 180;
    scenario
}

fn standard(cap: Option<u32>) -> Mode {
    Mode::Standard { maximum_concurrency: cap }
}

#[test]
fn every_message_is_processed_left_or_dead_lettered_once() {
    for builtin in BuiltIn::ALL {
        let mut scenario = Scenario::new(builtin.trace(3), BacklogTarget::new(100.0).unwrap());
        scenario.queue.poison_fraction = 0.01;
        let outcome = run(&scenario).outcome;
        assert_eq!(
            outcome.processed + outcome.left + outcome.dead_lettered,
            outcome.sent,
            "{builtin:?}"
        );
        assert!(
            outcome.dead_lettered > 0 || outcome.sent < 200,
            "{builtin:?}: poison reaches the DLQ"
        );
        assert_eq!(run(&scenario), run(&scenario), "{builtin:?}: the same seed, the same run");
    }
}

#[test]
fn standard_mode_ramps_from_five_by_at_most_300_a_minute_and_maximum_concurrency_caps_it() {
    // 200,000 messages at once, 10 s each: far more than any concurrency drains in minutes.
    let mut arrivals = vec![0; 600];
    arrivals[0] = 200_000;
    let mut scenario = scenario(arrivals);
    scenario.lambda.invocation.service = ServiceTime::Fixed(10.0);
    scenario.lambda.esm.mode = standard(None);
    let outcome = run(&scenario);
    let limits: Vec<u64> = outcome.outcome.minutes.iter().map(|m| m.desired).collect();
    assert_eq!(limits[0], 5 + 300, "{limits:?}");
    assert_eq!(limits[1], 5 + 600, "{limits:?}");
    assert_eq!(limits[3], 1_000, "the account's concurrency: {limits:?}");
    assert_eq!(outcome.peak_concurrency, 1_000);

    scenario.lambda.esm.mode = standard(Some(20));
    let capped = run(&scenario);
    assert_eq!(capped.peak_concurrency, 20);
    assert!(capped.outcome.minutes.iter().all(|m| m.running <= 20));
}

#[test]
fn provisioned_pollers_start_ready_and_ramp_at_1000_a_minute() {
    let mut arrivals = vec![0; 600];
    arrivals[0] = 200_000;
    let mut scenario = scenario(arrivals);
    scenario.lambda.invocation.service = ServiceTime::Fixed(10.0);
    scenario.lambda.esm.account_concurrency = 10_000;
    scenario.lambda.esm.mode = Mode::Provisioned { minimum_pollers: 10, maximum_pollers: 2_000 };
    let outcome = run(&scenario);
    let limits: Vec<u64> = outcome.outcome.minutes.iter().map(|m| m.desired).collect();
    assert_eq!(limits[0], 100 + 1_000, "{limits:?}");
    assert_eq!(limits[1], 100 + 2_000, "{limits:?}");
}

#[test]
fn a_batching_window_holds_a_short_batch_until_it_ends() {
    let mut arrivals = vec![0; 120];
    arrivals[0] = 3;
    let mut scenario = scenario(arrivals);
    scenario.lambda.invocation.service = ServiceTime::Fixed(0.5);
    scenario.lambda.esm.batch_size = 100;
    scenario.lambda.esm.batching_window = 20;
    let outcome = run(&scenario);
    assert_eq!(outcome.invocations, 1, "one batch of three");
    assert_eq!(outcome.outcome.waits.quantile(1.0), Some(21), "started when the window ended");
    scenario.lambda.esm.batching_window = 0;
    scenario.lambda.esm.batch_size = 10;
    assert_eq!(run(&scenario).outcome.waits.quantile(1.0), Some(1), "no window: at once");
}

#[test]
fn the_deadline_guard_returns_what_it_cannot_finish() {
    // One invocation of 40 one-second messages, one at a time, 30 s timeout, 2 s margin:
    // 28 start; 12 are reported as failures and come back after the visibility timeout.
    let mut arrivals = vec![0; 60];
    arrivals[0] = 40;
    let mut scenario = scenario(arrivals);
    scenario.lambda.invocation.service = ServiceTime::Fixed(1.0);
    scenario.lambda.invocation.slots = 1;
    scenario.lambda.esm.batch_size = 40;
    scenario.lambda.esm.batching_window = 1;
    scenario.lambda.esm.mode = standard(Some(2));
    let outcome = run(&scenario);
    assert_eq!(outcome.outcome.processed, 40);
    assert_eq!(outcome.invocations, 2);
    // Visible again at 180, a batch of 12 after the 1 s window, the last started 11 s in.
    assert_eq!(
        outcome.outcome.waits.quantile(1.0),
        Some(180 + 1 + 12),
        "after the visibility timeout"
    );

    // A request slower than the timeout: the guard cuts every one, nothing is processed, and
    // each message reaches the DLQ after maxReceiveCount receives, counted as missing the SLO.
    scenario.lambda.invocation.service = ServiceTime::Fixed(40.0);
    let stuck = run(&scenario);
    assert_eq!(stuck.outcome.processed, 0);
    assert!(stuck.cut >= 40);
    assert_eq!(stuck.outcome.left + stuck.outcome.dead_lettered, 40);
    assert_eq!(stuck.outcome.slo_misses(), 40);
    assert!(!stuck.outcome.meets_slo(0.99));
}

#[test]
fn a_downstream_past_its_capacity_slows_and_downstream_max_rps_holds_it_back() {
    let mut scenario =
        Scenario::new(BuiltIn::BurstFromIdle.trace(1), BacklogTarget::new(100.0).unwrap());
    scenario.lambda.esm.mode = standard(Some(50));
    let free = run(&scenario);
    scenario.lambda.invocation.downstream.capacity_rps = Some(20.0);
    let overloaded = run(&scenario);
    assert!(overloaded.seconds_over_capacity > 0);
    assert!(overloaded.billed_ms > free.billed_ms, "slower requests bill longer");
    scenario.lambda.esm.mode = standard(Some(2));
    scenario.lambda.invocation.downstream.max_rps_per_instance = Some(10.0);
    let held = run(&scenario);
    assert!(held.downstream_peak_rps <= 20, "2 instances × 10 rps: {}", held.downstream_peak_rps);
    assert_eq!(held.seconds_over_capacity, 0);
}

#[test]
fn the_search_meets_the_slo_within_the_downstreams_capacity_or_says_what_bound() {
    let mut scenario =
        Scenario::new(BuiltIn::BurstFromIdle.trace(1), BacklogTarget::new(100.0).unwrap());
    scenario.queue.visibility_timeout = 180;
    let robustness = Robustness { seeds: 2, margin: 0.8 };
    let found = search(&scenario, robustness);
    let best = found.best.as_ref().unwrap();
    assert_eq!(best.seeds_met, 2);
    assert!(best.worst_wait.unwrap() <= 240);
    // Cheapest: no setting that meets it bills fewer GB-seconds beyond the near-tie.
    for c in found.candidates.iter().filter(|c| c.meets(robustness)) {
        assert!(c.gb_seconds >= best.gb_seconds / 1.05, "{:?} is cheaper", c.setting);
    }

    scenario.lambda.invocation.downstream.capacity_rps = Some(50.0);
    let capped = search(&scenario, robustness);
    let best = capped.best.as_ref().unwrap();
    assert!(best.downstream_peak_rps <= 50, "{}", best.downstream_peak_rps);

    // 30 a second of 20-second messages needs 600 at once; the account allows 50.
    scenario.lambda.invocation.downstream.capacity_rps = None;
    scenario.lambda.invocation.service = ServiceTime::Fixed(20.0);
    scenario.lambda.invocation.slots = 1;
    scenario.lambda.esm.account_concurrency = 50;
    let starved = search(&scenario, Robustness { seeds: 1, margin: 0.8 });
    assert!(starved.best.is_none());
    let why = capacity_planner::lambda::search::binding_limit(&scenario, &starved);
    assert!(why.contains("account's concurrency (50)"), "{why}");
}
