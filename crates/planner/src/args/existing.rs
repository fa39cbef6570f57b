//! `recommend --scaling-target existing`: a service that keeps its own
//! scalable target and CPU policy, and what to add beside it.

use clap::{Args, ValueEnum};

use crate::sim::cpu::CpuPolicy;

/// The help heading of the CPU policy's flags.
pub(crate) const EXISTING: &str = "A service that scales on CPU (--scaling-target existing)";

/// Who scales the ECS service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum ScalingTargetKind {
    /// The stack's own scalable target and policies (a service it creates, or
    /// `ScalingTarget=create`): recommend TargetLoadPercent and MinTasks.
    #[default]
    #[value(alias = "auto", alias = "create")]
    Stack,
    /// The service's own target and CPU policy (`ScalingTarget=existing`):
    /// recommend the ScalingLoad policy to add beside the CPU one.
    Existing,
}

/// The service's own target and its CPU policy. Its bounds are `--min-tasks`
/// and `--max-tasks` (the target's MinCapacity and MaxCapacity).
#[derive(Debug, Args)]
#[group(id = "existing_target")]
pub struct ExistingArgs {
    /// Who scales the ECS service: stack (the stack's own target: ScalingTarget auto with a
    /// service it creates, or create; also taken as auto or create) or existing (the service's
    /// own target with its CPU policy, MinCapacity --min-tasks: what to add beside it).
    #[arg(long, value_enum, default_value_t = ScalingTargetKind::Stack)]
    pub scaling_target: ScalingTargetKind,
    /// The CPU policy's TargetValue (ECSServiceAverageCPUUtilization), percent.
    #[arg(long, help_heading = EXISTING, default_value_t = 70.0, value_parser = percent)]
    pub cpu_target: f64,
    /// A task's CPU with no message in work, percent.
    #[arg(long, help_heading = EXISTING, default_value_t = 5.0, value_parser = percent_or_zero)]
    pub cpu_idle_percent: f64,
    /// What one message in work adds to its task's CPU, percent [default: what makes a task
    /// with every slot (--slots) busy 100 %].
    #[arg(long, help_heading = EXISTING, value_parser = percent)]
    pub cpu_per_message: Option<f64>,
    /// The CPU policy's ScaleInCooldown, seconds.
    #[arg(long, help_heading = EXISTING, default_value_t = 300, value_parser = clap::value_parser!(u64).range(0..=86_400))]
    pub cpu_scale_in_cooldown: u64,
}

impl ExistingArgs {
    /// The CPU policy, for a task of `slots` slots; `None` under the stack's own target.
    pub fn cpu(&self, slots: u32) -> Option<CpuPolicy> {
        (self.scaling_target == ScalingTargetKind::Existing).then(|| CpuPolicy {
            target_percent: self.cpu_target,
            scale_in_cooldown: self.cpu_scale_in_cooldown,
            idle_percent: self.cpu_idle_percent,
            percent_per_message: self
                .cpu_per_message
                .unwrap_or((100.0 - self.cpu_idle_percent) / f64::from(slots.max(1))),
        })
    }
}

fn percent(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(value) if value > 0.0 && value <= 100.0 => Ok(value),
        _ => Err(format!("{text:?} is not a percentage above 0 and at most 100")),
    }
}

fn percent_or_zero(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(value) if (0.0..100.0).contains(&value) => Ok(value),
        _ => Err(format!("{text:?} is not a percentage from 0 to below 100")),
    }
}
