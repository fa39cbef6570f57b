//! What `recommend --scaling-target existing` prints: the service on its
//! CPU policy alone, the ScalingLoad policy to add beside it, what that
//! changes, and the two commands that add it.

use std::fmt::Write;

use crate::deployable::{METRIC_COMMAND, existing_deploy_line, put_scaling_policy};
use crate::existing::{Change, Existing};
use crate::recommend::{Candidate, all_targets_tie, same_cost};
use crate::report::recommend::past_reversal_limit;
use crate::report::{header, row};
use crate::sim::Scenario;
use crate::sim::policy::Policy;

/// What a first deploy for a service that keeps its own target needs, and
/// what the stack leaves as it is.
pub const EXISTING_FIRST_DEPLOY: &str = "a first deploy also needs EcsClusterName and \
     EcsServiceName (your service), and ExistingWorkQueueArn for a queue you already have; \
     the stack does not touch your service's scalable target: MinTasks, MaxTasks and the CPU \
     policy stay yours. STACK, CLUSTER and SERVICE are your stack's name, EcsClusterName and \
     EcsServiceName";

/// The table's name for the CPU policy alone.
pub const CPU_ALONE: &str = "CPU alone";

/// The table's name for the load at `target` beside the CPU policy.
pub fn beside_label(target: f64) -> String {
    format!("CPU + load {target} %")
}

/// The answer's heading: the service's own policy, the grid searched beside
/// it, the seeds and the SLO.
fn existing_header(scenario: &Scenario, found: &Existing) -> String {
    let (slo, r, cpu) = (scenario.slo, found.beside.robustness, found.cpu);
    let targets = Policy::Load.targets();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "### {}: the service's own target (MinTasks {}, MaxTasks {}) with its CPU policy \
         (TargetValue {} %; a task {} % idle and {:.2} % more a message in work; ScaleInCooldown \
         {} s), and a ScalingLoad policy added beside it: {} TargetLoadPercent values from {} to \
         {}, each on {} seed(s); SLO {:.0} % ≤ {} s, met only with p{:.0} ≤ {:.0} s on every seed",
        scenario.trace.name,
        scenario.scaling.min_tasks,
        scenario.scaling.max_tasks,
        cpu.target_percent,
        cpu.idle_percent,
        cpu.percent_per_message,
        cpu.scale_in_cooldown,
        targets.len(),
        targets[0],
        targets[targets.len() - 1],
        r.seeds,
        slo.quantile * 100.0,
        slo.latency_seconds,
        slo.quantile * 100.0,
        r.margin * slo.latency_seconds as f64,
    );
    out
}

/// The whole answer for one trace.
pub fn existing(scenario: &Scenario, found: &Existing) -> String {
    let (slo, r) = (scenario.slo, found.beside.robustness);
    let mut out = existing_header(scenario, found);
    out.push_str(
        "Application Auto Scaling scales the target out when either policy asks, and in only \
         when both are ready to.\n\n",
    );
    let _ = writeln!(
        out,
        "{CPU_ALONE} (as it scales today): {}",
        describe(scenario, &found.cpu_alone, r.seeds)
    );
    let shown = match (&found.beside.best, &found.beside.closest) {
        (Some(best), _) => {
            let _ = writeln!(
                out,
                "add beside it: TargetLoadPercent={}: {}",
                best.target.get(),
                describe(scenario, best, r.seeds)
            );
            out.push_str(&change_line(&Change::of(&found.cpu_alone, best)));
            if let Some(flapping) = &found.beside.cheapest_flapping {
                out.push_str(&past_reversal_limit("the load", "TargetLoadPercent", flapping));
            }
            Some(best)
        }
        (None, Some(closest)) => {
            let _ = writeln!(
                out,
                "no TargetLoadPercent beside the CPU policy meets the SLO; closest: \
                 TargetLoadPercent={}: {}",
                closest.target.get(),
                describe(scenario, closest, r.seeds)
            );
            let _ = writeln!(out, "{}", binding_limit(scenario, closest, r.seeds));
            Some(closest)
        }
        (None, None) => None,
    };
    for note in run_notes(scenario, found) {
        let _ = writeln!(out, "note: {note}");
    }
    if let Some(shown) = shown {
        let _ = writeln!(out, "\ntheir runs on seed {} (the picture's):", scenario.seed);
        out.push_str(&header("setting"));
        out.push_str(&row(CPU_ALONE, &found.cpu_alone.outcome, slo.quantile));
        out.push_str(&row(&beside_label(shown.target.get()), &shown.outcome, slo.quantile));
    }
    if let Some(best) = &found.beside.best {
        let _ = write!(
            out,
            "\nTo add it: the publisher for your service (ScalingTarget=existing applies only \
             these parameters):\n  {}\nthen the policy beside your CPU policy, on the metric the \
             stack's ScalingMetric output names:\n  {METRIC_COMMAND}\n  {}\nnote: {}\n",
            existing_deploy_line(scenario, best.target.get()),
            put_scaling_policy(best.target.get()),
            EXISTING_FIRST_DEPLOY,
        );
    }
    out
}

/// A setting's figures over the seeds, as the text prints them.
fn describe(scenario: &Scenario, c: &Candidate, seeds: u32) -> String {
    format!(
        "{:.1} task-min, {:.1} late messages, {:.1} reversals a day (means of {seeds} seeds), \
         worst p{:.0} {}, met on {} of {seeds} seeds",
        c.task_minutes,
        c.late,
        c.reversals_per_day,
        scenario.slo.quantile * 100.0,
        c.worst_wait.map_or("-".to_owned(), |w| format!("{w} s")),
        c.seeds_met,
    )
}

/// What adding the policy changes, in the figures printed above.
pub fn change_line(change: &Change) -> String {
    let (before, after) = change.task_minutes;
    let ratio = if before > 0.0 { format!(", {:.2} ×", after / before) } else { String::new() };
    format!(
        "against {CPU_ALONE}: task-min {before:.1} → {after:.1} ({:+.1}{ratio}), late messages \
         {:.1} → {:.1}, reversals a day {:.1} → {:.1}\n",
        after - before,
        change.late.0,
        change.late.1,
        change.reversals_per_day.0,
        change.reversals_per_day.1,
    )
}

/// What the text prints as `note:` about the runs, and the JSON's `notes`
/// after the first-deploy one: why the CPU policy cannot scale out, what
/// adding the policy buys when the service already meets the SLO, and
/// whether the trace tells the targets apart.
pub fn run_notes(scenario: &Scenario, found: &Existing) -> Vec<String> {
    let (cpu, slots) = (found.cpu, scenario.workers.slots);
    let mut notes = Vec::new();
    let ceiling = cpu.task_percent(slots as usize);
    if ceiling <= cpu.target_percent {
        notes.push(format!(
            "a task with all {slots} slots busy uses at most {ceiling:.1} % CPU, not above the CPU \
             policy's target of {} %: on its own the CPU policy never scales out, only in (to \
             MinTasks {})",
            cpu.target_percent, scenario.scaling.min_tasks
        ));
    }
    let Some(best) = &found.beside.best else { return notes };
    let alone = &found.cpu_alone;
    let change = Change::of(alone, best);
    let same = |(a, b): (f64, f64)| same_cost(a, b);
    let unchanged =
        same(change.task_minutes) && same(change.late) && same(change.reversals_per_day);
    if alone.seeds_met == found.beside.robustness.seeds.max(1) {
        notes.push(if unchanged {
            "adding ScalingLoad does not change the runs on this trace: the service already meets \
             the SLO as it scales today, and the policy guards against traffic its CPU does not \
             follow"
                .to_owned()
        } else {
            format!(
                "the service already meets the SLO as it scales today; beside its CPU policy, \
                 ScalingLoad changes the task-minutes by {:+.1}",
                change.task_minutes.1 - change.task_minutes.0
            )
        });
    }
    notes.extend(all_targets_tie(&found.beside, "TargetLoadPercent"));
    notes
}

/// What kept the closest setting beside the CPU policy from the SLO.
pub fn binding_limit(scenario: &Scenario, closest: &Candidate, seeds: u32) -> String {
    let (min, max) = (scenario.scaling.min_tasks, scenario.scaling.max_tasks);
    if min == 0 && closest.outcome.worst_zero_to_first_task() == Some(None) {
        return "at MinTasks 0 neither policy starts a task from zero (the wake-up step comes only \
                with the stack's own target): give your target's MinCapacity with --min-tasks, 1 \
                or more"
            .to_owned();
    }
    if closest.seeds_at_max > 0 {
        return format!(
            "peak reached MaxTasks={max} on {} of {seeds} seeds: raise your target's MaxCapacity \
             (--max-tasks), or shorten the service time",
            closest.seeds_at_max
        );
    }
    "every message waits at least the start-up and the alarms' minutes: raise your target's \
     MinCapacity (--min-tasks), or loosen --margin or the SLO"
        .to_owned()
}
