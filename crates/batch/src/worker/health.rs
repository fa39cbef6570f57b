//! Liveness for a health check: the worker stamps a file after every
//! successful poll, and [`health_check`] fails when that stamp is older than
//! the silence allowed (or missing). A file, not a port: the check runs
//! inside the container and needs nothing listening.

use backpressure_core::sync::lock;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Why [`health_check`] finds the worker unhealthy.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Unhealthy {
    /// No stamp to read: no poll has succeeded yet, or the file is another's.
    #[error("no successful poll recorded in {}", .0.display())]
    NoStamp(PathBuf),
    /// The last successful poll is older than the silence allowed.
    #[error("the last successful poll was {} s ago", .0.as_secs())]
    Silent(Duration),
}

/// How long ago the worker stamping `file` last polled successfully, or why
/// that is longer than `max_silence` (longer than one long poll, so an idle
/// queue is not a failure).
pub fn health_check(file: &Path, max_silence: Duration) -> Result<Duration, Unhealthy> {
    let stamp = std::fs::read_to_string(file).ok().and_then(|t| t.trim().parse::<u64>().ok());
    let Some(millis) = stamp else { return Err(Unhealthy::NoStamp(file.to_owned())) };
    let age = SystemTime::now()
        .duration_since(UNIX_EPOCH + Duration::from_millis(millis))
        .unwrap_or_default();
    if age > max_silence { Err(Unhealthy::Silent(age)) } else { Ok(age) }
}

/// Where a worker process stamps its polls unless told otherwise: one file
/// per process, so two workers on one host never share a stamp.
pub(crate) fn default_health_file(pid: u32) -> PathBuf {
    std::env::temp_dir().join(format!("backpressure-worker-{pid}.last-poll"))
}

/// Stamps the file, at most once a second.
#[derive(Debug)]
pub(crate) struct Stamp {
    file: PathBuf,
    last: Mutex<Option<tokio::time::Instant>>,
}

impl Stamp {
    /// A stamp on `file`. A stamp already there is another process's (its
    /// path holds a PID, and PIDs are used again): removed, so a health check
    /// before this process's first poll fails instead of reading it.
    pub(crate) fn new(file: &Path) -> Self {
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
    pub(crate) fn poll_succeeded(&self) {
        let now = tokio::time::Instant::now();
        {
            let mut last = lock(&self.last);
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

    #[test]
    fn the_check_reads_the_stamps_age_and_names_a_missing_or_stale_one() {
        let file =
            std::env::temp_dir().join(format!("check-test-{}.last-poll", std::process::id()));
        let _ = std::fs::remove_file(&file);
        assert_eq!(
            health_check(&file, Duration::from_secs(5)),
            Err(Unhealthy::NoStamp(file.clone()))
        );
        Stamp::new(&file).poll_succeeded();
        let age = health_check(&file, Duration::from_secs(5)).unwrap();
        assert!(age < Duration::from_secs(5), "{age:?}");
        let old = SystemTime::now().duration_since(UNIX_EPOCH).unwrap() - Duration::from_secs(60);
        std::fs::write(&file, old.as_millis().to_string()).unwrap();
        let stale = health_check(&file, Duration::from_secs(5)).unwrap_err();
        assert!(stale.to_string().starts_with("the last successful poll was 60 s ago"), "{stale}");
        let _ = std::fs::remove_file(&file);
    }
}
