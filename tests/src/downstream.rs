//! A downstream HTTP service for the consumer's tests and demo, on loopback.
//! It answers by the work request's `operation`: `*.reject` → 422,
//! `*.throttle` → 429 with `Retry-After: 30`, `*.fail` → 503, `*.pause` → 204 after 300 ms, `*.slow` →
//! 204 after 10 s, `*.hold` → 204 once `release_held` is called (or after
//! 10 minutes), `*.jitter` → 204 after 0–39 ms (by the body), `*.slowbody` → 202 at once with its body 3 s later,
//! `*.rejectslowbody` → 422 likewise, anything else → 204. At `fixed_url`
//! its validation is "fixed": `*.reject` → 204 too. Every request is
//! recorded.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use backpressure_core::sync::lock;
use std::time::Duration;

use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Bytes, Frame, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// One request as the downstream received it.
#[derive(Debug, Clone, PartialEq)]
pub struct Received {
    pub path: String,
    pub content_type: Option<String>,
    pub idempotency_key: Option<String>,
    pub correlation_id: Option<String>,
    pub tenant_id: Option<String>,
    pub amzn_trace_id: Option<String>,
    pub traceparent: Option<String>,
    pub body: String,
    pub status: u16,
    /// When the request arrived.
    pub at: std::time::Instant,
}

const FIXED_PATH: &str = "/work-fixed";

/// Requests being answered, and the most at once.
#[derive(Debug, Default)]
struct InFlight {
    now: AtomicUsize,
    most: AtomicUsize,
    /// Every request that arrived, answered yet or not.
    arrived: AtomicUsize,
}

#[derive(Debug)]
pub struct Downstream {
    address: SocketAddr,
    received: Arc<Mutex<Vec<Received>>>,
    in_flight: Arc<InFlight>,
    release: watch::Sender<bool>,
    server: JoinHandle<()>,
}

impl Downstream {
    pub async fn start() -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let address = listener.local_addr()?;
        let received: Arc<Mutex<Vec<Received>>> = Arc::default();
        let in_flight: Arc<InFlight> = Arc::default();
        let (log, gauge) = (received.clone(), in_flight.clone());
        let release = watch::Sender::new(false);
        let held = release.clone();
        let server = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (log, held, gauge) = (log.clone(), held.clone(), gauge.clone());
                tokio::spawn(async move {
                    let service = service_fn(move |request| {
                        let gauge = gauge.clone();
                        let answering = answer(request, log.clone(), held.subscribe());
                        async move {
                            gauge.arrived.fetch_add(1, Ordering::SeqCst);
                            let now = gauge.now.fetch_add(1, Ordering::SeqCst) + 1;
                            gauge.most.fetch_max(now, Ordering::SeqCst);
                            let response = answering.await;
                            gauge.now.fetch_sub(1, Ordering::SeqCst);
                            response
                        }
                    });
                    let _ =
                        http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
                });
            }
        });
        Ok(Self { address, received, in_flight, release, server })
    }

    pub fn url(&self) -> String {
        format!("http://{}/work", self.address)
    }

    /// The same server with `*.reject` accepted: the downstream after a fix.
    pub fn fixed_url(&self) -> String {
        format!("http://{}{FIXED_PATH}", self.address)
    }

    /// Answers every `*.hold` request, waiting or still to come.
    pub fn release_held(&self) {
        self.release.send_replace(true);
    }

    /// The most requests it was answering at once.
    /// Requests that arrived, those still held or given up on by the caller included.
    pub fn arrived(&self) -> usize {
        self.in_flight.arrived.load(Ordering::SeqCst)
    }

    pub fn most_in_flight(&self) -> usize {
        self.in_flight.most.load(Ordering::SeqCst)
    }

    pub fn received(&self) -> Vec<Received> {
        lock(&self.received).clone()
    }
}

impl Drop for Downstream {
    fn drop(&mut self) {
        self.server.abort();
    }
}

fn header(request: &Request<Incoming>, name: &str) -> Option<String> {
    request.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned)
}

async fn answer(
    request: Request<Incoming>,
    log: Arc<Mutex<Vec<Received>>>,
    mut released: watch::Receiver<bool>,
) -> Result<Response<BoxBody<Bytes, Infallible>>, Infallible> {
    let mut received = Received {
        path: request.uri().path().to_owned(),
        content_type: header(&request, "content-type"),
        idempotency_key: header(&request, "idempotency-key"),
        correlation_id: header(&request, "x-correlation-id"),
        tenant_id: header(&request, "x-tenant-id"),
        amzn_trace_id: header(&request, "x-amzn-trace-id"),
        traceparent: header(&request, "traceparent"),
        body: String::new(),
        status: 0,
        at: std::time::Instant::now(),
    };
    let body = request.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    received.body = String::from_utf8_lossy(&body).into_owned();
    let operation = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|v| v.get("operation").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_default();
    let mut response = Response::new(Full::new(Bytes::new()).boxed());
    let fixed = received.path == FIXED_PATH;
    let status = match operation.rsplit('.').next().unwrap_or_default() {
        "reject" if fixed => StatusCode::NO_CONTENT,
        "reject" => StatusCode::UNPROCESSABLE_ENTITY,
        "throttle" => {
            response
                .headers_mut()
                .insert("retry-after", hyper::header::HeaderValue::from_static("30"));
            StatusCode::TOO_MANY_REQUESTS
        }
        "fail" => StatusCode::SERVICE_UNAVAILABLE,
        "slowbody" => {
            *response.body_mut() = slow_body();
            StatusCode::ACCEPTED
        }
        "rejectslowbody" => {
            *response.body_mut() = slow_body();
            StatusCode::UNPROCESSABLE_ENTITY
        }
        "slow" => {
            tokio::time::sleep(Duration::from_secs(10)).await;
            StatusCode::NO_CONTENT
        }
        "pause" => {
            tokio::time::sleep(Duration::from_millis(300)).await;
            StatusCode::NO_CONTENT
        }
        "hold" => {
            let _ = tokio::time::timeout(Duration::from_secs(600), released.wait_for(|r| *r)).await;
            StatusCode::NO_CONTENT
        }
        "jitter" => {
            let spread = body.iter().map(|&b| u64::from(b)).sum::<u64>() % 40;
            tokio::time::sleep(Duration::from_millis(spread)).await;
            StatusCode::NO_CONTENT
        }
        _ => StatusCode::NO_CONTENT,
    };
    *response.status_mut() = status;
    received.status = status.as_u16();
    lock(&log).push(received);
    Ok(response)
}

/// A body whose only chunk comes 3 s after the status line.
fn slow_body() -> BoxBody<Bytes, Infallible> {
    let chunk = futures::stream::once(async {
        tokio::time::sleep(Duration::from_secs(3)).await;
        Ok::<_, Infallible>(Frame::data(Bytes::from_static(b"{\"accepted\":true}")))
    });
    StreamBody::new(chunk).boxed()
}
