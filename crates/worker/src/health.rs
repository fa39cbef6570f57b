//! Liveness for the task definition's health check: the worker stamps a file
//! after every successful poll, and `sqs-worker healthcheck` fails when that
//! stamp is older than `HEALTH_MAX_SILENCE_SECONDS` (or missing). A file, not
//! a port: the check runs inside the container and needs nothing listening.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

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
            file: vars.get(HEALTH_FILE.name).map_or_else(|| default_file(pid), PathBuf::from),
            max_silence: Duration::from_secs(vars.whole_or_default(&HEALTH_MAX_SILENCE_SECONDS)?),
        })
    }
}

/// Where a worker process stamps its polls when `HEALTH_FILE` is unset.
pub fn default_file(pid: u32) -> PathBuf {
    std::env::temp_dir().join(format!("sqs-worker-{pid}.last-poll"))
}

/// Stamps the file, at most once a second.
#[derive(Debug)]
pub struct Stamp {
    file: PathBuf,
    last: Mutex<Option<tokio::time::Instant>>,
}

impl Stamp {
    /// A stamp on `file`. A stamp already there is another process's (its
    /// path holds a PID, and PIDs are used again): removed, so a health check
    /// before this process's first poll fails instead of reading it.
    pub fn new(file: &Path) -> Self {
        match std::fs::remove_file(file) {
            Ok(()) => {
                tracing::info!(file = %file.display(), "an earlier process's health stamp removed")
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => {
                tracing::warn!(error = %error, file = %file.display(), "cannot remove an earlier health stamp");
            }
        }
        Self { file: file.to_owned(), last: Mutex::new(None) }
    }

    /// Records a successful poll; a write that fails is only logged (the
    /// health check then fails, which is what it is for).
    pub fn poll_succeeded(&self) {
        let now = tokio::time::Instant::now();
        {
            let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
            if last.is_some_and(|at| now.duration_since(at) < Duration::from_secs(1)) {
                return;
            }
            *last = Some(now);
        }
        let millis = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_millis();
        if let Err(error) = std::fs::write(&self.file, millis.to_string()) {
            tracing::warn!(error = %error, file = %self.file.display(), "cannot write the health stamp");
        }
    }
}

/// `sqs-worker healthcheck`: 0 when a poll succeeded within the allowed
/// silence, 1 otherwise, with one line saying why.
/// `sqs-worker healthcheck [PID]`: the worker of process `pid` (1, the
/// container's first process, when not given) unless `HEALTH_FILE` names the file.
pub fn check(pid: Option<&str>) -> ExitCode {
    let pid = match pid.map(|p| (p, p.parse::<u32>())) {
        None => 1,
        Some((_, Ok(pid))) => pid,
        Some((given, Err(_))) => {
            eprintln!("unhealthy: {given:?} is not a process id: sqs-worker healthcheck [PID]");
            return ExitCode::from(backpressure_startup::exit::USAGE);
        }
    };
    let config = match HealthConfig::from_vars(&Vars::from_process_env(), pid) {
        Ok(config) => config,
        Err(error) => {
            eprintln!("unhealthy: {error}");
            return ExitCode::FAILURE;
        }
    };
    let stamp =
        std::fs::read_to_string(&config.file).ok().and_then(|t| t.trim().parse::<u64>().ok());
    let Some(millis) = stamp else {
        eprintln!("unhealthy: no successful poll recorded in {}", config.file.display());
        return ExitCode::FAILURE;
    };
    let age = SystemTime::now()
        .duration_since(UNIX_EPOCH + Duration::from_millis(millis))
        .unwrap_or_default();
    if age > config.max_silence {
        eprintln!("unhealthy: the last successful poll was {} s ago", age.as_secs());
        ExitCode::FAILURE
    } else {
        println!("healthy: the last successful poll was {} ms ago", age.as_millis());
        ExitCode::SUCCESS
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_stamp_left_by_an_earlier_process_is_not_taken_for_this_ones() {
        let file =
            std::env::temp_dir().join(format!("stamp-test-{}.last-poll", std::process::id()));
        std::fs::write(&file, "1").unwrap();
        let _stamp = Stamp::new(&file);
        assert!(!file.exists(), "removed before the first poll");
        let _ = std::fs::remove_file(&file);
    }
}
