//! Whole runs of the simulation: the AWS worked example through the loop,
//! determinism, the failure patterns the anchors' policies show and ours
//! avoids, and conservation of messages.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use backlog_publisher::BacklogTarget;
use backlog_publisher::backlog::TaskCountMode;
use capacity_planner::random::ServiceTime;
use capacity_planner::sim::autoscaling::ZeroCapacity;
use capacity_planner::stats::Outcome;
use capacity_planner::trace::{BuiltIn, Trace};
use capacity_planner::{Consumer, Policy, Scenario, run};

fn target(value: f64) -> BacklogTarget {
    BacklogTarget::new(value).unwrap()
}

/// A built-in trace on a fleet of slow tasks (4 messages at once, up to 20
/// tasks), where every trace needs many tasks and the policies differ most.
fn scenario(builtin: BuiltIn) -> Scenario {
    let mut scenario = Scenario::new(builtin.trace(1), target(100.0));
    scenario.initial_tasks = builtin.initial_tasks();
    scenario.workers.slots = 4;
    scenario.scaling.max_tasks = 20;
    scenario
}

fn run_all(scenario: &Scenario) -> Vec<Outcome> {
    Policy::ALL.iter().map(|&policy| run(scenario, policy)).collect()
}

fn outcome(outcomes: &[Outcome], policy: Policy) -> &Outcome {
    outcomes.iter().find(|o| o.consumer == Consumer::Ecs(policy)).unwrap()
}

#[test]
fn the_aws_worked_example_runs_through_the_whole_loop() {
    // 1,510 messages at once; 10 tasks of one slot each hold one message for
    // the whole run, so 1,500 stay visible: backlog per task 150 by core's
    // maths, target 100. The first evaluation with three breaching minutes
    // (second 180) sets 15 tasks.
    let mut arrivals = vec![0; 600];
    arrivals[0] = 1_510;
    let mut scenario =
        Scenario::new(Trace { name: "aws-example".into(), arrivals, start: None }, target(100.0));
    scenario.initial_tasks = 10;
    scenario.tail_seconds = 0;
    scenario.workers.slots = 1;
    scenario.workers.service = ServiceTime::Fixed(3_600.0);
    scenario.scaling.max_tasks = 50;
    scenario.publisher.duplicate_probability = 0.0;
    let outcome = run(&scenario, Policy::Ours);
    let first = outcome.actions.first().unwrap();
    assert_eq!((first.at, first.from, first.to), (180, 10, 15));
    assert_eq!(outcome.minutes[0].metric, Some(150.0));
}

#[test]
fn a_seed_gives_the_same_run_and_another_seed_a_different_one() {
    let mut scenario = scenario(BuiltIn::BurstFromIdle);
    scenario.queue.poison_fraction = 0.01;
    for policy in Policy::ALL {
        assert_eq!(run(&scenario, policy), run(&scenario, policy), "{policy:?}");
    }
    let mut other = scenario.clone();
    other.seed = 2;
    other.trace = BuiltIn::BurstFromIdle.trace(2);
    assert_ne!(run(&scenario, Policy::Ours), run(&other, Policy::Ours));
}

#[test]
fn messages_are_conserved_through_poison_redelivery_and_killed_tasks() {
    let mut scenario = scenario(BuiltIn::SpikeOnWarmFleet);
    scenario.queue.poison_fraction = 0.02;
    scenario.queue.max_receive_count = 3;
    scenario.queue.visibility_timeout = 30;
    scenario.workers.drain_seconds = None;
    scenario.workers.idle_first = false;
    for outcome in run_all(&scenario) {
        assert_eq!(
            outcome.sent,
            outcome.processed + outcome.dead_lettered + outcome.left,
            "{:?}: processed {}, DLQ {}, left {}",
            outcome.consumer,
            outcome.processed,
            outcome.dead_lettered,
            outcome.left
        );
    }
    let ours = run(&scenario, Policy::Ours);
    assert!(ours.processed > 0 && ours.dead_lettered > 0, "{ours:?}");
    assert_eq!(
        ours.left, 0,
        "ours drains the spike and the poison reaches the DLQ within the tail"
    );
}

#[test]
fn a_trickle_at_zero_tasks_stalls_the_anchors_and_not_ours() {
    for zero_capacity in [ZeroCapacity::Stay, ZeroCapacity::AsOne] {
        let mut scenario = scenario(BuiltIn::SparseTrickle);
        scenario.scaling.zero_capacity = zero_capacity;
        let outcomes = run_all(&scenario);
        let ours = outcome(&outcomes, Policy::Ours);
        assert_eq!((ours.processed, ours.left), (ours.sent, 0), "{zero_capacity:?}");
        // One alarm minute, the evaluation after it, and the task's start-up.
        let worst = ours.worst_zero_to_first_task().unwrap().unwrap();
        assert!(worst < 300, "{zero_capacity:?}: {worst} s to the first task");
        // 0 published (seed 004), the point dropped (metric math), or one
        // message ÷ 1 = 1, far below the target (Copilot): never a task.
        for policy in [Policy::ZeroWhenNoTasks, Policy::MetricMathDropsZero, Policy::Copilot] {
            let stalled = outcome(&outcomes, policy);
            assert_eq!(
                stalled.worst_zero_to_first_task(),
                Some(None),
                "{policy:?} {zero_capacity:?}"
            );
            assert_eq!((stalled.processed, stalled.left), (0, stalled.sent), "{policy:?}");
            assert_eq!(stalled.slo_misses(), stalled.sent, "{policy:?}");
        }
    }
}

#[test]
fn a_burst_from_idle_wakes_ours_and_stalls_the_anchors_that_cannot_leave_zero() {
    let outcomes = run_all(&scenario(BuiltIn::BurstFromIdle));
    let ours = outcome(&outcomes, Policy::Ours);
    assert!(ours.meets_slo(0.99), "{} late", ours.slo_misses());
    for policy in
        [Policy::QueueDepth, Policy::ZeroWhenNoTasks, Policy::MetricMathDropsZero, Policy::Copilot]
    {
        let stalled = outcome(&outcomes, policy);
        assert_eq!(stalled.processed, 0, "{policy:?}");
        assert!(stalled.actions.is_empty(), "{policy:?}: {:?}", stalled.actions);
    }
}

#[test]
fn sum_counts_every_sample_and_scales_several_times_too_far() {
    // Six samples a minute: at zero tasks ours publishes 2 × target per
    // sample, so a Sum reads 12 × target.
    let outcomes = run_all(&scenario(BuiltIn::SparseTrickle));
    let ours = outcome(&outcomes, Policy::Ours);
    let sum = outcome(&outcomes, Policy::SumStatistic);
    // Minutes that ended with a message waiting and no task; their sample
    // may have come before the message (0).
    let zero_minutes = |o: &Outcome| -> Vec<f64> {
        let waiting = o.minutes.iter().filter(|m| m.running == 0 && m.visible > 0);
        waiting.filter_map(|m| m.metric).filter(|&m| m > 0.0).collect()
    };
    assert!(!zero_minutes(ours).is_empty());
    assert!(zero_minutes(ours).iter().all(|&m| m == 200.0), "{:?}", zero_minutes(ours));
    assert!(zero_minutes(sum).iter().any(|&m| m >= 1_200.0), "{:?}", zero_minutes(sum));
    assert!(
        sum.peak_desired() >= 3 * ours.peak_desired(),
        "{} vs {}",
        sum.peak_desired(),
        ours.peak_desired()
    );
    assert!(
        sum.task_seconds >= 3 * ours.task_seconds,
        "{} vs {}",
        sum.task_minutes(),
        ours.task_minutes()
    );
}

#[test]
fn depth_alone_scales_far_past_what_backlog_per_task_needs() {
    // A warm fleet kept off zero, so that only the metric differs: queue
    // depth grows the capacity by R × depth ÷ T, as if each task had the
    // whole queue to itself.
    let mut scenario = scenario(BuiltIn::Steady);
    scenario.scaling.min_tasks = 5;
    scenario.scaling.max_tasks = 100;
    let outcomes = run_all(&scenario);
    let ours = outcome(&outcomes, Policy::Ours);
    let depth = outcome(&outcomes, Policy::QueueDepth);
    assert!(ours.meets_slo(0.99) && depth.meets_slo(0.99));
    assert!(
        depth.peak_desired() >= 2 * ours.peak_desired(),
        "{} vs {}",
        depth.peak_desired(),
        ours.peak_desired()
    );
    assert!(
        depth.task_seconds * 2 >= ours.task_seconds * 3,
        "depth {:.0} task-min, ours {:.0}",
        depth.task_minutes(),
        ours.task_minutes()
    );
}

#[test]
fn counting_pending_tasks_keeps_a_trickle_to_one_task() {
    // With TASK_COUNT=running, the zero guard's 2 × target is still published
    // while the woken task starts; once it runs, target tracking reads three
    // such minutes and computes ⌈1 × 200 ÷ 100⌉ = 2. Counting the pending
    // task ends the guard as soon as the task is launched.
    let mut scenario = scenario(BuiltIn::SparseTrickle);
    let running = run(&scenario, Policy::Ours);
    scenario.publisher.backlog.task_count = TaskCountMode::RunningPlusPending;
    let pending = run(&scenario, Policy::Ours);
    assert_eq!(running.peak_desired(), 2);
    assert_eq!(pending.peak_desired(), 1);
    assert!(pending.task_seconds < running.task_seconds);
    assert_eq!((pending.processed, pending.left), (pending.sent, 0));
}

#[test]
fn a_wake_up_that_never_came_is_one_whose_messages_are_still_there() {
    // On evening-surge at the defaults, metric math scales to zero while its last task
    // drains the messages it holds; that spell is no wait for a task.
    let mut scenario = Scenario::new(BuiltIn::EveningSurge.trace(1), target(100.0));
    scenario.initial_tasks = BuiltIn::EveningSurge.initial_tasks();
    for outcome in run_all(&scenario) {
        if outcome.worst_zero_to_first_task() == Some(None) {
            assert!(
                outcome.left > 0,
                "{}: never woke, yet nothing was left",
                outcome.consumer.label()
            );
        }
    }
}
