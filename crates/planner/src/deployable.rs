//! Whether a run's fixed settings are ones `template.yaml` can deploy: a
//! deploy line carries them, and `sam deploy` refuses a value outside a
//! parameter's range.

use crate::defaults;
use crate::sim::Scenario;

fn within(name: &str, value: u64, (min, max): (u64, u64), out: &mut Vec<String>) {
    if !(min..=max).contains(&value) {
        out.push(format!("{name}={value} (the template takes {min}–{max})"));
    }
}

/// What the ECS worker's deploy line could not carry as simulated.
pub fn ecs(scenario: &Scenario) -> Vec<String> {
    let mut out = Vec::new();
    common(scenario, &mut out);
    let drain = scenario.workers.drain_seconds.unwrap_or(0);
    within("DrainSeconds", drain, defaults::DRAIN_SECONDS_RANGE, &mut out);
    let visibility = scenario.queue.visibility_timeout;
    within(
        "WorkerVisibilityTimeout",
        visibility,
        defaults::WORKER_VISIBILITY_TIMEOUT_RANGE,
        &mut out,
    );
    let schedule = scenario.publisher.schedule_seconds;
    if !schedule.is_multiple_of(60) {
        out.push(format!(
            "ScheduleRate of {schedule} s (EventBridge's rate() counts whole minutes)"
        ));
    }
    out
}

/// What the Lambda consumer's deploy line could not carry as simulated.
pub fn lambda(scenario: &Scenario) -> Vec<String> {
    let mut out = Vec::new();
    common(scenario, &mut out);
    out
}

fn common(scenario: &Scenario, out: &mut Vec<String>) {
    let receives = u64::from(scenario.queue.max_receive_count);
    within("MaxReceiveCount", receives, defaults::MAX_RECEIVE_COUNT_RANGE, out);
}

/// `ScheduleRate` as the template takes it, when it is not the default.
pub fn schedule_rate(scenario: &Scenario) -> Option<String> {
    let minutes = scenario.publisher.schedule_seconds / 60;
    match minutes {
        1 => None,
        n => Some(format!("ScheduleRate='rate({n} minutes)'")),
    }
}

/// The deploy line to print, or why there is none; then what to add to it.
/// `own` names the stack's parameters no simulation knows.
pub fn block(line: String, problems: &[String], own: &str) -> String {
    if !problems.is_empty() {
        return format!(
            "no deploy line: the template cannot deploy this run as simulated: {}\n",
            problems.join(", ")
        );
    }
    format!(
        "{line}\nnote: --parameter-overrides replaces what samconfig.toml holds: add your stack's \
         own ({own}, …) to the line\n"
    )
}
