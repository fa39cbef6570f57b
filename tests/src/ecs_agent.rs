//! The ECS container agent's task scale-in protection endpoint
//! (`PUT /task-protection/v1/state`), as the AWS documentation describes it,
//! on loopback: it records every call and either protects or refuses.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use backpressure_core::sync::lock;

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::fixtures::BoxError;

/// What the agent answers to `ProtectionEnabled: true`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Protect,
    /// As during a deployment: a `failure` naming the reason.
    Refuse,
    /// Takes the request and never answers.
    Hang,
}

/// One agent on a loopback port; its URI is what ECS puts in `ECS_AGENT_URI`.
#[derive(Debug)]
pub struct EcsAgent {
    uri: String,
    calls: Arc<Mutex<Vec<(String, String, Value)>>>,
    server: JoinHandle<()>,
}

impl Drop for EcsAgent {
    fn drop(&mut self) {
        self.server.abort();
    }
}

const TASK_ARN: &str = "arn:aws:ecs:us-east-1:123456789012:task/cluster/0123456789abcdef";

impl EcsAgent {
    pub async fn start(answer: Answer) -> Result<Self, BoxError> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let uri = format!("http://{}/api/0123456789abcdef-1234", listener.local_addr()?);
        let calls = Arc::new(Mutex::new(Vec::new()));
        let log = calls.clone();
        let server = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let log = log.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |request| respond(request, log.clone(), answer));
                    let _ =
                        http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
                });
            }
        });
        Ok(Self { uri, calls, server })
    }

    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// `(method, path, body)` of every call, in order.
    pub fn calls(&self) -> Vec<(String, String, Value)> {
        lock(&self.calls).clone()
    }

    /// The `ProtectionEnabled` of every PUT, in order.
    pub fn protections(&self) -> Vec<bool> {
        self.calls()
            .iter()
            .filter(|(method, _, _)| method == "PUT")
            .filter_map(|(_, _, body)| body["ProtectionEnabled"].as_bool())
            .collect()
    }
}

async fn respond(
    request: Request<Incoming>,
    log: Arc<Mutex<Vec<(String, String, Value)>>>,
    answer: Answer,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let method = request.method().to_string();
    let path = request.uri().path().to_owned();
    let body = request.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let enabled = body["ProtectionEnabled"].as_bool().unwrap_or(false);
    lock(&log).push((method, path.clone(), body));
    if answer == Answer::Hang {
        std::future::pending::<()>().await;
    }
    let (status, answer) = if !path.ends_with("/task-protection/v1/state") {
        (StatusCode::NOT_FOUND, json!({"error": {"Code": "NotFound", "Message": path}}))
    } else if enabled && answer == Answer::Refuse {
        (
            StatusCode::BAD_REQUEST,
            json!({"failure": {"Arn": TASK_ARN, "Reason": "DEPLOYMENT_BLOCKED", "Detail": "a deployment is in progress"}}),
        )
    } else {
        (
            StatusCode::OK,
            json!({"protection": {"ExpirationDate": "2026-11-30T12:00:00Z", "ProtectionEnabled": enabled, "TaskArn": TASK_ARN}}),
        )
    };
    let mut response = Response::new(Full::new(Bytes::from(answer.to_string())));
    *response.status_mut() = status;
    Ok(response)
}
