//! A Lambda Runtime API host: starts a function binary as Lambda would, with
//! `AWS_LAMBDA_RUNTIME_API` pointing here, and feeds it invocations. The
//! function runs its real `lambda_runtime` loop, so this exercises the same
//! path as a deployed function.

use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use backpressure_core::sync::lock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hyper::body::Bytes;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::process::Command;
use tokio::sync::{Notify, oneshot, watch};

mod api;

use api::{collect_lines, serve};

/// How an invocation ended.
#[derive(Debug)]
pub enum Outcome {
    /// `POST /runtime/invocation/{id}/response`.
    Response(Value),
    /// `POST /runtime/invocation/{id}/error`: `{"errorType", "errorMessage"}`.
    Error(Value),
    /// `POST /runtime/init/error`.
    InitError(Value),
    /// The process ended before answering.
    Exited(ExitStatus),
    /// No answer within the invocation's timeout.
    TimedOut,
}

impl Outcome {
    /// The messageIds of a batch response's `batchItemFailures`; `None` when
    /// the invocation gave no response.
    pub fn batch_item_failures(&self) -> Option<Vec<String>> {
        let Self::Response(body) = self else { return None };
        let failures = body["batchItemFailures"].as_array()?;
        Some(
            failures
                .iter()
                .map(|f| f["itemIdentifier"].as_str().unwrap_or_default().to_owned())
                .collect(),
        )
    }
}

#[derive(Debug, thiserror::Error)]
pub enum HostError {
    #[error("cannot start {binary}")]
    Spawn {
        binary: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot listen on loopback")]
    Listen(#[source] std::io::Error),
}

struct Pending {
    id: String,
    trace: String,
    deadline_ms: u64,
    event: Bytes,
}

/// One invocation as the host served it.
#[derive(Debug)]
pub struct Served {
    pub outcome: Outcome,
    /// `Lambda-Runtime-Aws-Request-Id`.
    pub request_id: String,
    /// `Lambda-Runtime-Trace-Id`: every invocation has its own.
    pub trace_header: String,
}

#[derive(Default)]
struct State {
    queue: Mutex<VecDeque<Pending>>,
    queued: Notify,
    waiting: Mutex<HashMap<String, oneshot::Sender<Outcome>>>,
    init_error: Mutex<Option<Value>>,
    first_next: OnceLock<Instant>,
    /// When each invocation's event was handed to the function, then how long it took.
    served_at: Mutex<HashMap<String, Instant>>,
    durations: Mutex<HashMap<String, Duration>>,
    logs: Mutex<Vec<String>>,
    /// Invocations handed to the function and not yet answered, and the most at once.
    in_flight: AtomicU64,
    most_in_flight: AtomicU64,
}

/// One running function process and the Runtime API it polls.
pub struct LambdaHost {
    state: Arc<State>,
    pid: Option<u32>,
    spawned_at: Instant,
    exit: watch::Receiver<Option<ExitStatus>>,
    _kill: oneshot::Sender<()>,
    next_id: AtomicU64,
}

impl std::fmt::Debug for LambdaHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LambdaHost").field("spawned_at", &self.spawned_at).finish_non_exhaustive()
    }
}

/// Environment a function process inherits from the host's; everything else
/// (such as a stray QUEUE_URL in the caller's shell) is left out.
const INHERITED: &[&str] = &[
    "PATH",
    "HOME",
    "TMPDIR",
    "RUST_LOG",
    "RUST_BACKTRACE",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_EC2_METADATA_DISABLED",
    "AWS_ENDPOINT_URL",
];

impl LambdaHost {
    /// Starts `binary` with `env` on top of Lambda's own variables. The
    /// process is killed when the host is dropped.
    pub async fn start(binary: &Path, env: &[(&str, &str)]) -> Result<Self, HostError> {
        Self::start_command(binary, &[], env).await
    }

    /// Like `start`, for a program that takes arguments (a Python runtime
    /// interface client with its handler, say).
    pub async fn start_command(
        binary: &Path,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Result<Self, HostError> {
        let listener = TcpListener::bind("127.0.0.1:0").await.map_err(HostError::Listen)?;
        let address = listener.local_addr().map_err(HostError::Listen)?;
        let state = Arc::new(State::default());
        tokio::spawn(serve(listener, state.clone()));

        let mut command = Command::new(binary);
        command.args(args).env_clear();
        for (name, value) in std::env::vars() {
            if INHERITED.contains(&name.as_str()) || name.starts_with("AWS_ENDPOINT_URL_") {
                command.env(name, value);
            }
        }
        let name = binary.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        command
            .env("AWS_LAMBDA_RUNTIME_API", address.to_string())
            .env("AWS_LAMBDA_FUNCTION_NAME", &name)
            .env("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST")
            .env("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "128")
            .env("AWS_LAMBDA_LOG_GROUP_NAME", format!("/aws/lambda/{name}"))
            .env("AWS_LAMBDA_LOG_STREAM_NAME", "local")
            .env("AWS_LAMBDA_LOG_FORMAT", "JSON")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let spawned_at = Instant::now();
        let mut child = command
            .spawn()
            .map_err(|source| HostError::Spawn { binary: binary.display().to_string(), source })?;
        let pid = child.id();
        if let Some(stdout) = child.stdout.take() {
            tokio::spawn(collect_lines(stdout, state.clone()));
        }
        if let Some(stderr) = child.stderr.take() {
            tokio::spawn(collect_lines(stderr, state.clone()));
        }
        let (exit_tx, exit) = watch::channel(None);
        let (kill, killed) = oneshot::channel::<()>();
        tokio::spawn(async move {
            tokio::select! {
                status = child.wait() => { let _ = exit_tx.send(status.ok()); }
                _ = killed => { let _ = child.kill().await; }
            }
        });
        Ok(Self { state, pid, spawned_at, exit, _kill: kill, next_id: AtomicU64::new(1) })
    }

    /// Sends one event and waits for the function's answer, at most `timeout`
    /// (also the deadline the function is told).
    pub async fn invoke(&self, event: &Value, timeout: Duration) -> Outcome {
        self.invoke_timed(Bytes::from(event.to_string()), timeout).await.0
    }

    /// `invoke` for an event already encoded, with the invocation's duration as
    /// Lambda bills it: from handing the event over to receiving the answer.
    pub async fn invoke_timed(
        &self,
        event: Bytes,
        timeout: Duration,
    ) -> (Outcome, Option<Duration>) {
        let (served, duration) = self.serve_invocation(event, timeout).await;
        (served.outcome, duration)
    }

    /// `invoke`, with the request id and the trace the invocation was given.
    pub async fn invoke_served(&self, event: &Value, timeout: Duration) -> Served {
        self.serve_invocation(Bytes::from(event.to_string()), timeout).await.0
    }

    async fn serve_invocation(
        &self,
        event: Bytes,
        timeout: Duration,
    ) -> (Served, Option<Duration>) {
        let number = self.next_id.fetch_add(1, Ordering::Relaxed);
        let id = format!("00000000-0000-4000-8000-{number:012}");
        let trace = format!("Root=1-5759e988-{number:024x};Parent={number:016x};Sampled=1");
        let deadline = SystemTime::now() + timeout;
        let deadline_ms =
            deadline.duration_since(UNIX_EPOCH).unwrap_or_default().as_millis() as u64;
        let (answer, answered) = oneshot::channel();
        lock(&self.state.waiting).insert(id.clone(), answer);
        let pending = Pending { id: id.clone(), trace: trace.clone(), deadline_ms, event };
        lock(&self.state.queue).push_back(pending);
        self.state.queued.notify_one();
        let outcome = self.answer(answered, timeout).await;
        let duration = lock(&self.state.durations).remove(&id);
        (Served { outcome, request_id: id, trace_header: trace }, duration)
    }

    /// The most invocations the function had in hand at once, served and not yet answered.
    pub fn most_in_flight(&self) -> u64 {
        self.state.most_in_flight.load(Ordering::SeqCst)
    }

    async fn answer(&self, answered: oneshot::Receiver<Outcome>, timeout: Duration) -> Outcome {
        let mut exit = self.exit.clone();
        let grace = Duration::from_secs(2);
        tokio::select! {
            outcome = answered => outcome.unwrap_or(Outcome::TimedOut),
            status = exit.wait_for(Option::is_some) => {
                // An init error is posted just before the process exits.
                if let Some(error) = lock(&self.state.init_error).take() {
                    return Outcome::InitError(error);
                }
                match status.ok().and_then(|s| *s) {
                    Some(status) => Outcome::Exited(status),
                    None => Outcome::TimedOut,
                }
            }
            _ = tokio::time::sleep(timeout + grace) => Outcome::TimedOut,
        }
    }

    /// Time from spawning the process to its first `GET /invocation/next`:
    /// the function's cold start as Lambda bills it (its init phase).
    pub fn time_to_first_next(&self) -> Option<Duration> {
        self.state.first_next.get().map(|at| at.duration_since(self.spawned_at))
    }

    /// Waits until the function has polled for its first invocation.
    pub async fn wait_until_ready(&self, timeout: Duration) -> Option<Duration> {
        let start = Instant::now();
        while start.elapsed() < timeout {
            if let Some(elapsed) = self.time_to_first_next() {
                return Some(elapsed);
            }
            if self.exit.borrow().is_some() {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        None
    }

    /// The function process's peak resident memory so far (`VmHWM`), in KiB.
    pub fn peak_rss_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid?)).ok()?;
        let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
        line.split_whitespace().nth(1)?.parse().ok()
    }

    /// The function process's resident memory now (`VmRSS`), in KiB.
    pub fn rss_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid?)).ok()?;
        let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
        line.split_whitespace().nth(1)?.parse().ok()
    }

    /// File descriptors the function process has open now.
    pub fn open_fds(&self) -> Option<usize> {
        Some(std::fs::read_dir(format!("/proc/{}/fd", self.pid?)).ok()?.count())
    }

    /// CPU time the function process has used so far, all threads, from
    /// `/proc/<pid>/task/*/schedstat` (nanoseconds on a CPU).
    pub fn cpu_time(&self) -> Option<Duration> {
        let tasks = std::fs::read_dir(format!("/proc/{}/task", self.pid?)).ok()?;
        let nanos = tasks
            .filter_map(Result::ok)
            .filter_map(|task| std::fs::read_to_string(task.path().join("schedstat")).ok())
            .filter_map(|line| line.split_whitespace().next()?.parse::<u64>().ok())
            .sum();
        Some(Duration::from_nanos(nanos))
    }

    /// Everything the function wrote to stdout and stderr so far.
    pub fn logs(&self) -> Vec<String> {
        lock(&self.state.logs).clone()
    }
}
