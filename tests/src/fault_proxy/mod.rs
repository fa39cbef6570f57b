//! A reverse proxy on loopback between a function and an emulator. It counts
//! the AWS API calls passing through it by operation, injects the faults a
//! test asks for (deny, throttle, 500, delay, hang, failed batch entries), and
//! enforces what moto does not: SQS's rule on the characters a message body
//! or string attribute may hold.
//!
//! It reads the operation the way each protocol names it: the `X-Amz-Target`
//! header (AWS JSON), the path's `/operation/<Name>` (Smithy RPC v2 CBOR),
//! the method and path of an S3 object request (REST XML), or the body's
//! `Action=` (AWS Query).

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use backpressure_core::sync::lock;
use std::time::Duration;

use futures::StreamExt;
use futures::stream::BoxStream;
use http_body_util::{BodyExt, Either, Full, StreamBody};
use hyper::body::Frame;
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode, Uri};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

mod protocol;
mod rule;

use protocol::*;
pub use protocol::{operation, s3_operation, sqs_accepts};
pub use rule::{Fault, Rule};

#[derive(Debug, Default)]
struct Shared {
    counts: BTreeMap<String, u64>,
    rules: Vec<Rule>,
    /// Entries refused for characters SQS does not accept.
    refused_characters: u64,
}

type State = Arc<Mutex<Shared>>;

#[derive(Debug)]
pub struct FaultProxy {
    url: String,
    state: State,
    server: JoinHandle<()>,
}

impl FaultProxy {
    /// Listens on loopback and forwards everything to `upstream` (`http://host:port`).
    pub async fn start(upstream: &str) -> Result<Self, crate::fixtures::BoxError> {
        let upstream: Uri = upstream.parse()?;
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}", listener.local_addr()?);
        let state = State::default();
        let client: Client<HttpConnector, Full<Bytes>> =
            Client::builder(TokioExecutor::new()).build(HttpConnector::new());
        let shared = state.clone();
        let server = tokio::spawn(async move {
            let mut connections = tokio::task::JoinSet::new();
            while let Ok((stream, _)) = listener.accept().await {
                let (client, upstream, shared) = (client.clone(), upstream.clone(), shared.clone());
                connections.spawn(async move {
                    let service = service_fn(move |request| {
                        handle(request, client.clone(), upstream.clone(), shared.clone())
                    });
                    let _ =
                        http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
                });
            }
        });
        Ok(Self { url, state, server })
    }

    /// One proxy in front of each endpoint in `ENDPOINT_VARS`, with the
    /// variable each replaces.
    pub async fn for_each_endpoint() -> Result<Vec<(&'static str, Self)>, crate::fixtures::BoxError>
    {
        let mut proxies = Vec::new();
        for name in crate::fixtures::ENDPOINT_VARS {
            let upstream = std::env::var(name).map_err(|_| format!("{name} is not set"))?;
            proxies.push((name, Self::start(&upstream).await?));
        }
        Ok(proxies)
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// Adds a rule; the first matching rule applies.
    pub fn inject(&self, rule: Rule) {
        lock(&self.state).rules.push(rule);
    }

    pub fn clear(&self) {
        lock(&self.state).rules.clear();
    }

    /// Calls per operation so far, faulted or not.
    pub fn counts(&self) -> BTreeMap<String, u64> {
        lock(&self.state).counts.clone()
    }

    pub fn total(&self) -> u64 {
        self.counts().values().sum()
    }

    /// Messages or entries refused because SQS would not accept their characters.
    pub fn refused_characters(&self) -> u64 {
        lock(&self.state).refused_characters
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        // Aborting the accept loop drops its JoinSet, which aborts every
        // connection, hung ones included.
        self.server.abort();
    }
}

async fn handle(
    request: Request<Incoming>,
    client: Client<HttpConnector, Full<Bytes>>,
    upstream: Uri,
    state: State,
) -> Result<Response<ProxyBody>, Infallible> {
    let (parts, body) = request.into_parts();
    let body = body.collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    let target = parts.headers.get("x-amz-target").and_then(|v| v.to_str().ok());
    let signed_for_s3 = parts
        .headers
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|auth| auth.contains("/s3/aws4_request"));
    let protocol = match target {
        Some(_) => Protocol::Json,
        None if signed_for_s3 => Protocol::RestXml,
        None if parts.uri.path().contains("/operation/") => Protocol::Cbor,
        None => Protocol::Query,
    };
    let name = if protocol == Protocol::RestXml {
        s3_operation(parts.method.as_str(), parts.uri.path(), parts.uri.query().unwrap_or(""))
    } else {
        operation(target, parts.uri.path(), &body)
    };
    let fault = {
        let mut shared = lock(&state);
        *shared.counts.entry(name.clone()).or_default() += 1;
        let path = parts.uri.path();
        shared.rules.iter_mut().find(|rule| rule.matches(&name, path, &body)).and_then(|rule| {
            if rule.after > 0 {
                rule.after -= 1;
                return None;
            }
            if let Some(times) = &mut rule.times {
                *times -= 1;
            }
            Some(rule.fault.clone())
        })
    };
    let message = format!("injected by the fault proxy for {name}");
    let response = match fault {
        // S3 answers with its own codes and statuses.
        Some(Fault::Deny) if protocol == Protocol::RestXml => {
            error_response(protocol, StatusCode::FORBIDDEN, "AccessDenied", &message)
        }
        Some(Fault::Throttle) if protocol == Protocol::RestXml => {
            error_response(protocol, StatusCode::SERVICE_UNAVAILABLE, "SlowDown", &message)
        }
        Some(Fault::ServerError) if protocol == Protocol::RestXml => {
            error_response(protocol, StatusCode::INTERNAL_SERVER_ERROR, "InternalError", &message)
        }
        Some(Fault::Deny) => {
            error_response(protocol, StatusCode::BAD_REQUEST, "AccessDeniedException", &message)
        }
        Some(Fault::Throttle) => {
            error_response(protocol, StatusCode::BAD_REQUEST, "ThrottlingException", &message)
        }
        Some(Fault::ServerError) => {
            error_response(protocol, StatusCode::INTERNAL_SERVER_ERROR, "InternalFailure", &message)
        }
        Some(Fault::Hang) => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            error_response(protocol, StatusCode::GATEWAY_TIMEOUT, "Hang", &message)
        }
        Some(Fault::Delay(delay)) => {
            tokio::time::sleep(delay).await;
            forward_sqs_checked(parts, body, &name, &[], &client, &upstream, &state).await
        }
        Some(Fault::UnprocessedKeys) => {
            let request: Value = serde_json::from_slice(&body).unwrap_or_default();
            json_response(&json!({"Responses": {}, "UnprocessedKeys": request["RequestItems"]}))
        }
        Some(Fault::RefuseWithoutItem) => error_response(
            protocol,
            StatusCode::BAD_REQUEST,
            "ConditionalCheckFailedException",
            "The conditional request failed",
        ),
        Some(Fault::NoItem) => json_response(&json!({})),
        Some(Fault::LoseAnswer) => {
            let _landed =
                forward_sqs_checked(parts, body, &name, &[], &client, &upstream, &state).await;
            let code =
                if protocol == Protocol::RestXml { "InternalError" } else { "InternalFailure" };
            error_response(protocol, StatusCode::INTERNAL_SERVER_ERROR, code, &message)
        }
        Some(Fault::StallBody) => {
            let answer = forward_sqs_checked(parts, body, &name, &[], &client, &upstream, &state);
            return Ok(stalled_mid_body(answer.await).await);
        }
        Some(Fault::FailEntries(positions)) => {
            forward_sqs_checked(parts, body, &name, &positions, &client, &upstream, &state).await
        }
        None => forward_sqs_checked(parts, body, &name, &[], &client, &upstream, &state).await,
    };
    Ok(response.map(Either::Left))
}

/// What the proxy answers: a whole body, or one that stalls.
type ProxyBody =
    Either<Full<Bytes>, StreamBody<BoxStream<'static, Result<Frame<Bytes>, Infallible>>>>;

/// `answer`'s headers (its length included) and the first half of its body,
/// then a body that never goes on.
async fn stalled_mid_body(answer: HttpResponse) -> Response<ProxyBody> {
    let (parts, body) = answer.into_parts();
    let whole = body.collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    let half = whole.slice(..whole.len() / 2);
    let frames = futures::stream::once(async move { Ok(Frame::data(half)) })
        .chain(futures::stream::pending());
    Response::from_parts(parts, Either::Right(StreamBody::new(frames.boxed())))
}

/// Forwards the request. SQS sends have entries with characters SQS refuses
/// (and the entries at `fail_positions`) taken out and reported as failed,
/// as SQS itself would.
async fn forward_sqs_checked(
    mut parts: hyper::http::request::Parts,
    body: Bytes,
    operation: &str,
    fail_positions: &[usize],
    client: &Client<HttpConnector, Full<Bytes>>,
    upstream: &Uri,
    state: &State,
) -> HttpResponse {
    let batch = matches!(
        operation,
        "SendMessageBatch" | "ChangeMessageVisibilityBatch" | "DeleteMessageBatch"
    );
    if operation == "SendMessage"
        && let Ok(request) = serde_json::from_slice::<Value>(&body)
        && !entry_acceptable(&request)
    {
        lock(state).refused_characters += 1;
        return error_response(
            Protocol::Json,
            StatusCode::BAD_REQUEST,
            "InvalidMessageContents",
            "Invalid characters found",
        );
    }
    let (body, failed) = match serde_json::from_slice::<Value>(&body) {
        Ok(mut request) if batch => {
            let entries =
                request.get("Entries").and_then(Value::as_array).cloned().unwrap_or_default();
            let mut kept = Vec::new();
            let mut failed = Vec::new();
            for (position, entry) in entries.into_iter().enumerate() {
                let id = entry.get("Id").cloned().unwrap_or(Value::Null);
                if fail_positions.contains(&position) {
                    failed.push(json!({"Id": id, "SenderFault": false, "Code": "InternalError",
                                       "Message": "injected by the fault proxy"}));
                } else if operation == "SendMessageBatch" && !entry_acceptable(&entry) {
                    lock(state).refused_characters += 1;
                    failed.push(
                        json!({"Id": id, "SenderFault": true, "Code": "InvalidMessageContents",
                                       "Message": "Invalid characters found"}),
                    );
                } else {
                    kept.push(entry);
                }
            }
            if kept.is_empty() {
                return json_response(&json!({"Successful": [], "Failed": failed}));
            }
            request["Entries"] = Value::Array(kept);
            (Bytes::from(request.to_string()), failed)
        }
        _ => (body, Vec::new()),
    };
    parts.headers.remove(hyper::header::CONTENT_LENGTH);
    let response = forward(parts, body, client, upstream).await;
    if failed.is_empty() {
        return response;
    }
    let (mut parts, upstream_body) = response.into_parts();
    let upstream_body = upstream_body.collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    let Ok(mut answer) = serde_json::from_slice::<Value>(&upstream_body) else {
        return Response::from_parts(parts, Full::new(upstream_body));
    };
    if let Some(object) = answer.as_object_mut() {
        let list = object.entry("Failed").or_insert_with(|| Value::Array(Vec::new()));
        if let Some(list) = list.as_array_mut() {
            list.extend(failed);
        }
    }
    parts.headers.remove(hyper::header::CONTENT_LENGTH);
    Response::from_parts(parts, Full::new(Bytes::from(answer.to_string())))
}

async fn forward(
    mut parts: hyper::http::request::Parts,
    body: Bytes,
    client: &Client<HttpConnector, Full<Bytes>>,
    upstream: &Uri,
) -> HttpResponse {
    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let authority = upstream.authority().map_or("", |a| a.as_str());
    let failed = |status: StatusCode| {
        let mut response = Response::new(Full::new(Bytes::new()));
        *response.status_mut() = status;
        response
    };
    let Ok(uri) = format!("http://{authority}{path}").parse::<Uri>() else {
        return failed(StatusCode::BAD_REQUEST);
    };
    parts.uri = uri;
    parts.headers.remove(hyper::header::HOST);
    match client.request(Request::from_parts(parts, Full::new(body))).await {
        Ok(response) => {
            let (parts, body) = response.into_parts();
            let body = body.collect().await.map(|b| b.to_bytes()).unwrap_or_default();
            Response::from_parts(parts, Full::new(body))
        }
        Err(_) => failed(StatusCode::BAD_GATEWAY),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s3_operations_are_read_from_method_and_path() {
        assert_eq!(s3_operation("PUT", "/bucket/q/m-1", ""), "PutObject");
        assert_eq!(s3_operation("GET", "/bucket/q/m-1", "x-id=GetObject"), "GetObject");
        assert_eq!(s3_operation("DELETE", "/bucket/q/m-1", ""), "DeleteObject");
        assert_eq!(s3_operation("PUT", "/bucket", ""), "CreateBucket");
    }

    #[test]
    fn operations_are_read_by_protocol() {
        let json = operation(Some("AmazonSQS.GetQueueAttributes"), "/", b"{}");
        assert_eq!(json, "GetQueueAttributes");
        let cbor =
            operation(None, "/service/GraniteServiceVersion20100801/operation/PutMetricData", b"");
        assert_eq!(cbor, "PutMetricData");
        let query = operation(None, "/", b"Action=PutMetricData&Version=2010-08-01");
        assert_eq!(query, "PutMetricData");
        assert_eq!(operation(None, "/", b""), "unknown");
    }

    #[test]
    fn the_sqs_character_rule() {
        for good in ["", "plain", "tab\tnew\nline\r", "\u{D7FF}\u{E000}\u{FFFD}", "😀\u{10FFFF}"]
        {
            assert!(sqs_accepts(good), "{good:?}");
        }
        for bad in ["\u{0}", "a\u{1}b", "\u{B}", "\u{C}", "\u{1F}", "\u{FFFE}", "\u{FFFF}"] {
            assert!(!sqs_accepts(bad), "{bad:?}");
        }
        let entry = json!({"MessageBody": "ok",
                           "MessageAttributes": {"tenantId": {"DataType": "String", "StringValue": "\u{0}"}}});
        assert!(!entry_acceptable(&entry));
    }

    #[test]
    fn cbor_error_bodies_are_maps_of_text() {
        let body = cbor_error("ThrottlingException", "slow down");
        assert_eq!(body[0], 0xA2);
        assert_eq!(body[1], 0x66); // "__type", 6 bytes
        assert_eq!(&body[2..8], b"__type");
        assert_eq!(body[8], 0x73); // 19 bytes follow
        assert_eq!(&body[9..28], b"ThrottlingException");
    }
}
