//! The command line.

use std::path::PathBuf;

use clap::error::ErrorKind;
use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};

mod ecs;
pub(crate) mod error;
mod existing;
mod scenario;
mod unread;
mod values;

use ecs::ECS;
pub use ecs::EcsArgs;
pub use existing::{ExistingArgs, ScalingTargetKind};

use values::margin;
pub use values::{ConsumerKind, Distribution};

pub use error::ArgsError;

use crate::defaults;
use crate::trace::BuiltIn;

/// Simulates an SQS queue and its consumer on a traffic trace: ECS workers
/// under backlog-publisher and Application Auto Scaling, comparing scaling
/// policies, or the Lambda consumer under its event source mapping.
#[derive(Debug, Parser)]
#[command(name = "simulate", version)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The command line, parsed. A flag the run would not read is refused under
/// the subcommand's usage line (exit 2), as clap refuses one it does not know.
pub fn parse() -> Result<Cli, clap::Error> {
    let matches = Cli::command().get_matches();
    if let Some((name, sub)) = matches.subcommand()
        && let Some(why) = unread::refusal(name, sub)
    {
        let mut cli = Cli::command();
        // Built, so that the subcommand's usage line reads `simulate <name>`.
        cli.build();
        let kind = ErrorKind::ArgumentConflict;
        match cli.find_subcommand_mut(name) {
            Some(sub) => sub.error(kind, why).exit(),
            None => cli.error(kind, why).exit(),
        }
    }
    Cli::from_arg_matches(&matches)
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Every scaling policy on each trace (or, with --consumer lambda, the event source
    /// mapping at its settings): a table and a picture per trace.
    Compare {
        /// The settings.
        #[command(flatten)]
        scenario: ScenarioArgs,
        /// Directory for the pictures (an SVG and a PNG per trace).
        #[arg(long, default_value = "target/simulate")]
        out: PathBuf,
        /// Run each policy at its own best setting from `recommend`'s grid (on 5 seeds,
        /// p99 within 0.8 × the SLO), not all at --target and --min-tasks: a fair comparison.
        #[arg(long, help_heading = ECS, group = "ecs")]
        best_settings: bool,
        /// One JSON object per trace on stdout, one line each, instead of the tables.
        #[arg(long)]
        json: bool,
    },
    /// The cheapest TargetLoadPercent and MinTasks for the template's ScalingLoad (or, with
    /// --consumer lambda, MaximumConcurrency or MinimumPollers × BatchSize)
    /// that meet the SLO on each trace.
    // What it searches is not a setting it takes: hidden from its help, refused when given.
    #[command(
        mut_arg("target", |a| a.hide(true)),
        mut_arg("min_tasks", |a| a.hide(true)),
        mut_arg("maximum_concurrency", |a| a.hide(true)),
        mut_arg("batch_size", |a| a.hide(true)),
        mut_arg("provisioned_min_pollers", |a| a.hide(true))
    )]
    Recommend {
        /// The settings (what is searched is not given: --target and --min-tasks, or with
        /// --consumer lambda --maximum-concurrency, --batch-size and --provisioned-min-pollers).
        #[command(flatten)]
        scenario: ScenarioArgs,
        /// Seeds each setting runs on; it must meet the SLO on every one.
        #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=50))]
        seeds: u32,
        /// The SLO quantile's wait must stay within this fraction of the SLO (0.1–1).
        #[arg(long, default_value_t = 0.8, value_parser = margin)]
        margin: f64,
        /// Print every setting tried, with what it did.
        #[arg(long)]
        verbose: bool,
        /// Directory for the picture of each recommended run (SVG and PNG).
        #[arg(long, default_value = "target/simulate")]
        out: PathBuf,
        /// One JSON object per trace on stdout, one line each, instead of the tables.
        #[arg(long)]
        json: bool,
        /// Who scales the service, and its CPU policy when it has its own.
        #[command(flatten)]
        existing: ExistingArgs,
    },
    /// The load's defaults chosen by cross-validation: for each trace, TargetLoadPercent,
    /// LoadHoldSeconds and MinTasks chosen on the others and judged on it, beside the cheapest
    /// alternative at its own best setting and a bound on reversals (a Markdown table).
    // What it chooses, and the Lambda consumer's flags, are not settings it takes: hidden.
    #[command(
        mut_arg("target", |a| a.hide(true)),
        mut_arg("target_load", |a| a.hide(true)),
        mut_arg("load_hold_seconds", |a| a.hide(true)),
        mut_arg("min_tasks", |a| a.hide(true)),
        mut_arg("consumer", |a| a.hide(true)),
        mut_arg("batch_size", |a| a.hide(true)),
        mut_arg("batching_window", |a| a.hide(true)),
        mut_arg("maximum_concurrency", |a| a.hide(true)),
        mut_arg("provisioned_min_pollers", |a| a.hide(true)),
        mut_arg("provisioned_max_pollers", |a| a.hide(true)),
        mut_arg("account_concurrency", |a| a.hide(true)),
        mut_arg("function_timeout", |a| a.hide(true)),
        mut_arg("deadline_margin_ms", |a| a.hide(true)),
        mut_arg("memory_mb", |a| a.hide(true)),
        mut_arg("downstream_max_rps", |a| a.hide(true)),
        mut_arg("downstream_capacity", |a| a.hide(true))
    )]
    CrossValidate {
        /// The settings (all built-in traces unless --trace is given; at least two).
        #[command(flatten)]
        scenario: ScenarioArgs,
        /// Seeds each setting runs on; it must meet the SLO on every one.
        #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=50))]
        seeds: u32,
    },
    /// The model beside figures AWS has published (ECS's scale-out with 60- and 20-second
    /// metrics, target tracking's scale-in, the SQS event source mapping's scaling), each
    /// within ±15 % or explained; exits 1 when one is neither.
    Fidelity {
        /// One JSON object on stdout: {"band","holds","checks":[{"name","published","simulated",
        /// "unit","source","within","difference","setup","explained"}]}; "explained" is null
        /// for a check within the band, else {"why","range","holds"}.
        #[arg(long)]
        json: bool,
    },
}

/// Everything a scenario can be told.
#[derive(Debug, Args)]
pub struct ScenarioArgs {
    /// The consumer simulated. The template deploys lambda by default; ecs is what the scaling
    /// policies compared here scale.
    #[arg(long, value_enum, default_value_t = ConsumerKind::Ecs)]
    pub consumer: ConsumerKind,
    /// Built-in traces to run (repeatable); all of them unless --csv is given.
    #[arg(long = "trace", value_enum)]
    pub traces: Vec<BuiltIn>,
    /// A trace of your own: `timestamp,arrivals` rows (e.g. CloudWatch's NumberOfMessagesSent;
    /// docs/capacity-planner.md).
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Seconds each CSV row counts; unset, the shortest gap between two rows.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub period_seconds: Option<u64>,
    /// Seeds every random draw: the same seed gives the same tables.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Latency SLO: longest acceptable wait, seconds.
    #[arg(long, default_value_t = 300)]
    pub slo_seconds: u64,
    /// Fraction of messages that must meet the latency SLO.
    #[arg(long, default_value_t = 0.99)]
    pub slo_quantile: f64,
    /// Mean seconds to process one message.
    #[arg(long, default_value_t = 1.0)]
    pub service_seconds: f64,
    /// The service-time distribution.
    #[arg(long, value_enum, default_value_t = Distribution::Exponential)]
    pub service_distribution: Distribution,
    /// Messages one task, or one Lambda invocation, processes at once (ConsumerConcurrency).
    #[arg(long, default_value_t = defaults::SLOTS, value_parser = clap::value_parser!(u32).range(1..=1_000))]
    pub slots: u32,
    /// The queue's VisibilityTimeout, seconds [default: 60, WorkerVisibilityTimeout, for ecs;
    /// 6 × --function-timeout for lambda, as the template sets it].
    #[arg(long, value_parser = clap::value_parser!(u64).range(0..=43_200))]
    pub visibility_timeout: Option<u64>,
    /// The redrive policy's maxReceiveCount.
    #[arg(long, default_value_t = defaults::MAX_RECEIVE_COUNT, value_parser = clap::value_parser!(u16).range(1..=1_000))]
    pub max_receive_count: u16,
    /// Fraction of poison messages (fail until the DLQ takes them).
    #[arg(long, default_value_t = 0.0)]
    pub poison_fraction: f64,
    /// The ECS worker's settings.
    #[command(flatten)]
    pub ecs: EcsArgs,
    /// The Lambda consumer's settings.
    #[command(flatten)]
    pub lambda: crate::lambda::args::LambdaArgs,
}
