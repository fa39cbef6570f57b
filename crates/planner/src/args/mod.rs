//! The command line.

use backlog_publisher::load::LoadSettings;
use std::path::PathBuf;

use backlog_publisher::BacklogTarget;
use backlog_publisher::backlog::{BacklogIncludes, BacklogPolicy, TaskCountMode};
use clap::{Args, Parser, Subcommand};

pub(crate) mod error;
mod values;

pub use values::{ConsumerKind, Distribution};
use values::{margin, metric_period};

pub use error::ArgsError;
pub(crate) use error::{MAX_CSV_BYTES, check};

use crate::autoscaling::ZeroCapacity;

/// The help heading of the flags only the ECS worker's model reads.
const ECS: &str = "ECS worker (--consumer ecs)";
use crate::defaults;
use crate::lambda::esm::Mode;
use crate::lambda::invoke::DownstreamModel;
use crate::random::ServiceTime;
use crate::sim::Scenario;
use crate::trace::{BuiltIn, ServiceShape, Trace};

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
        #[arg(long, help_heading = ECS)]
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
    /// Tasks running at the start of a CSV trace.
    #[arg(long, default_value_t = 0, help_heading = ECS)]
    pub initial_tasks: u64,
    /// Seeds every random draw: the same seed gives the same tables.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// TargetBacklogPerTask.
    #[arg(long, default_value_t = defaults::TARGET, help_heading = ECS)]
    pub target: f64,
    /// TargetLoadPercent: the load policy's target (percent of the running tasks' slots).
    #[arg(long, default_value_t = LoadSettings::DEFAULT.target_percent, help_heading = ECS)]
    pub target_load: f64,
    /// LoadDrainSeconds: the load counts the slots that drain the visible backlog in this time.
    #[arg(long, default_value_t = LoadSettings::DEFAULT.drain_seconds, help_heading = ECS)]
    pub load_drain_seconds: f64,
    /// LoadHoldSeconds: the load keeps one task until no work was seen for this long.
    #[arg(long, default_value_t = LoadSettings::DEFAULT.hold_seconds, help_heading = ECS)]
    pub load_hold_seconds: f64,
    /// MinTasks.
    #[arg(long, default_value_t = defaults::MIN_TASKS, help_heading = ECS)]
    pub min_tasks: u64,
    /// MaxTasks.
    #[arg(long, default_value_t = defaults::MAX_TASKS, value_parser = clap::value_parser!(u64).range(1..=5_000), help_heading = ECS)]
    pub max_tasks: u64,
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
    /// Mean task start-up, seconds (Fargate: 57).
    #[arg(long, default_value_t = crate::sim::FARGATE_STARTUP, help_heading = ECS)]
    pub startup_seconds: f64,
    /// Seconds a stopping task may drain; 0 stops it at once.
    #[arg(long, default_value_t = defaults::DRAIN_SECONDS, help_heading = ECS)]
    pub drain_seconds: u64,
    /// Scale-in picks busy tasks as readily as idle ones (no scale-in protection).
    #[arg(long, help_heading = ECS)]
    pub no_protection: bool,
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
    /// The publisher's schedule, seconds (EventBridge: 60 at least).
    #[arg(long, default_value_t = defaults::SCHEDULE_SECONDS, value_parser = clap::value_parser!(u64).range(60..=86_400), help_heading = ECS)]
    pub schedule_seconds: u64,
    /// Seconds from PutMetricData until the alarms read a datapoint.
    #[arg(long, default_value_t = 30, help_heading = ECS)]
    pub metric_lag_seconds: u64,
    /// The scaling metric's period, seconds: 60 (what ECS target tracking evaluates a custom
    /// metric at today), or 10, 20 or 30: the publisher samples once a period at one-second
    /// resolution and the alarms evaluate every 10 s, for the day custom metrics get them.
    #[arg(long, default_value_t = crate::cloudwatch::PERIOD_SECONDS, value_parser = metric_period, help_heading = ECS)]
    pub metric_period: u64,
    /// BACKLOG_INCLUDES, as the publisher reads it (no delayed messages are simulated).
    #[arg(long, default_value = "visible", help_heading = ECS)]
    pub backlog_includes: BacklogIncludes,
    /// TASK_COUNT, as the publisher reads it: running, running+pending or desired.
    #[arg(long, default_value = "running", help_heading = ECS)]
    pub task_count: TaskCountMode,
    /// Target tracking at zero running tasks: stay (documented proportional rule) or as-one.
    #[arg(long, value_enum, default_value_t = ZeroCapacity::Stay, help_heading = ECS)]
    pub zero_capacity: ZeroCapacity,
    /// The Lambda consumer's settings.
    #[command(flatten)]
    pub lambda: crate::lambda::args::LambdaArgs,
}

impl ScenarioArgs {
    /// One scenario per trace asked for.
    pub fn scenarios(&self) -> Result<Vec<Scenario>, ArgsError> {
        let target = BacklogTarget::new(self.target).ok_or_else(|| ArgsError::Range {
            flag: "target",
            value: self.target.to_string(),
            expected: "between 0.001 and 1e9",
        })?;
        check(
            self.min_tasks <= self.max_tasks,
            "min-tasks",
            self.min_tasks,
            "at most --max-tasks",
        )?;
        check(
            self.slo_quantile > 0.0 && self.slo_quantile <= 1.0,
            "slo-quantile",
            self.slo_quantile,
            "in (0, 1]",
        )?;
        check(
            self.service_seconds.is_finite() && (0.001..=3_600.0).contains(&self.service_seconds),
            "service-seconds",
            self.service_seconds,
            "between 0.001 and 3600",
        )?;
        check(
            self.startup_seconds.is_finite() && (1.0..=3_600.0).contains(&self.startup_seconds),
            "startup-seconds",
            self.startup_seconds,
            "between 1 and 3600",
        )?;
        check(
            (0.0..=1.0).contains(&self.poison_fraction),
            "poison-fraction",
            self.poison_fraction,
            "in [0, 1]",
        )?;
        // The ranges the publisher accepts (TARGET_LOAD_PERCENT, LOAD_*_SECONDS).
        let load = [
            ("target-load", self.target_load, 1.0, "from 1 to 1000"),
            ("load-drain-seconds", self.load_drain_seconds, 1.0, "from 1 to 43200"),
            ("load-hold-seconds", self.load_hold_seconds, 0.0, "from 0 to 43200"),
        ];
        for (flag, value, low, expected) in load {
            let high = if flag == "target-load" { 1_000.0 } else { 43_200.0 };
            check((low..=high).contains(&value), flag, value, expected)?;
        }
        check(
            self.metric_lag_seconds < 600,
            "metric-lag-seconds",
            self.metric_lag_seconds,
            "below 600",
        )?;

        self.lambda.check()?;
        let timeout = self.lambda.function_timeout;
        check(
            self.consumer == ConsumerKind::Ecs
                || self.visibility_timeout.is_none_or(|v| v >= timeout),
            "visibility-timeout",
            self.visibility_timeout.unwrap_or_default(),
            "must be at least --function-timeout: Lambda refuses a mapping whose function timeout \
             exceeds the queue's visibility timeout",
        )?;

        let mut traces: Vec<(Trace, u64, ServiceShape)> = Vec::new();
        if let Some(path) = &self.csv {
            let read = |source| ArgsError::Read { path: path.clone(), source };
            let bytes = std::fs::metadata(path).map_err(read)?.len();
            if bytes > MAX_CSV_BYTES {
                return Err(ArgsError::TooBig { path: path.clone(), bytes, max: MAX_CSV_BYTES });
            }
            let text = std::fs::read_to_string(path).map_err(read)?;
            let name =
                path.file_stem().map_or("csv".into(), |stem| stem.to_string_lossy().into_owned());
            let parsed = crate::csv_trace::parse_csv(&name, &text, self.period_seconds)
                .map_err(|source| ArgsError::Csv { path: path.clone(), source })?;
            if parsed.missing_periods > 0 {
                // Said once, here, where the file is read: the tables count what is simulated.
                eprintln!(
                    "--csv {}: {} of the trace's {}-second periods had no row and are taken as no \
                     arrivals (CloudWatch leaves out periods without data; {} rows read)",
                    path.display(),
                    parsed.missing_periods,
                    parsed.period,
                    parsed.rows
                );
            }
            traces.push((parsed.trace, self.initial_tasks, ServiceShape::AsGiven));
        }
        let builtins = if self.traces.is_empty() && self.csv.is_none() {
            BuiltIn::ALL.to_vec()
        } else {
            self.traces.clone()
        };
        for builtin in builtins {
            traces.push((
                builtin.trace(self.seed),
                builtin.initial_tasks(),
                builtin.service_shape(),
            ));
        }
        Ok(traces
            .into_iter()
            .map(|(trace, initial, shape)| {
                let mut scenario = self.scenario(trace, initial, target);
                scenario.shape_service(shape);
                scenario
            })
            .collect())
    }

    fn scenario(&self, trace: Trace, initial_tasks: u64, target: BacklogTarget) -> Scenario {
        let mut scenario = Scenario::new(trace, target);
        scenario.initial_tasks = initial_tasks;
        scenario.seed = self.seed;
        scenario.scaling.min_tasks = self.min_tasks;
        scenario.scaling.max_tasks = self.max_tasks;
        scenario.scaling.zero_capacity = self.zero_capacity;
        scenario.slo.latency_seconds = self.slo_seconds;
        scenario.slo.quantile = self.slo_quantile;
        let mean = self.service_seconds;
        scenario.workers.service = match self.service_distribution {
            Distribution::Fixed => ServiceTime::Fixed(mean),
            Distribution::Exponential => ServiceTime::Exponential(mean),
            Distribution::Lognormal => ServiceTime::LogNormal { mean, cv: 1.5 },
        };
        scenario.workers.slots = self.slots;
        scenario.workers.startup_seconds = self.startup_seconds;
        scenario.workers.drain_seconds = (self.drain_seconds > 0).then_some(self.drain_seconds);
        scenario.workers.idle_first = !self.no_protection;
        scenario.queue.visibility_timeout = match (self.visibility_timeout, self.consumer) {
            (Some(given), _) => given,
            (None, ConsumerKind::Ecs) => defaults::VISIBILITY_TIMEOUT,
            // The template sets the work queue's visibility timeout to 6 × ConsumerTimeout.
            (None, ConsumerKind::Lambda) => 6 * self.lambda.function_timeout,
        };
        scenario.queue.max_receive_count = self.max_receive_count;
        scenario.queue.poison_fraction = self.poison_fraction;
        scenario.publisher.schedule_seconds = self.schedule_seconds;
        scenario.publisher.metric_lag_seconds = self.metric_lag_seconds;
        scenario.publisher.metric_period = self.metric_period;
        scenario.publisher.backlog =
            BacklogPolicy { includes: self.backlog_includes, task_count: self.task_count };
        // The publisher's AVG_PROCESSING_SECONDS and CONSUMER_CONCURRENCY are the service's own.
        scenario.publisher.load = LoadSettings {
            slots: self.slots,
            processing_seconds: mean,
            drain_seconds: self.load_drain_seconds,
            hold_seconds: self.load_hold_seconds,
            target_percent: self.target_load,
        };
        let lambda = &mut scenario.lambda;
        let given = &self.lambda;
        lambda.esm.mode = match (given.provisioned_min_pollers, given.provisioned_max_pollers) {
            (min, Some(max)) => Mode::Provisioned {
                minimum_pollers: min.unwrap_or(2).min(max),
                maximum_pollers: max,
            },
            _ => {
                let cap = given.maximum_concurrency.unwrap_or(defaults::MAXIMUM_CONCURRENCY);
                Mode::Standard { maximum_concurrency: (cap > 0).then_some(cap) }
            }
        };
        lambda.esm.batch_size = given.batch_size;
        lambda.esm.batching_window = given.batching_window;
        lambda.esm.account_concurrency = given.account_concurrency;
        lambda.invocation.slots = self.slots;
        lambda.invocation.service = scenario.workers.service;
        lambda.invocation.timeout = given.function_timeout as f64;
        lambda.invocation.deadline_margin = given.deadline_margin_ms as f64 / 1_000.0;
        lambda.invocation.downstream = DownstreamModel {
            max_rps_per_instance: given.downstream_max_rps,
            capacity_rps: given.downstream_capacity,
        };
        lambda.memory_mb = given.memory_mb;
        scenario
    }
}
