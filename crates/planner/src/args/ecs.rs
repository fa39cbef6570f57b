//! The flags only the ECS worker's model reads: its fleet, backlog-publisher
//! and Application Auto Scaling.

use backlog_publisher::backlog::{BacklogIncludes, TaskCountMode};
use backlog_publisher::load::LoadSettings;
use clap::Args;

use super::values::metric_period;
use crate::defaults;
use crate::sim::autoscaling::ZeroCapacity;

/// The help heading of the flags only the ECS worker's model reads.
pub(crate) const ECS: &str = "ECS worker (--consumer ecs)";

/// `--consumer ecs`'s settings. Defaults are the template's. Their clap
/// group, `ecs`, is what a Lambda run refuses.
#[derive(Debug, Args)]
#[group(id = "ecs")]
pub struct EcsArgs {
    /// Tasks running at the start of a CSV trace.
    #[arg(long, help_heading = ECS, default_value_t = 0)]
    pub initial_tasks: u64,
    /// TargetBacklogPerTask.
    #[arg(long, help_heading = ECS, default_value_t = defaults::TARGET)]
    pub target: f64,
    /// TargetLoadPercent: the load policy's target (percent of the running tasks' slots).
    #[arg(long, help_heading = ECS, default_value_t = LoadSettings::DEFAULT.target_percent)]
    pub target_load: f64,
    /// LoadDrainSeconds: the load counts the slots that drain the visible backlog in this time.
    #[arg(long, help_heading = ECS, default_value_t = LoadSettings::DEFAULT.drain_seconds)]
    pub load_drain_seconds: f64,
    /// LoadHoldSeconds: the load keeps one task until no work was seen for this long.
    #[arg(long, help_heading = ECS, default_value_t = LoadSettings::DEFAULT.hold_seconds)]
    pub load_hold_seconds: f64,
    /// MinTasks.
    #[arg(long, help_heading = ECS, default_value_t = defaults::MIN_TASKS)]
    pub min_tasks: u64,
    /// MaxTasks.
    #[arg(long, help_heading = ECS, default_value_t = defaults::MAX_TASKS, value_parser = clap::value_parser!(u64).range(1..=5_000))]
    pub max_tasks: u64,
    /// Mean task start-up, seconds (Fargate: 57).
    #[arg(long, help_heading = ECS, default_value_t = crate::sim::FARGATE_STARTUP)]
    pub startup_seconds: f64,
    /// Seconds a stopping task may drain; 0 stops it at once.
    #[arg(long, help_heading = ECS, default_value_t = defaults::DRAIN_SECONDS)]
    pub drain_seconds: u64,
    /// Scale-in picks busy tasks as readily as idle ones (no scale-in protection).
    #[arg(long, help_heading = ECS)]
    pub no_protection: bool,
    /// The publisher's schedule, seconds (EventBridge: 60 at least).
    #[arg(long, help_heading = ECS, default_value_t = defaults::SCHEDULE_SECONDS, value_parser = clap::value_parser!(u64).range(60..=86_400))]
    pub schedule_seconds: u64,
    /// Seconds from PutMetricData until the alarms read a datapoint.
    #[arg(long, help_heading = ECS, default_value_t = 30)]
    pub metric_lag_seconds: u64,
    /// The scaling metric's period, seconds: 60 (what ECS target tracking evaluates a custom
    /// metric at today), or 10, 20 or 30: the publisher samples once a period at one-second
    /// resolution and the alarms evaluate every 10 s, for the day custom metrics get them.
    #[arg(long, help_heading = ECS, default_value_t = crate::sim::cloudwatch::PERIOD_SECONDS, value_parser = metric_period)]
    pub metric_period: u64,
    /// BACKLOG_INCLUDES, as the publisher reads it (no delayed messages are simulated).
    #[arg(long, help_heading = ECS, default_value = "visible")]
    pub backlog_includes: BacklogIncludes,
    /// TASK_COUNT, as the publisher reads it: running, running+pending or desired.
    #[arg(long, help_heading = ECS, default_value = "running")]
    pub task_count: TaskCountMode,
    /// Target tracking at zero running tasks: stay (documented proportional rule) or as-one.
    #[arg(long, help_heading = ECS, value_enum, default_value_t = ZeroCapacity::Stay)]
    pub zero_capacity: ZeroCapacity,
}
