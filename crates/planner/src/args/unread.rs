//! The flags a run would not read, refused with what to give instead: the
//! other consumer's (clap's groups `ecs` and `lambda`) and what `recommend`
//! and `cross-validate` choose themselves. Clap's `conflicts_with` and
//! `requires` look only at which flags were given, never at a value, so they
//! cannot refuse the `ecs` group under `--consumer lambda`, or the `lambda`
//! group where `--consumer` is ecs by default: that is decided here.

use std::path::PathBuf;

use clap::ArgMatches;
use clap::parser::ValueSource;

use super::{ConsumerKind, ScalingTargetKind};
use crate::trace::BuiltIn;

const CROSS_VALIDATE_LAMBDA: &str = "cross-validate chooses the ECS worker's scaling defaults, \
    which the Lambda consumer does not have: use `simulate recommend --consumer lambda`";
const ONE_TRACE: &str = "cross-validate leaves one trace out at a time: give --trace at least \
    twice (or none, for every built-in trace)";
const CROSS_VALIDATE_TARGET: &str =
    "cross-validate runs each alternative at its own best target: --target is not read";
const RECOMMEND_TARGET: &str = "recommend searches the template's signal, the load \
    (TargetLoadPercent × MinTasks); --target is backlog per task's: `simulate compare \
    --best-settings` finds that policy's best target";
const NO_POLICIES: &str = "--best-settings runs each ECS scaling policy at its own setting; the \
    Lambda consumer has no policies: use `simulate recommend --consumer lambda`";

/// Why the command line of subcommand `command` is refused, if it is.
pub(super) fn refusal(command: &str, sub: &ArgMatches) -> Option<String> {
    // Only the subcommands that run a scenario have a consumer.
    let consumer = *sub.try_get_one::<ConsumerKind>("consumer").ok().flatten()?;
    cross_validate(command, consumer, sub)
        .or_else(|| existing_target(command, consumer, sub))
        .or_else(|| chosen(command, consumer, sub))
        .or_else(|| other_consumers(consumer, sub))
}

/// Whether `recommend` was given `--scaling-target existing`.
fn on_existing_target(sub: &ArgMatches) -> bool {
    sub.try_get_one::<ScalingTargetKind>("scaling_target").ok().flatten()
        == Some(&ScalingTargetKind::Existing)
}

/// The CPU policy's flags describe a service's own target: refused without it, and for the
/// Lambda consumer, which has no target.
fn existing_target(command: &str, consumer: ConsumerKind, sub: &ArgMatches) -> Option<String> {
    if command != "recommend" {
        return None;
    }
    if on_existing_target(sub) && consumer == ConsumerKind::Lambda {
        return Some(
            "--scaling-target existing is an ECS service's own scalable target; the Lambda \
             consumer has none (its event source mapping scales it): drop it, or use --consumer ecs"
                .to_owned(),
        );
    }
    let cpu = ["cpu_target", "cpu_idle_percent", "cpu_per_message", "cpu_scale_in_cooldown"];
    let id = cpu.into_iter().find(|id| given(sub, id))?;
    (!on_existing_target(sub)).then(|| {
        format!(
            "{} describes the CPU policy of a service that keeps its own scalable target: add \
             --scaling-target existing",
            long(id)
        )
    })
}

fn given(sub: &ArgMatches, id: &str) -> bool {
    sub.value_source(id) == Some(ValueSource::CommandLine)
}

fn long(id: &str) -> String {
    format!("--{}", id.replace('_', "-"))
}

/// cross-validate chooses the ECS worker's defaults by leaving one trace out at a time.
fn cross_validate(command: &str, consumer: ConsumerKind, sub: &ArgMatches) -> Option<String> {
    if command != "cross-validate" {
        return None;
    }
    if consumer == ConsumerKind::Lambda {
        return Some(CROSS_VALIDATE_LAMBDA.to_owned());
    }
    let traces = sub.get_many::<BuiltIn>("traces").map_or(0, Iterator::count)
        + usize::from(sub.get_one::<PathBuf>("csv").is_some());
    (traces == 1).then(|| ONE_TRACE.to_owned())
}

/// A setting the subcommand searches or chooses itself.
fn chosen(command: &str, consumer: ConsumerKind, sub: &ArgMatches) -> Option<String> {
    let ids: &[&str] = match (command, consumer) {
        // The service's own target keeps its MinCapacity: --min-tasks gives it.
        ("recommend", ConsumerKind::Ecs) if on_existing_target(sub) => &["target", "target_load"],
        ("recommend", ConsumerKind::Ecs) => &["target", "target_load", "min_tasks"],
        ("recommend", ConsumerKind::Lambda) => {
            &["maximum_concurrency", "batch_size", "provisioned_min_pollers"]
        }
        ("cross-validate", _) => &["target_load", "load_hold_seconds", "min_tasks", "target"],
        _ => &[],
    };
    let id = *ids.iter().find(|id| given(sub, id))?;
    let flag = long(id);
    Some(match (command, id) {
        ("cross-validate", "target") => CROSS_VALIDATE_TARGET.to_owned(),
        ("cross-validate", _) => {
            format!("cross-validate chooses {flag} itself: give it to `simulate compare` instead")
        }
        (_, "target") => RECOMMEND_TARGET.to_owned(),
        _ => format!(
            "recommend searches {flag} itself (--verbose lists the grid): give it to `simulate \
             compare` instead"
        ),
    })
}

/// A flag of the consumer not simulated.
fn other_consumers(consumer: ConsumerKind, sub: &ArgMatches) -> Option<String> {
    let group = match consumer {
        ConsumerKind::Ecs => "lambda",
        ConsumerKind::Lambda => "ecs",
    };
    let id = sub.get_many::<clap::Id>(group)?.find(|id| given(sub, id.as_str()))?.as_str();
    let flag = long(id);
    Some(match consumer {
        ConsumerKind::Ecs if id.starts_with("downstream") => format!(
            "{flag} is modelled only for the Lambda consumer (add --consumer lambda): the ECS \
             worker's model does not limit its requests"
        ),
        ConsumerKind::Ecs => {
            format!("{flag} is a setting of the Lambda consumer: add --consumer lambda")
        }
        ConsumerKind::Lambda if id == "best_settings" => NO_POLICIES.to_owned(),
        ConsumerKind::Lambda => format!(
            "{flag} is a setting of the ECS worker's model, which the Lambda consumer does not \
             use (its event source mapping scales it): drop it, or use --consumer ecs"
        ),
    })
}
