//! A latency model of the three AWS APIs the publisher calls, for the fan-out
//! benchmark only (never for tests of behaviour): every call is answered after
//! a fixed delay, all calls concurrently, as a regional endpoint would, with
//! the smallest valid answer. It measures how the publisher's own fan-out
//! scales when the service is not the bottleneck, which the emulators (each
//! serialising its calls) cannot show.

use std::convert::Infallible;
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use e2e_tests::fixtures::BoxError;

#[derive(Debug)]
pub struct LatencyModel {
    url: String,
    server: JoinHandle<()>,
}

impl LatencyModel {
    pub async fn start(delay: Duration) -> Result<Self, BoxError> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}", listener.local_addr()?);
        let server = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let service = service_fn(move |request| answer(request, delay));
                    let _ =
                        http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
                });
            }
        });
        Ok(Self { url, server })
    }

    pub fn url(&self) -> &str {
        &self.url
    }
}

impl Drop for LatencyModel {
    fn drop(&mut self) {
        self.server.abort();
    }
}

fn reply(content_type: &str, body: Bytes) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(body));
    if let Ok(value) = content_type.parse() {
        response.headers_mut().insert(hyper::header::CONTENT_TYPE, value);
    }
    response
}

async fn answer(
    request: Request<Incoming>,
    delay: Duration,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let target = request
        .headers()
        .get("x-amz-target")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let path = request.uri().path().to_owned();
    let body = request.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    tokio::time::sleep(delay).await;
    let response = match target.as_str() {
        "AmazonSQS.GetQueueAttributes" => reply(
            "application/x-amz-json-1.0",
            Bytes::from(
                json!({"Attributes": {
                    "ApproximateNumberOfMessages": "3",
                    "ApproximateNumberOfMessagesNotVisible": "0",
                    "ApproximateNumberOfMessagesDelayed": "0"}})
                .to_string(),
            ),
        ),
        "AmazonEC2ContainerServiceV20141113.DescribeServices" => {
            let asked: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let services: Vec<Value> = asked["services"]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default()
                .iter()
                .map(|name| {
                    json!({"serviceName": name, "status": "ACTIVE",
                           "runningCount": 1, "pendingCount": 0, "desiredCount": 1})
                })
                .collect();
            reply(
                "application/x-amz-json-1.1",
                Bytes::from(json!({"services": services, "failures": []}).to_string()),
            )
        }
        _ if path.ends_with("/operation/PutMetricData") => {
            // Smithy RPC v2 CBOR: an empty output is an empty map (0xA0).
            let mut response = reply("application/cbor", Bytes::from_static(&[0xA0]));
            response
                .headers_mut()
                .insert("smithy-protocol", hyper::header::HeaderValue::from_static("rpc-v2-cbor"));
            response
        }
        _ => {
            let mut response = reply("text/plain", Bytes::from_static(b"not modelled"));
            *response.status_mut() = StatusCode::BAD_REQUEST;
            response
        }
    };
    Ok(response)
}
