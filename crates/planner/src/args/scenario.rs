//! The settings on the command line turned into the scenarios simulated:
//! each checked, the traces read, one scenario per trace.

use std::path::Path;

use backlog_publisher::BacklogTarget;
use backlog_publisher::backlog::BacklogPolicy;
use backlog_publisher::load::LoadSettings;

use super::error::{ArgsError, MAX_CSV_BYTES, check};
use super::{ConsumerKind, Distribution, ScenarioArgs};
use crate::defaults;
use crate::lambda::esm::Mode;
use crate::lambda::invoke::DownstreamModel;
use crate::random::ServiceTime;
use crate::sim::Scenario;
use crate::trace::{BuiltIn, ServiceShape, Trace};

impl ScenarioArgs {
    /// One scenario per trace asked for.
    pub fn scenarios(&self) -> Result<Vec<Scenario>, ArgsError> {
        let target = self.check_settings()?;
        let mut traces: Vec<(Trace, u64, ServiceShape)> = Vec::new();
        if let Some(path) = &self.csv {
            traces.push((self.csv_trace(path)?, self.ecs.initial_tasks, ServiceShape::AsGiven));
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

    /// The settings each within what can be simulated, and the backlog target.
    fn check_settings(&self) -> Result<BacklogTarget, ArgsError> {
        let target = BacklogTarget::new(self.ecs.target).ok_or_else(|| ArgsError::Range {
            flag: "target",
            value: self.ecs.target.to_string(),
            expected: "between 0.001 and 1e9",
        })?;
        check(
            self.ecs.min_tasks <= self.ecs.max_tasks,
            "min-tasks",
            self.ecs.min_tasks,
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
            self.ecs.startup_seconds.is_finite()
                && (1.0..=3_600.0).contains(&self.ecs.startup_seconds),
            "startup-seconds",
            self.ecs.startup_seconds,
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
            ("target-load", self.ecs.target_load, 1.0, "from 1 to 1000"),
            ("load-drain-seconds", self.ecs.load_drain_seconds, 1.0, "from 1 to 43200"),
            ("load-hold-seconds", self.ecs.load_hold_seconds, 0.0, "from 0 to 43200"),
        ];
        for (flag, value, low, expected) in load {
            let high = if flag == "target-load" { 1_000.0 } else { 43_200.0 };
            check((low..=high).contains(&value), flag, value, expected)?;
        }
        check(
            self.ecs.metric_lag_seconds < 600,
            "metric-lag-seconds",
            self.ecs.metric_lag_seconds,
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
        Ok(target)
    }

    /// The trace in `--csv`'s file.
    fn csv_trace(&self, path: &Path) -> Result<Trace, ArgsError> {
        let read = |source| ArgsError::Read { path: path.to_owned(), source };
        let bytes = std::fs::metadata(path).map_err(read)?.len();
        if bytes > MAX_CSV_BYTES {
            return Err(ArgsError::TooBig { path: path.to_owned(), bytes, max: MAX_CSV_BYTES });
        }
        let text = std::fs::read_to_string(path).map_err(read)?;
        let name =
            path.file_stem().map_or("csv".into(), |stem| stem.to_string_lossy().into_owned());
        let parsed = crate::trace::csv::parse_csv(&name, &text, self.period_seconds)
            .map_err(|source| ArgsError::Csv { path: path.to_owned(), source })?;
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
            // Rows never closer than a larger gap: most likely the export's own period.
            if let Some(gap) = parsed.shortest_gap.filter(|&gap| gap > parsed.period) {
                eprintln!(
                    "--csv {}: no two rows are closer than {gap} s: if each row counts {gap} s, \
                     give --period-seconds {gap} (or leave it unset)",
                    path.display()
                );
            }
        }
        Ok(parsed.trace)
    }

    fn scenario(&self, trace: Trace, initial_tasks: u64, target: BacklogTarget) -> Scenario {
        let mut scenario = Scenario::new(trace, target);
        scenario.initial_tasks = initial_tasks;
        scenario.seed = self.seed;
        scenario.scaling.min_tasks = self.ecs.min_tasks;
        scenario.scaling.max_tasks = self.ecs.max_tasks;
        scenario.scaling.zero_capacity = self.ecs.zero_capacity;
        scenario.slo.latency_seconds = self.slo_seconds;
        scenario.slo.quantile = self.slo_quantile;
        let mean = self.service_seconds;
        scenario.workers.service = match self.service_distribution {
            Distribution::Fixed => ServiceTime::Fixed(mean),
            Distribution::Exponential => ServiceTime::Exponential(mean),
            Distribution::Lognormal => ServiceTime::LogNormal { mean, cv: 1.5 },
        };
        scenario.workers.slots = self.slots;
        scenario.workers.startup_seconds = self.ecs.startup_seconds;
        scenario.workers.drain_seconds =
            (self.ecs.drain_seconds > 0).then_some(self.ecs.drain_seconds);
        scenario.workers.idle_first = !self.ecs.no_protection;
        scenario.queue.visibility_timeout = match (self.visibility_timeout, self.consumer) {
            (Some(given), _) => given,
            (None, ConsumerKind::Ecs) => defaults::VISIBILITY_TIMEOUT,
            // The template sets the work queue's visibility timeout to 6 × ConsumerTimeout.
            (None, ConsumerKind::Lambda) => 6 * self.lambda.function_timeout,
        };
        scenario.queue.max_receive_count = self.max_receive_count;
        scenario.queue.poison_fraction = self.poison_fraction;
        scenario.publisher.schedule_seconds = self.ecs.schedule_seconds;
        scenario.publisher.metric_lag_seconds = self.ecs.metric_lag_seconds;
        scenario.publisher.metric_period = self.ecs.metric_period;
        scenario.publisher.backlog =
            BacklogPolicy { includes: self.ecs.backlog_includes, task_count: self.ecs.task_count };
        // The publisher's AVG_PROCESSING_SECONDS and CONSUMER_CONCURRENCY are the service's own.
        scenario.publisher.load = LoadSettings {
            slots: self.slots,
            processing_seconds: mean,
            drain_seconds: self.ecs.load_drain_seconds,
            hold_seconds: self.ecs.load_hold_seconds,
            target_percent: self.ecs.target_load,
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
