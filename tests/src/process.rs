//! A long-running binary (sqs-worker) as a child process: its environment,
//! its output lines, signals, and its exit.

use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};

use backpressure_core::sync::lock;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::{Child, Command};

use crate::fixtures::BoxError;

/// A running child; killed when dropped.
#[derive(Debug)]
pub struct Process {
    child: Child,
    lines: Arc<Mutex<Vec<String>>>,
    readers: Vec<tokio::task::JoinHandle<()>>,
}

impl Process {
    /// Starts `binary` with this process's environment plus `env`.
    pub fn start(binary: &Path, env: &[(&str, &str)]) -> Result<Self, BoxError> {
        Self::spawn(binary, &[], env)
    }

    /// Starts `program` with `args`, and this process's environment plus `env`.
    pub fn spawn(program: &Path, args: &[&str], env: &[(&str, &str)]) -> Result<Self, BoxError> {
        let mut child = Command::new(program)
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|error| format!("cannot start {}: {error}", program.display()))?;
        let lines = Arc::new(Mutex::new(Vec::new()));
        let mut readers = Vec::new();
        if let Some(stdout) = child.stdout.take() {
            readers.push(tokio::spawn(collect(stdout, lines.clone())));
        }
        if let Some(stderr) = child.stderr.take() {
            readers.push(tokio::spawn(collect(stderr, lines.clone())));
        }
        Ok(Self { child, lines, readers })
    }

    /// Its process id, while it runs.
    pub fn id(&self) -> Option<u32> {
        self.child.id()
    }

    /// Sends a signal by name (`TERM`, `INT`, `KILL`).
    pub async fn signal(&self, name: &str) -> Result<(), BoxError> {
        let pid = self.child.id().ok_or("the process has exited")?;
        let status =
            Command::new("kill").arg(format!("-{name}")).arg(pid.to_string()).status().await?;
        if status.success() { Ok(()) } else { Err(format!("kill -{name} {pid}: {status}").into()) }
    }

    /// Its exit status, or an error if it has not exited within `limit`;
    /// every line it wrote has been read by then.
    pub async fn exit(&mut self, limit: Duration) -> Result<ExitStatus, BoxError> {
        let status = tokio::time::timeout(limit, self.child.wait())
            .await
            .map_err(|_| format!("still running after {limit:?}"))??;
        for reader in std::mem::take(&mut self.readers) {
            let _ = tokio::time::timeout(Duration::from_secs(5), reader).await;
        }
        Ok(status)
    }

    /// Every line written so far, stdout and stderr interleaved.
    pub fn lines(&self) -> Vec<String> {
        lock(&self.lines).clone()
    }

    /// Waits until a line contains `text`, up to `limit`.
    pub async fn wait_for_line(&self, text: &str, limit: Duration) -> Option<String> {
        let give_up = tokio::time::Instant::now() + limit;
        while tokio::time::Instant::now() < give_up {
            if let Some(line) = self.lines().into_iter().find(|l| l.contains(text)) {
                return Some(line);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        None
    }
}

async fn collect(stream: impl AsyncRead + Unpin, lines: Arc<Mutex<Vec<String>>>) {
    let mut reader = BufReader::new(stream).lines();
    while let Ok(Some(line)) = reader.next_line().await {
        if std::env::var_os("WORKER_TEST_ECHO").is_some() {
            crate::log_view::echo("    | ", &line);
        }
        lock(&lines).push(line);
    }
}

/// A `field=value` of a plain log line, as a number.
pub fn field(line: &str, name: &str) -> Option<u64> {
    line.split_whitespace()
        .find_map(|word| word.strip_prefix(name)?.strip_prefix('='))
        .and_then(|value| value.parse().ok())
}
