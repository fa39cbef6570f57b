//! ECS task scale-in protection through the container agent
//! (`PUT $ECS_AGENT_URI/task-protection/v1/state`): protected while busy, so
//! a scale-in or a deployment does not stop a task with messages in work;
//! released once idle, so it can be scaled in. Best effort: an agent that
//! refuses (during a deployment, say) or cannot be reached is logged, and the
//! worker keeps working.

use crate::worker::WorkerError;
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::{Method, Request, Uri};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio::time::{Instant, sleep, sleep_until};
use tracing::{info, warn};

/// How long one agent call may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(5);

/// The container agent listens on plain HTTP at a link-local address
/// (`http://169.254.170.2/...`): no TLS to set up.
type AgentClient = Client<HttpConnector, Full<Bytes>>;

/// The agent's endpoint and the protection's length.
#[derive(Debug, Clone)]
pub(crate) struct Protection {
    client: AgentClient,
    state_url: Uri,
    expires_in: Duration,
    idle_release: Duration,
}

/// Why the agent did not protect or release.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum ProtectionError {
    /// The call failed or timed out.
    #[error("the ECS agent could not be reached: {0}")]
    Unreachable(String),
    /// The agent answered with a failure or an error.
    #[error("the ECS agent refused: HTTP {status} {body}")]
    Refused {
        /// Its HTTP status.
        status: u16,
        /// Its answer.
        body: String,
    },
}

impl Protection {
    /// Protection for `expires_in` (whole minutes, 1 to 2,880, as the agent
    /// accepts) at a time, released after `idle_release` without work.
    pub(crate) fn new(
        agent_uri: &str,
        expires_in: Duration,
        idle_release: Duration,
    ) -> Result<Self, WorkerError> {
        let client = Client::builder(TokioExecutor::new()).build_http();
        let url = format!("{}/task-protection/v1/state", agent_uri.trim_end_matches('/'));
        let state_url = url.parse().map_err(|_| WorkerError::AgentUri(agent_uri.to_owned()))?;
        Ok(Self { client, state_url, expires_in, idle_release })
    }

    fn minutes(&self) -> u64 {
        self.expires_in.as_secs().div_ceil(60).clamp(1, 2_880)
    }

    async fn set(&self, enabled: bool) -> Result<(), ProtectionError> {
        let body = if enabled {
            json!({"ProtectionEnabled": true, "ExpiresInMinutes": self.minutes()})
        } else {
            json!({"ProtectionEnabled": false})
        };
        let request = Request::builder()
            .method(Method::PUT)
            .uri(self.state_url.clone())
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(body.to_string())))
            .map_err(|e| ProtectionError::Unreachable(e.to_string()))?;
        let call = async {
            let response = self.client.request(request).await.map_err(|e| e.to_string())?;
            let status = response.status().as_u16();
            let body = response.into_body().collect().await.map_err(|e| e.to_string())?;
            Ok::<_, String>((status, String::from_utf8_lossy(&body.to_bytes()).into_owned()))
        };
        let (status, body) = tokio::time::timeout(CALL_TIMEOUT, call)
            .await
            .map_err(|_| ProtectionError::Unreachable("no answer within 5 s".to_owned()))?
            .map_err(ProtectionError::Unreachable)?;
        let answer: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
        if (200..300).contains(&status) && answer.get("protection").is_some() {
            Ok(())
        } else {
            Err(ProtectionError::Refused { status, body })
        }
    }

    /// Follows `busy` (messages in work) until it closes: protects when work
    /// starts, renews before the protection runs out while work goes on,
    /// releases once idle for `idle_release` (work resuming within that time
    /// is the same busy period). One call to protect and one to release per
    /// busy period, plus renewals in a long one.
    pub(crate) async fn follow(self, mut busy: watch::Receiver<bool>) {
        let mut protected_until: Option<Instant> = None;
        loop {
            if closed(&mut busy, true).await {
                return;
            }
            protected_until = self.protect(protected_until).await;
            loop {
                let renew_at = protected_until.map(|until| until - self.expires_in / 4);
                tokio::select! {
                    closed = closed(&mut busy, false) => if closed { return },
                    () = sleep_until(renew_at.unwrap_or_else(far_future)), if renew_at.is_some() => {
                        protected_until = self.protect(None).await;
                        continue;
                    }
                }
                tokio::select! {
                    () = sleep(self.idle_release) => break,
                    closed = closed(&mut busy, true) => if closed { return },
                }
            }
            if protected_until.take().is_some() {
                match self.set(false).await {
                    Ok(()) => info!("task scale-in protection off"),
                    Err(error) => {
                        warn!(error = %error, "task scale-in protection not released; it expires on its own")
                    }
                }
            }
        }
    }

    /// Sets protection unless `current` already holds; returns its expiry.
    async fn protect(&self, current: Option<Instant>) -> Option<Instant> {
        if current.is_some() {
            return current;
        }
        let now = Instant::now();
        match self.set(true).await {
            Ok(()) => {
                info!(minutes = self.minutes(), "task scale-in protection on");
                Some(now + self.expires_in)
            }
            Err(error) => {
                warn!(error = %error, "task scale-in protection not set; working on");
                None
            }
        }
    }
}

/// Waits until `busy` is `state`; `true` when the worker is gone instead.
async fn closed(busy: &mut watch::Receiver<bool>, state: bool) -> bool {
    busy.wait_for(|busy| *busy == state).await.is_err()
}

fn far_future() -> Instant {
    Instant::now() + Duration::from_secs(86_400 * 365)
}
