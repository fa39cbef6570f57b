//! The Runtime API the function calls (`next`, `response`, `error`), and its output collected.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::net::TcpListener;

use super::*;
use backpressure_core::sync::lock;

pub(super) async fn collect_lines(stream: impl AsyncRead + Unpin, state: Arc<State>) {
    let mut lines = BufReader::new(stream).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if std::env::var_os("LAMBDA_HOST_QUIET").is_none() {
            crate::log_view::echo("  | ", &line);
        }
        lock(&state.logs).push(line);
    }
}

pub(super) async fn serve(listener: TcpListener, state: Arc<State>) {
    while let Ok((stream, _)) = listener.accept().await {
        let state = state.clone();
        tokio::spawn(async move {
            let service = service_fn(move |request| route(state.clone(), request));
            let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
        });
    }
}

type HttpResponse = Response<Full<Bytes>>;

fn respond(status: StatusCode, body: &'static str) -> HttpResponse {
    let mut response = Response::new(Full::new(Bytes::from_static(body.as_bytes())));
    *response.status_mut() = status;
    response
}

async fn route(state: Arc<State>, request: Request<Incoming>) -> Result<HttpResponse, Infallible> {
    let path = request.uri().path().to_owned();
    let method = request.method().clone();
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let response = match (method, segments.as_slice()) {
        (Method::GET, ["2018-06-01", "runtime", "invocation", "next"]) => next(&state).await,
        (
            Method::POST,
            ["2018-06-01", "runtime", "invocation", id, kind @ ("response" | "error")],
        ) => {
            let body = read_json(request).await;
            let outcome =
                if *kind == "response" { Outcome::Response(body) } else { Outcome::Error(body) };
            if let Some(served) = lock(&state.served_at).remove(*id) {
                lock(&state.durations).insert((*id).to_owned(), served.elapsed());
                state.in_flight.fetch_sub(1, Ordering::SeqCst);
            }
            match lock(&state.waiting).remove(*id) {
                Some(waiter) => {
                    let _ = waiter.send(outcome);
                    respond(StatusCode::ACCEPTED, r#"{"status":"OK"}"#)
                }
                None => respond(StatusCode::BAD_REQUEST, r#"{"errorType":"InvalidRequestID"}"#),
            }
        }
        (Method::POST, ["2018-06-01", "runtime", "init", "error"]) => {
            let body = read_json(request).await;
            *lock(&state.init_error) = Some(body);
            respond(StatusCode::ACCEPTED, r#"{"status":"OK"}"#)
        }
        _ => respond(StatusCode::NOT_FOUND, r#"{"errorType":"NotFound"}"#),
    };
    Ok(response)
}

async fn next(state: &State) -> HttpResponse {
    let _ = state.first_next.set(Instant::now());
    let pending = loop {
        let notified = state.queued.notified();
        if let Some(pending) = lock(&state.queue).pop_front() {
            break pending;
        }
        notified.await;
    };
    lock(&state.served_at).insert(pending.id.clone(), Instant::now());
    let in_flight = state.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    state.most_in_flight.fetch_max(in_flight, Ordering::SeqCst);
    let mut response = Response::new(Full::new(pending.event));
    let headers = response.headers_mut();
    let header = |value: String| {
        value.parse().unwrap_or_else(|_| hyper::header::HeaderValue::from_static(""))
    };
    headers.insert("lambda-runtime-aws-request-id", header(pending.id));
    headers.insert("lambda-runtime-deadline-ms", header(pending.deadline_ms.to_string()));
    headers.insert(
        "lambda-runtime-invoked-function-arn",
        header("arn:aws:lambda:us-east-1:123456789012:function:local".to_owned()),
    );
    headers.insert("lambda-runtime-trace-id", header(pending.trace));
    headers.insert(hyper::header::CONTENT_TYPE, header("application/json".to_owned()));
    response
}

async fn read_json(request: Request<Incoming>) -> Value {
    match request.into_body().collect().await {
        Ok(body) => serde_json::from_slice(&body.to_bytes()).unwrap_or(Value::Null),
        Err(_) => Value::Null,
    }
}
