use super::*;

fn score(task_minutes: f64, reversals_per_day: f64, seeds_met: u32) -> Score {
    Score { task_minutes, reversals_per_day, seeds_met, min_tasks: 0, target: 150.0 }
}

/// A trace whose alternative costs 100 and whose load costs `costs` at
/// settings 0, 1, 2 (all meeting the SLO unless `missed`).
fn trace(name: &str, costs: [f64; 3], reversals: [f64; 3], missed: Option<usize>) -> TraceResult {
    let load = (0..3)
        .map(|i| score(costs[i], reversals[i], if missed == Some(i) { 4 } else { 5 }))
        .collect();
    TraceResult {
        name: name.to_owned(),
        alternative: Some((Policy::QueueDepth, score(100.0, 0.0, 5))),
        flapping: None,
        load,
        bound: (48.0, 48.0),
        run_minutes: 1_000.0,
    }
}

#[test]
fn the_choice_minimises_the_worst_ratio_among_settings_eligible_everywhere() {
    let a = trace("a", [50.0, 80.0, 85.0], [0.0; 3], None);
    let b = trace("b", [120.0, 85.0, 86.0], [0.0; 3], None);
    // Setting 0 is cheapest on a but worst on b: the worst ratio decides (1.20 vs 0.85 vs 0.86).
    assert_eq!(choose(&[&a, &b], 5), Some(1));
    // Setting 1 misses the SLO on b: only 0 and 2 are eligible on both.
    let b_missed = trace("b", [120.0, 85.0, 86.0], [0.0; 3], Some(1));
    assert_eq!(choose(&[&a, &b_missed], 5), Some(2));
    // Setting 1 flaps past the bound on a.
    let a_flapping = trace("a", [50.0, 80.0, 85.0], [0.0, 49.0, 0.0], None);
    assert_eq!(choose(&[&a_flapping, &b], 5), Some(2));
}

#[test]
fn each_trace_is_judged_at_the_setting_chosen_without_it() {
    let a = trace("a", [50.0, 80.0, 85.0], [0.0; 3], None);
    let b = trace("b", [120.0, 85.0, 86.0], [0.0; 3], None);
    let c = trace("c", [60.0, 90.0, 95.0], [0.0; 3], None);
    let rows = rows(&[a, b, c], 5);
    assert_eq!(rows.iter().map(|r| r.all).collect::<Vec<_>>(), [Some(1); 3]);
    // Without b, setting 0 is best on a and c; b is then judged at 0, its worst.
    assert_eq!(rows[1].held_out, Some(0));
    assert_eq!(rows[0].held_out, Some(1));
    assert_eq!(rows.iter().map(|r| r.own).collect::<Vec<_>>(), [Some(0), Some(1), Some(0)]);
}

#[test]
fn the_bound_is_two_an_hour_and_with_a_task_always_running_the_alternatives_and_one_a_day() {
    let alt = |reversals_per_day| score(100.0, reversals_per_day, 5);
    assert_eq!(bound(Some(&alt(30.0)), 1.0), (48.0, 31.0));
    assert_eq!(bound(Some(&alt(6.0)), 2.0), (48.0, 7.0));
    assert_eq!(bound(Some(&alt(0.0)), 0.5), (48.0, 2.0), "one more in all on half a day");
    assert_eq!(bound(Some(&alt(100.0)), 1.0), (48.0, 48.0));
    assert_eq!(bound(None, 1.0), (48.0, 48.0));
    let mut trace = trace("a", [50.0, 80.0, 85.0], [40.0, 40.0, 0.0], None);
    trace.bound = (48.0, 10.0);
    trace.load[1].min_tasks = 1;
    assert!(trace.eligible(0, 5) && !trace.eligible(1, 5) && trace.eligible(2, 5));
}
