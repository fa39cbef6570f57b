//! A reverse proxy on loopback that counts the AWS API calls passing through
//! it by operation, for the benchmark's "API calls per service". It reads the
//! operation the way each protocol names it: the `X-Amz-Target` header (AWS
//! JSON), the path's `/operation/<Name>` (Smithy RPC v2 CBOR) or the body's
//! `Action=` (AWS Query).

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex, PoisonError};

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode, Uri};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

type Counts = Arc<Mutex<BTreeMap<String, u64>>>;

#[derive(Debug)]
pub struct CountingProxy {
    url: String,
    counts: Counts,
    server: JoinHandle<()>,
}

impl CountingProxy {
    /// Listens on loopback and forwards everything to `upstream` (`http://host:port`).
    pub async fn start(upstream: &str) -> Result<Self, crate::fixtures::BoxError> {
        let upstream: Uri = upstream.parse()?;
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}", listener.local_addr()?);
        let counts = Counts::default();
        let client: Client<HttpConnector, Full<Bytes>> =
            Client::builder(TokioExecutor::new()).build(HttpConnector::new());
        let tally = counts.clone();
        let server = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (client, upstream, tally) = (client.clone(), upstream.clone(), tally.clone());
                tokio::spawn(async move {
                    let service = service_fn(move |request| {
                        forward(request, client.clone(), upstream.clone(), tally.clone())
                    });
                    let _ =
                        http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
                });
            }
        });
        Ok(Self { url, counts, server })
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

    /// Calls per operation so far.
    pub fn counts(&self) -> BTreeMap<String, u64> {
        self.counts.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    pub fn total(&self) -> u64 {
        self.counts().values().sum()
    }
}

impl Drop for CountingProxy {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// The operation a request calls, by whichever convention its protocol uses.
pub fn operation(target: Option<&str>, path: &str, body: &[u8]) -> String {
    if let Some(target) = target {
        return target.rsplit('.').next().unwrap_or(target).to_owned();
    }
    if let Some((_, name)) = path.rsplit_once("/operation/") {
        return name.to_owned();
    }
    String::from_utf8_lossy(body)
        .split('&')
        .find_map(|pair| pair.strip_prefix("Action="))
        .unwrap_or("unknown")
        .to_owned()
}

async fn forward(
    request: Request<Incoming>,
    client: Client<HttpConnector, Full<Bytes>>,
    upstream: Uri,
    counts: Counts,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let (mut parts, body) = request.into_parts();
    let body = body.collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    let target = parts.headers.get("x-amz-target").and_then(|v| v.to_str().ok());
    let name = operation(target, parts.uri.path(), &body);
    *counts.lock().unwrap_or_else(PoisonError::into_inner).entry(name).or_default() += 1;

    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let authority = upstream.authority().map_or("", |a| a.as_str());
    let failed = |status: StatusCode| {
        let mut response = Response::new(Full::new(Bytes::new()));
        *response.status_mut() = status;
        Ok(response)
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
            Ok(Response::from_parts(parts, Full::new(body)))
        }
        Err(_) => failed(StatusCode::BAD_GATEWAY),
    }
}

#[cfg(test)]
mod tests {
    use super::operation;

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
}
