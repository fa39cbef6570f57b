//! `healthcheck` for the task definition's health check: fails
//! when the worker's stamp (`HEALTH_FILE`) is older than
//! `HEALTH_MAX_SILENCE_SECONDS`, or missing.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use backpressure_batch::worker::{Unhealthy, health_check};

use backpressure_core::config::variables::{HEALTH_FILE, HEALTH_MAX_SILENCE_SECONDS};
use backpressure_core::config::{ConfigError, Vars};

/// Where the stamp goes and how old it may be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HealthConfig {
    /// `HEALTH_FILE` (default `/tmp/sqs-worker-<pid>.last-poll`: one per
    /// worker process, so two workers on one host never share a stamp).
    pub file: PathBuf,
    /// `HEALTH_MAX_SILENCE_SECONDS` (1–3,600, default 120): longer than one
    /// long poll, so an idle queue is not a failure.
    pub max_silence: Duration,
}

impl HealthConfig {
    /// Reads the variables for the worker process `pid`; the error names the
    /// variable and the value.
    pub fn from_vars<F: Fn(&str) -> Option<String>>(
        vars: &Vars<F>,
        pid: u32,
    ) -> Result<Self, ConfigError> {
        Ok(Self {
            file: vars
                .get(HEALTH_FILE.name)
                .map_or_else(|| default_health_file(pid), PathBuf::from),
            max_silence: Duration::from_secs(vars.whole_or_default(&HEALTH_MAX_SILENCE_SECONDS)?),
        })
    }
}

/// Why the check read that file: what a person changes when it is the wrong one.
/// Where sqs-worker stamps its polls unless `HEALTH_FILE` says otherwise: one
/// file per process, so two workers on one host never share a stamp.
fn default_health_file(pid: u32) -> PathBuf {
    std::env::temp_dir().join(format!("sqs-worker-{pid}.last-poll"))
}

fn where_the_stamp_is(file_given: bool, pid: u32) -> String {
    if file_given {
        format!("{}: the file the worker stamps after each poll", HEALTH_FILE.name)
    } else {
        format!(
            "the stamp of process {pid}: give the worker's process id as `healthcheck PID`, or set \
             {} to the file the worker stamps, for the worker and the check alike",
            HEALTH_FILE.name
        )
    }
}

/// The worker's `healthcheck [PID]` command, which `template.yaml`'s task
/// definition runs: 0 when a poll succeeded within `HEALTH_MAX_SILENCE_SECONDS`,
/// 1 otherwise, with one line saying why. `pid` is the worker's process (1,
/// the container's first process, when not given) unless `HEALTH_FILE` names the file.
pub fn healthcheck(pid: Option<&str>) -> ExitCode {
    let pid = match pid.map(|p| (p, p.parse::<u32>())) {
        None => 1,
        Some((_, Ok(pid))) => pid,
        Some((given, Err(_))) => {
            eprintln!("unhealthy: {given:?} is not a process id: healthcheck [PID]");
            return ExitCode::from(backpressure_startup::exit::USAGE);
        }
    };
    let vars = Vars::from_process_env();
    let file_given = vars.get(HEALTH_FILE.name).is_some();
    let config = match HealthConfig::from_vars(&vars, pid) {
        Ok(config) => config,
        Err(error) => {
            eprintln!("unhealthy: {error}");
            return ExitCode::FAILURE;
        }
    };
    match health_check(&config.file, config.max_silence) {
        Ok(age) => {
            println!("healthy: the last successful poll was {} ms ago", age.as_millis());
            ExitCode::SUCCESS
        }
        Err(unhealthy @ Unhealthy::NoStamp(_)) => {
            eprintln!("unhealthy: {unhealthy} ({})", where_the_stamp_is(file_given, pid));
            ExitCode::FAILURE
        }
        Err(unhealthy) => {
            eprintln!("unhealthy: {unhealthy}");
            ExitCode::FAILURE
        }
    }
}
