//! `ScalingLoad`: the capacity the queue needs, as a percentage of the
//! capacity running.
//!
//! Backlog per task sees only how many messages wait, so its right target
//! depends on the traffic: the same service needs 100 on one queue and 7,500
//! on another. The load is measured in the consumer's own units — message
//! slots busy for a second — and so one target fits every trace:
//!
//! - **keeping up**: the messages in flight are what the arrival rate keeps
//!   busy (Little's law), so a fleet that keeps up is sized to them;
//! - **growing**: when the backlog grew since the previous sample, the
//!   arrivals outrun the fleet by that rate, and each extra message a second
//!   needs `AVG_PROCESSING_SECONDS` of a slot;
//! - **draining**: the visible backlog needs the slots that clear it within
//!   `LOAD_DRAIN_SECONDS`.
//!
//! Target tracking's capacity is ⌈running × load ÷ target⌉, so one scaling
//! action reaches the capacity needed. Two guards keep zero right: with no
//! task and work waiting the load is never below twice the target (the zero
//! guard of [`crate::backlog::backlog_per_task`]), and while there is work,
//! or until nothing has been seen for `LOAD_HOLD_SECONDS`, it never drops
//! below one held task's worth ([`HOLD_FRACTION`]): a trough's momentary
//! empty queue does not stop the last task and pay a start-up for the next
//! message. docs/deploy.md says what it means and how the template scales on it.

use crate::backlog::{BacklogIncludes, QueueCounts};
use backpressure_core::config::variables::{
    CONSUMER_CONCURRENCY, LOAD_DRAIN_SECONDS, LOAD_HOLD_SECONDS,
};

/// A sample older than this, seconds, gives no growth rate: the publisher
/// missed a run, and a rate over a long gap is not today's.
pub const MAX_GROWTH_GAP_SECONDS: f64 = 150.0;

/// How the load is computed (`CONSUMER_CONCURRENCY`, `AVG_PROCESSING_SECONDS`,
/// `LOAD_DRAIN_SECONDS`, `LOAD_HOLD_SECONDS`, `TARGET_LOAD_PERCENT`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoadSettings {
    /// Messages one task processes at once.
    pub slots: u32,
    /// Mean seconds to process one message.
    pub processing_seconds: f64,
    /// Seconds in which the visible backlog should be drained.
    pub drain_seconds: f64,
    /// Seconds without work before the load lets the last task go.
    pub hold_seconds: f64,
    /// The target tracking policy's target, percent.
    pub target_percent: f64,
}

impl LoadSettings {
    /// What the template deploys by default.
    pub const DEFAULT: Self = Self {
        slots: CONSUMER_CONCURRENCY.whole_default() as u32,
        processing_seconds: 1.0,
        drain_seconds: LOAD_DRAIN_SECONDS.whole_default() as f64,
        hold_seconds: LOAD_HOLD_SECONDS.whole_default() as f64,
        target_percent: 120.0,
    };
}

/// Slots needed now: the messages in flight that the running slots can be
/// working on, plus the growth since the previous sample (messages a second ×
/// seconds each), plus what drains the waiting messages in time. Waiting are
/// the visible messages, delayed ones when `BACKLOG_INCLUDES` has them, and
/// the in-flight messages beyond `tasks` × slots: a worker receives more than
/// it has slots (sqs-worker holds up to `WORKER_MAX_IN_FLIGHT`), and a
/// message held is waiting, not worked on.
pub fn slots_needed(
    counts: QueueCounts,
    includes: BacklogIncludes,
    growth_per_second: f64,
    tasks: u64,
    settings: LoadSettings,
) -> f64 {
    let running_slots = tasks.saturating_mul(u64::from(settings.slots));
    let working = counts.in_flight.min(running_slots);
    let held = counts.in_flight - working;
    let waiting =
        BacklogIncludes { in_flight: false, ..includes }.backlog(counts) as f64 + held as f64;
    let growing = growth_per_second.max(0.0) * settings.processing_seconds;
    working as f64 + growing + waiting * settings.processing_seconds / settings.drain_seconds
}

/// How many times a hold may double ([`LoadMemory`]): up to 8 ×
/// `LOAD_HOLD_SECONDS` (4 hours at the default 30 minutes).
pub const HOLD_DOUBLINGS: u32 = 3;

/// What one target's earlier samples left behind, for the growth rate and
/// the hold. The publisher keeps one per target in its execution
/// environment; a new environment starts empty, which only delays the
/// growth term by one sample and shortens a hold already under way.
///
/// The hold has hysteresis. A sample a minute sees a trickle's messages
/// only now and then, so a hold can end while the trickle goes on: the last
/// task stops, the next message starts one, and the service flaps. So when
/// work waits with no task running within one hold of the last task being
/// let go, the next hold is twice as long (at most [`HOLD_DOUBLINGS`] times);
/// when work comes back later than that, it halves again.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LoadMemory {
    previous: Option<(f64, u64)>,
    last_work: Option<f64>,
    /// When a hold last ran out with tasks running.
    released: Option<f64>,
    doublings: u32,
}

impl LoadMemory {
    /// The load for a sample taken at `at` (seconds on any steady clock)
    /// with `tasks` running; remembers it for the next.
    pub fn observe(
        &mut self,
        at: f64,
        counts: QueueCounts,
        includes: BacklogIncludes,
        tasks: u64,
        settings: LoadSettings,
    ) -> f64 {
        let total = counts.visible.saturating_add(counts.in_flight);
        let growth = match self.previous {
            Some((then, before)) if at > then && at - then <= MAX_GROWTH_GAP_SECONDS => {
                (total as f64 - before as f64) / (at - then)
            }
            _ => 0.0,
        };
        self.previous = Some((at, total));
        let needed = slots_needed(counts, includes, growth, tasks, settings);
        let hold = self.hold_seconds(settings);
        if needed > 0.0 {
            match (tasks, self.released.take()) {
                (0, Some(released)) if at - released < hold => {
                    self.doublings = (self.doublings + 1).min(HOLD_DOUBLINGS);
                }
                (0, Some(_)) => self.doublings = self.doublings.saturating_sub(1),
                _ => {}
            }
            self.last_work = Some(at);
        }
        let held = self.last_work.is_some_and(|seen| at - seen < hold);
        if needed <= 0.0 && tasks > 0 && !held && self.last_work.is_some() {
            self.released.get_or_insert(at);
        }
        scaling_load(needed, tasks, settings, held)
    }

    /// The hold now: `LOAD_HOLD_SECONDS`, doubled for each hold that ended too soon.
    pub fn hold_seconds(&self, settings: LoadSettings) -> f64 {
        settings.hold_seconds * f64::from(1_u32 << self.doublings)
    }
}

/// One task's load while it is held, as a fraction of the target: below the
/// target (no scale-out) and above the template's scale-in threshold (0.45),
/// so one task stays, and two held tasks (0.375 each) come down to one.
pub const HOLD_FRACTION: f64 = 0.75;

/// The published load, percent: 100 × needed ÷ (tasks × slots), with the
/// guards at zero. While there is work, or `held` without it, the load is
/// never below one held task's worth ([`HOLD_FRACTION`] × target ÷ tasks,
/// which target tracking turns into one task): the last task stays while
/// messages trickle in.
pub fn scaling_load(needed_slots: f64, tasks: u64, settings: LoadSettings, held: bool) -> f64 {
    let target = settings.target_percent;
    let floor = HOLD_FRACTION * target;
    let one_task = 100.0 * needed_slots / f64::from(settings.slots.max(1));
    match (needed_slots > 0.0, tasks) {
        (false, 0) => 0.0,
        (false, tasks) if held => floor / tasks as f64,
        (false, _) => 0.0,
        (true, 0) => one_task.max(target * crate::backlog::ZERO_TASK_TARGET_MULTIPLIER),
        (true, tasks) => one_task.max(floor) / tasks as f64,
    }
}

#[cfg(test)]
mod tests {
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

    /// docs/publisher.md's "ScalingLoad worked through", at the template's defaults.
    #[test]
    fn the_documented_example_publishes_what_the_docs_say() {
        let counts = QueueCounts { visible: 200, in_flight: 100, delayed: 50 };
        let with_delayed = BacklogIncludes { in_flight: false, delayed: true };
        let needed = slots_needed(counts, with_delayed, 0.0, 4, LoadSettings::DEFAULT);
        assert!((needed - 101.0417).abs() < 1e-4, "{needed}");
        let load = scaling_load(needed, 4, LoadSettings::DEFAULT, true);
        assert_eq!(format!("{load:.3}"), "78.939");
        let visible_only = BacklogIncludes { in_flight: false, delayed: false };
        let needed = slots_needed(counts, visible_only, 0.0, 4, LoadSettings::DEFAULT);
        let load = scaling_load(needed, 4, LoadSettings::DEFAULT, true);
        assert_eq!(format!("{load:.3}"), "78.776");
        let trickle = scaling_load(0.0, 3, LoadSettings::DEFAULT, true);
        assert_eq!(trickle, 30.0);
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
            assert_eq!(
                capacity(tasks, scaling_load(0.0, tasks, SETTINGS, true)),
                1,
                "{tasks} tasks"
            );
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
}
