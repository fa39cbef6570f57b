use super::*;

/// Fixed here, so that tuning the defaults does not move these figures.
const SETTINGS: LoadSettings = LoadSettings {
    slots: 32,
    processing_seconds: 1.0,
    drain_seconds: 120.0,
    hold_seconds: 300.0,
    target_percent: 80.0,
};

fn counts(visible: u64, in_flight: u64) -> QueueCounts {
    QueueCounts { visible, in_flight, delayed: 0 }
}

/// Target tracking's capacity for a load, as Application Auto Scaling computes it.
fn capacity(tasks: u64, load: f64) -> u64 {
    (tasks as f64 * load / SETTINGS.target_percent - 1e-9).ceil().max(0.0) as u64
}

#[test]
fn a_fleet_that_keeps_up_is_sized_to_what_it_has_in_flight() {
    // 40 messages a second at 1 s each keep 40 of 2 tasks' 64 slots busy: 62.5 %, and at 80 %
    // target tracking keeps the 2 tasks.
    let needed = slots_needed(counts(0, 40), BacklogIncludes::default(), 0.0, 2, SETTINGS);
    let load = scaling_load(needed, 2, SETTINGS, false);
    assert_eq!(load, 62.5);
    assert_eq!(capacity(2, load), 2);
}

#[test]
fn growth_and_the_waiting_backlog_add_the_slots_they_need() {
    let includes = BacklogIncludes::default();
    // 1,200 waiting drain in 120 s with 10 slots; growing 8 a second needs 8 more.
    assert_eq!(slots_needed(counts(1_200, 32), includes, 8.0, 1, SETTINGS), 50.0);
    assert_eq!(
        slots_needed(counts(1_200, 32), includes, -50.0, 1, SETTINGS),
        42.0,
        "shrinking adds nothing"
    );
    let delayed = QueueCounts { delayed: 120, ..counts(0, 0) };
    assert_eq!(slots_needed(delayed, includes, 0.0, 1, SETTINGS), 0.0);
    let with_delayed = BacklogIncludes { delayed: true, in_flight: true };
    assert_eq!(slots_needed(delayed, with_delayed, 0.0, 1, SETTINGS), 1.0);
}

#[test]
fn the_zero_cases() {
    // Empty and no task: 0. Work and no task: at least twice the target.
    assert_eq!(scaling_load(0.0, 0, SETTINGS, true), 0.0);
    assert_eq!(scaling_load(0.5, 0, SETTINGS, false), 160.0);
    assert_eq!(scaling_load(320.0, 0, SETTINGS, false), 1_000.0);
    // Idle tasks: held, one task's worth; released, 0.
    for tasks in [1, 3, 10] {
        assert_eq!(capacity(tasks, scaling_load(0.0, tasks, SETTINGS, true)), 1, "{tasks} tasks");
        assert_eq!(scaling_load(0.0, tasks, SETTINGS, false), 0.0);
    }
}

#[test]
fn the_memory_measures_growth_over_a_recent_gap_only() {
    let includes = BacklogIncludes::default();
    let mut memory = LoadMemory::default();
    // First sample: no growth known; 3,200 waiting need 26.7 slots.
    let first = memory.observe(0.0, counts(3_200, 32), includes, 2, SETTINGS);
    assert!((first - 100.0 * (32.0 + 3_200.0 / 120.0) / 64.0).abs() < 1e-9, "{first}");
    // 60 s later 600 more: 10 a second of growth adds 10 slots.
    let grown = memory.observe(60.0, counts(3_800, 32), includes, 2, SETTINGS);
    assert!((grown - 100.0 * (32.0 + 10.0 + 3_800.0 / 120.0) / 64.0).abs() < 1e-9, "{grown}");
    // After a missed run the gap is too long for a rate.
    let late = memory.observe(
        60.0 + MAX_GROWTH_GAP_SECONDS + 1.0,
        counts(9_800, 32),
        includes,
        2,
        SETTINGS,
    );
    assert!((late - 100.0 * (32.0 + 9_800.0 / 120.0) / 64.0).abs() < 1e-9, "{late}");
}

#[test]
fn the_last_task_is_held_until_nothing_was_seen_for_the_hold() {
    let includes = BacklogIncludes::default();
    let mut memory = LoadMemory::default();
    memory.observe(0.0, counts(0, 3), includes, 1, SETTINGS);
    let held = memory.observe(SETTINGS.hold_seconds - 1.0, counts(0, 0), includes, 1, SETTINGS);
    assert_eq!(capacity(1, held), 1);
    let released = memory.observe(SETTINGS.hold_seconds, counts(0, 0), includes, 1, SETTINGS);
    assert_eq!(released, 0.0);
    // A new environment holds nothing: it never saw work.
    assert_eq!(LoadMemory::default().observe(0.0, counts(0, 0), includes, 1, SETTINGS), 0.0);
}

#[test]
fn a_hold_that_ended_too_soon_doubles_and_one_that_did_not_halves() {
    let includes = BacklogIncludes::default();
    let hold = SETTINGS.hold_seconds;
    let mut memory = LoadMemory::default();
    memory.observe(0.0, counts(0, 1), includes, 1, SETTINGS);
    assert_eq!(memory.observe(hold, counts(0, 0), includes, 1, SETTINGS), 0.0, "let go");
    // Work waits with no task, within one hold of letting it go: the next hold is twice as long.
    memory.observe(1.5 * hold, counts(1, 0), includes, 0, SETTINGS);
    assert_eq!(memory.hold_seconds(SETTINGS), 2.0 * hold);
    let later = 3.0 * hold;
    assert!(memory.observe(later, counts(0, 0), includes, 1, SETTINGS) > 0.0, "still held");
    for round in 0..5 {
        let at = 1e6 * f64::from(round + 1);
        let released = memory.observe(at, counts(0, 0), includes, 1, SETTINGS);
        assert_eq!(released, 0.0);
        memory.observe(at + 60.0, counts(1, 0), includes, 0, SETTINGS);
        memory.observe(at + 120.0, counts(0, 1), includes, 1, SETTINGS);
    }
    assert_eq!(memory.hold_seconds(SETTINGS), 8.0 * hold, "at most three doublings");
    // Let go, and work comes back only after a whole hold: it halves.
    let gone = 1e7;
    memory.observe(gone, counts(0, 0), includes, 1, SETTINGS);
    memory.observe(gone + 9.0 * hold, counts(1, 0), includes, 0, SETTINGS);
    assert_eq!(memory.hold_seconds(SETTINGS), 4.0 * hold);
}

proptest::proptest! {
    #[test]
    fn the_load_is_finite_and_never_zero_with_work(
        visible in 0u64..u64::MAX, in_flight in 0u64..u64::MAX, tasks in 0u64..u64::MAX,
        growth in -1e12f64..1e12, held: bool,
    ) {
        let needed = slots_needed(counts(visible, in_flight), BacklogIncludes::default(), growth, tasks, SETTINGS);
        let load = scaling_load(needed, tasks, SETTINGS, held);
        proptest::prop_assert!(load.is_finite() && load >= 0.0);
        proptest::prop_assert!(crate::metrics::cloudwatch_accepts(load));
        if needed > 0.0 && tasks == 0 {
            proptest::prop_assert!(load > SETTINGS.target_percent);
        }
        if needed > 0.0 {
            proptest::prop_assert!(load > 0.0);
        }
    }
}

#[test]
fn messages_a_worker_holds_beyond_its_slots_are_waiting_not_worked_on() {
    let includes = BacklogIncludes::default();
    // 2 tasks of 32 slots hold 200 (sqs-worker's WORKER_MAX_IN_FLIGHT is 100 a task): 64 are
    // worked on, 136 wait and drain in 120 s.
    let needed = slots_needed(counts(0, 200), includes, 0.0, 2, SETTINGS);
    assert!((needed - (64.0 + 136.0 / 120.0)).abs() < 1e-9, "{needed}");
    // With no task running, everything in flight waits.
    assert_eq!(slots_needed(counts(0, 120), includes, 0.0, 0, SETTINGS), 1.0);
}
