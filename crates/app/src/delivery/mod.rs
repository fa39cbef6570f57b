//! The HTTP delivery processor: POST each work request, unchanged, to the
//! downstream service, on keep-alive connections, within the deadline — its
//! settings, its status table, `Retry-After`, its rate limit and its trace
//! headers all in this module.

mod raw;
mod settings;
mod status;

pub(crate) use raw::RawLabels;
pub use raw::{BodyFormat, RawBody};
// Hidden: the downstream's settings as read, public for the worker's help test and the fuzzer.
#[doc(hidden)]
pub use settings::Downstream;
pub(crate) use status::{retry_after_seconds, verdict_for_status};

use std::time::{Duration, SystemTime};

use backpressure_batch::Labels;
use backpressure_batch::record::TraceContext;
use backpressure_batch::{ErrorCode, Message, Processor, Verdict, record::SqsRecord};
use backpressure_core::config::{ConfigError, Vars};
use backpressure_core::error::error_chain;
use backpressure_startup::rate::RateLimiter;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Body, Bytes};
use hyper::header::{CONTENT_TYPE, HeaderName, HeaderValue, RETRY_AFTER};
use hyper::{Request, Uri};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use tokio::time::{Instant, timeout_at};

use crate::WorkRequest;

// Lower-case constants: a name given as text is parsed and lower-cased per request.
const IDEMPOTENCY_KEY: HeaderName = HeaderName::from_static("idempotency-key");
const CORRELATION_ID: HeaderName = HeaderName::from_static("x-correlation-id");
const TENANT_ID: HeaderName = HeaderName::from_static("x-tenant-id");
const AMZN_TRACE_ID: HeaderName = HeaderName::from_static("x-amzn-trace-id");
const TRACEPARENT: HeaderName = HeaderName::from_static("traceparent");

/// A response body is read (so the connection can be reused) but never kept.
const MAX_RESPONSE_BYTES: usize = 64 * 1024;
/// How long a response body may take to arrive after its status line.
const BODY_DRAIN_BUDGET: Duration = Duration::from_secs(1);

/// Why the delivery processor cannot be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DeliveryError {
    /// A `DOWNSTREAM_*` variable is missing or invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// `DOWNSTREAM_URL` does not parse as a URI.
    #[error("DOWNSTREAM_URL {0:?} is not a valid URI")]
    Url(String, #[source] hyper::http::uri::InvalidUri),
    /// The TLS client could not be set up.
    #[error("the HTTPS client could not be set up")]
    Tls(#[source] std::io::Error),
}

/// An HTTP/1 client for `http` and `https` URLs; clones share one connection pool.
pub(crate) type HttpClient = Client<HttpsConnector<HttpConnector>, Full<Bytes>>;

/// An [`HttpClient`] trusting the system's root certificates, keeping idle
/// connections 60 s: the delivery's, shared through [`HttpDelivery::http_client`]
/// (sqs-worker's calls to the ECS agent use it too). The roots are the
/// process's one read of the trust store, made by the first `https`
/// handshake of any client, the AWS SDK's included: a plain `http`
/// downstream never reads them.
pub(crate) fn https_client() -> std::io::Result<HttpClient> {
    let tls = backpressure_startup::tls::client_config().map_err(std::io::Error::other)?;
    let connector = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_or_http()
        .enable_http1()
        .build();
    Ok(Client::builder(TokioExecutor::new())
        .pool_idle_timeout(Duration::from_secs(60))
        .build(connector))
}

/// The default processor: delivers each [`WorkRequest`] to `DOWNSTREAM_URL`
/// and turns the answer into a verdict by its status (2xx done; 408, 425,
/// 429 and 5xx retried, after any `Retry-After`; any other 4xx quarantined);
/// [`RawDelivery`] does the same for bodies as they are.
#[derive(Debug)]
pub struct HttpDelivery {
    client: HttpClient,
    url: Uri,
    timeout: Duration,
    limiter: Option<RateLimiter>,
    raw: RawLabels,
}

impl HttpDelivery {
    /// From the `DOWNSTREAM_*` variables ([`Downstream::from_vars`]), and
    /// `BODY_FORMAT`, `IDEMPOTENCY_KEY_FROM` and `TENANT_FROM` checked (the
    /// caller picks the body type by [`BodyFormat::from_vars`]); every bad
    /// one is named at once.
    pub fn from_vars<F: Fn(&str) -> Option<String>>(vars: &Vars<F>) -> Result<Self, DeliveryError> {
        let mut errors = Vec::new();
        let downstream = ConfigError::kept(Downstream::from_vars(vars), &mut errors);
        let format = ConfigError::kept(BodyFormat::from_vars(vars), &mut errors);
        let raw = ConfigError::kept(RawLabels::from_vars(vars), &mut errors);
        if let (Some(BodyFormat::Envelope), Some(raw)) = (format, &raw)
            && *raw != RawLabels::default()
        {
            tracing::warn!(
                "IDEMPOTENCY_KEY_FROM or TENANT_FROM is set but BODY_FORMAT is envelope: a work \
                 request's own idempotencyKey and tenantId are used; BODY_FORMAT=raw reads them \
                 where the variables say"
            );
        }
        match (downstream, raw) {
            (Some(downstream), Some(raw)) if errors.is_empty() => {
                Ok(Self::new(&downstream)?.raw_labels(raw))
            }
            _ => Err(ConfigError::gathered(errors).into()),
        }
    }

    /// Where a raw body's idempotency key and tenant are (by default, the
    /// message id and none), for the [`RawDelivery`] made of this one.
    pub(crate) fn raw_labels(mut self, raw: RawLabels) -> Self {
        self.raw = raw;
        self
    }

    /// A client for the downstream, with its timeout and rate limit.
    pub(crate) fn new(downstream: &Downstream) -> Result<Self, DeliveryError> {
        let url: Uri =
            downstream.url.parse().map_err(|e| DeliveryError::Url(downstream.url.clone(), e))?;
        let client = https_client().map_err(DeliveryError::Tls)?;
        Ok(Self {
            client,
            url,
            timeout: downstream.timeout,
            limiter: downstream.max_rps.and_then(RateLimiter::per_second),
            raw: RawLabels::default(),
        })
    }

    fn request(&self, message: &Message<'_, WorkRequest>) -> Result<Request<Full<Bytes>>, String> {
        let correlation = message.decoded.correlation_id.as_deref().unwrap_or(message.message_id);
        let headers = [
            (IDEMPOTENCY_KEY, "idempotencyKey", Some(message.decoded.idempotency_key.as_str())),
            (CORRELATION_ID, "correlationId", Some(correlation)),
            (TENANT_ID, "tenantId", Some(message.decoded.tenant_id.as_str())),
        ];
        self.post(message.record, message.payload, "application/json", headers)
    }

    fn raw_request(&self, message: &Message<'_, RawBody>) -> Result<Request<Full<Bytes>>, String> {
        let labels = self.raw.of(message);
        let content_type = content_type(message.record, message.decoded);
        let headers = [
            (IDEMPOTENCY_KEY, "the idempotency key", labels.idempotency_key.as_deref()),
            (CORRELATION_ID, "the message id", Some(message.message_id)),
            (TENANT_ID, "the tenant", labels.tenant_id.as_deref()),
        ];
        self.post(message.record, message.payload, content_type, headers)
    }

    /// A POST of `body` with these headers (a `None` or empty value left out) and the
    /// record's trace; `Err` names a value an HTTP header cannot carry.
    fn post(
        &self,
        record: &SqsRecord,
        body: &str,
        content_type: &str,
        headers: [(HeaderName, &str, Option<&str>); 3],
    ) -> Result<Request<Full<Bytes>>, String> {
        let mut request = Request::post(self.url.clone()).header(
            CONTENT_TYPE,
            HeaderValue::from_str(content_type)
                .map_err(|_| "the content type is not one an HTTP header can carry".to_owned())?,
        );
        for (name, what, value) in headers {
            let Some(value) = value.filter(|value| !value.is_empty()) else { continue };
            let value = HeaderValue::from_str(value)
                .map_err(|_| format!("{what} contains characters an HTTP header cannot carry"))?;
            request = request.header(name, value);
        }
        // The producer's trace, else the invocation's, is passed on when it
        // can be; a header it cannot travel in costs the trace, never the message.
        if let Some(trace) = record.trace_context().or_else(TraceContext::of_invocation) {
            if let Ok(value) = HeaderValue::from_str(trace.aws_trace_header()) {
                request = request.header(AMZN_TRACE_ID, value);
            }
            if let Some(value) = trace.traceparent().and_then(|t| HeaderValue::from_str(&t).ok()) {
                request = request.header(TRACEPARENT, value);
            }
        }
        request.body(Full::new(Bytes::copy_from_slice(body.as_bytes()))).map_err(|e| e.to_string())
    }

    async fn send<B>(&self, request: Request<Full<Bytes>>, message: &Message<'_, B>) -> Verdict {
        let deadline = message.deadline;
        if let Some(limiter) = &self.limiter
            && !limiter.wait(deadline).await
        {
            return Verdict::retry("DOWNSTREAM_MAX_RPS leaves no request slot before the deadline");
        }
        // Never past the engine's deadline: a late answer could not be reported anyway.
        let started = Instant::now();
        let give_up = (started + self.timeout).min(deadline);
        // A request that could still be under way when the claim lapses could
        // be sent a second time by whoever claims the key next.
        if let Some(lapse) = message.claim_lapse
            && give_up > lapse
        {
            let left = lapse.saturating_duration_since(started).as_millis();
            return Verdict::retry(format!(
                "its idempotency claim lapses in {left} ms, within the request's {} ms \
                 (DOWNSTREAM_TIMEOUT_MS): not POSTed, so that no second consumer can POST it too",
                self.timeout.as_millis()
            ));
        }
        // The verdict comes from the status line: a slow or endless body must
        // not turn a delivered message into a retry (a duplicate downstream).
        match timeout_at(give_up, self.client.request(request)).await {
            Ok(Ok(response)) => {
                let status = response.status().as_u16();
                let retry_after = response
                    .headers()
                    .get(RETRY_AFTER)
                    .and_then(|v| v.to_str().ok())
                    .and_then(parse_retry_after);
                drain_in_background(response.into_body());
                verdict_for_status(status, retry_after)
            }
            Ok(Err(error)) => Verdict::retry(format!(
                "the downstream could not be reached: {}",
                error_chain(&error)
            )),
            Err(_) => Verdict::retry(format!(
                "the downstream did not answer within {} ms",
                started.elapsed().as_millis()
            )),
        }
    }
}

/// A raw body's content type: its `contentType` (or `Content-Type`) message
/// attribute, else JSON's when it is JSON, else UTF-8 text.
fn content_type<'a>(record: &'a SqsRecord, body: &RawBody) -> &'a str {
    let given = ["contentType", "Content-Type", "content-type"]
        .into_iter()
        .find_map(|name| record.message_attribute(name));
    match given {
        Some(given) => given,
        None if body.is_json() => "application/json",
        None => "text/plain; charset=utf-8",
    }
}

/// The forwarder for bodies as they are (`BODY_FORMAT=raw`): the same
/// client, downstream and status table as [`HttpDelivery`], for [`RawBody`]s,
/// POSTed unchanged with their content type, the key and tenant where
/// `IDEMPOTENCY_KEY_FROM` and `TENANT_FROM` say.
#[derive(Debug)]
pub struct RawDelivery(HttpDelivery);

impl RawDelivery {
    /// From the same variables as [`HttpDelivery::from_vars`].
    pub fn from_vars<F: Fn(&str) -> Option<String>>(vars: &Vars<F>) -> Result<Self, DeliveryError> {
        HttpDelivery::from_vars(vars).map(Self)
    }
}

impl From<HttpDelivery> for RawDelivery {
    fn from(delivery: HttpDelivery) -> Self {
        Self(delivery)
    }
}

impl Processor<RawBody> for RawDelivery {
    async fn process(&self, message: &Message<'_, RawBody>) -> Verdict {
        let delivery = &self.0;
        match delivery.raw_request(message) {
            Ok(request) => delivery.send(request, message).await,
            Err(detail) => {
                Verdict::permanent(ErrorCode::Custom("unsendable_header".into()), detail)
            }
        }
    }

    fn labels(&self, message: &Message<'_, RawBody>) -> Option<Labels> {
        Some(self.0.raw.of(message))
    }

    fn side_effect_timeout(&self) -> Option<Duration> {
        Some(self.0.timeout)
    }
}

impl Processor<WorkRequest> for HttpDelivery {
    async fn process(&self, message: &Message<'_, WorkRequest>) -> Verdict {
        match self.request(message) {
            Ok(request) => self.send(request, message).await,
            Err(detail) => Verdict::permanent(ErrorCode::SchemaViolation, detail),
        }
    }

    fn side_effect_timeout(&self) -> Option<Duration> {
        Some(self.timeout)
    }
}

/// Reads the body (bounded, on its own short budget) so the connection can go
/// back to the pool; a body that does not arrive in time just closes it.
fn drain_in_background(body: hyper::body::Incoming) {
    // A `204` or an empty body is already complete: nothing to wait for.
    if body.is_end_stream() {
        return;
    }
    tokio::spawn(async move {
        let drain = Limited::new(body, MAX_RESPONSE_BYTES).collect();
        let _ = tokio::time::timeout(BODY_DRAIN_BUDGET, drain).await;
    });
}

/// `Retry-After`: delta-seconds or an HTTP-date.
fn parse_retry_after(value: &str) -> Option<Duration> {
    retry_after_seconds(value).or_else(|| {
        let at = httpdate::parse_http_date(value.trim()).ok()?;
        Some(at.duration_since(SystemTime::now()).unwrap_or_default())
    })
}

#[cfg(test)]
mod tests;
