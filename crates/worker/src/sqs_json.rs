//! `ReceiveMessage` and `DeleteMessageBatch`, the two calls a worker makes
//! for every ten messages, in SQS's JSON protocol over the worker's own HTTP
//! client, signed with `aws-sigv4` and the SDK configuration's credentials.
//!
//! Why not the SDK client for these two: measured against moto, one SDK call
//! costs 280–430 µs of CPU more than the same exchange done directly
//! (`bench/run.sh worker`, `bench-sdk-call`), which was a third to a half of
//! the worker's CPU per message. Every other call (the queue's attributes,
//! visibility changes, quarantine writes) stays on the SDK.
//!
//! What the SDK would do and this does too: the endpoint from the SDK's own
//! SQS rules (region, FIPS, dual-stack, `AWS_ENDPOINT_URL_SQS` /
//! `AWS_ENDPOINT_URL`); credentials cached until five minutes before they
//! expire; the configuration's attempts (three by default, `AWS_MAX_ATTEMPTS`)
//! with jittered exponential backoff for what is worth retrying (throttling,
//! 5xx, expired credentials, transport errors, timeouts), an attempt timeout
//! and an operation timeout.

use std::time::{Duration, SystemTime};

use aws_config::SdkConfig;
use aws_credential_types::provider::error::CredentialsError;
use aws_sdk_sqs::config::endpoint::{DefaultResolver, Params, ResolveEndpoint};
use aws_sdk_sqs::config::retry::RetryConfig;
use aws_sdk_sqs::config::{Credentials, ProvideCredentials, SharedCredentialsProvider};
use aws_sigv4::http_request::{SignableBody, SignableRequest, SigningSettings, sign};
use aws_sigv4::sign::v4::SigningParams;
use aws_smithy_runtime_api::client::identity::Identity;
use backpressure_batch::SqsRecord;
use backpressure_batch::delivery::https_client;
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::header::{CONTENT_TYPE, HOST, HeaderValue, USER_AGENT};
use hyper::{Request, Uri};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio::sync::Mutex;
use tokio::time::{Instant, sleep, timeout};

/// SQS's JSON protocol.
const CONTENT: &str = "application/x-amz-json-1.0";
/// How long a credentials provider may take (the ECS container endpoint, say).
const CREDENTIALS_WITHIN: Duration = Duration::from_secs(30);
/// Credentials are renewed this long before they expire, as the SDK's cache does.
const RENEW_BEFORE: Duration = Duration::from_secs(300);
/// Error codes SQS and the AWS front end use for "slow down".
const THROTTLING: &[&str] = &[
    "Throttling",
    "ThrottlingException",
    "ThrottledException",
    "RequestThrottled",
    "RequestThrottledException",
    "TooManyRequestsException",
    "RequestLimitExceeded",
    "KmsThrottled",
    "AWS.SimpleQueueService.RequestThrottled",
];
/// Codes of credentials that stopped working: renewed once, then retried.
const EXPIRED: &[&str] = &["ExpiredToken", "ExpiredTokenException", "RequestExpired"];

/// Why a call failed.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// SQS (or the AWS front end) answered with an error.
    #[error("{code}: {message} (HTTP {status})")]
    Service { status: u16, code: String, message: String },
    /// No whole answer within the attempt's or the operation's time.
    #[error("timeout: no answer within {0:?}")]
    Timeout(Duration),
    /// The connection failed or broke.
    #[error("the request could not be sent or its answer read")]
    Transport(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// A 200 whose body is not the operation's JSON.
    #[error("the answer is not the operation's JSON")]
    Malformed(#[source] serde_json::Error),
    /// The request could not be built or signed (a header SQS's URL cannot carry, say).
    #[error("the request cannot be signed")]
    Sign(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// No credentials could be had.
    #[error("no credentials")]
    Credentials(#[source] CredentialsError),
}

impl CallError {
    /// Whether another attempt may succeed.
    fn is_retryable(&self) -> bool {
        match self {
            Self::Service { status, code, .. } => {
                *status >= 500
                    || THROTTLING.contains(&code.as_str())
                    || EXPIRED.contains(&code.as_str())
            }
            Self::Timeout(_) | Self::Transport(_) => true,
            Self::Malformed(_) | Self::Sign(_) | Self::Credentials(_) => false,
        }
    }
}

/// Why the client cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The SDK configuration has no region.
    #[error("no AWS region: set AWS_REGION")]
    NoRegion,
    /// The SDK configuration has no credentials provider.
    #[error("no AWS credentials provider in the SDK configuration")]
    NoCredentials,
    /// The SDK's SQS endpoint rules refused the settings.
    #[error("no SQS endpoint for these settings")]
    Endpoint(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The system's root certificates cannot be read.
    #[error("cannot load the system's root certificates")]
    Roots(#[source] std::io::Error),
}

/// One message as `ReceiveMessage` returns it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ReceivedMessage {
    pub message_id: Option<String>,
    pub receipt_handle: Option<String>,
    pub body: Option<String>,
    #[serde(rename = "MD5OfBody")]
    pub md5_of_body: Option<String>,
    #[serde(default)]
    pub attributes: Map<String, Value>,
    #[serde(default)]
    pub message_attributes: Map<String, Value>,
}

impl ReceivedMessage {
    /// The record the engine works on, as the Lambda event source would deliver it.
    pub fn into_record(self, queue_arn: &str, region: &str) -> SqsRecord {
        let message_attributes = self
            .message_attributes
            .into_iter()
            .map(|(name, value)| (name, attribute_json(&value)))
            .collect();
        SqsRecord {
            message_id: self.message_id,
            receipt_handle: self.receipt_handle,
            body: self.body,
            attributes: self.attributes,
            message_attributes,
            md5_of_body: self.md5_of_body,
            event_source: Some("aws:sqs".to_owned()),
            event_source_arn: Some(queue_arn.to_owned()),
            aws_region: Some(region.to_owned()),
        }
    }
}

/// `{"DataType", "StringValue" | "BinaryValue"}` as Lambda spells it:
/// `{"dataType", "stringValue" | "binaryValue"}` (binary stays base64).
fn attribute_json(value: &Value) -> Value {
    let mut json = json!({"dataType": value.get("DataType").cloned().unwrap_or(Value::Null)});
    for (theirs, ours) in [("StringValue", "stringValue"), ("BinaryValue", "binaryValue")] {
        if let Some(field) = value.get(theirs) {
            json[ours] = field.clone();
        }
    }
    json
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Received {
    #[serde(default)]
    messages: Vec<ReceivedMessage>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Deleted {
    #[serde(default)]
    failed: Vec<FailedEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct FailedEntry {
    id: String,
}

/// The error body of the JSON protocol.
#[derive(Debug, Default, Deserialize)]
struct ErrorBody {
    #[serde(rename = "__type", default)]
    kind: String,
    #[serde(alias = "Message", default)]
    message: String,
}

/// A long poll's budget, or a plain call's.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    pub attempt: Duration,
    pub operation: Duration,
}

/// Attempts and backoff, from the SDK configuration's retry settings (so
/// `AWS_MAX_ATTEMPTS` counts here too): full jitter over a ceiling that
/// doubles from the initial backoff up to the maximum.
#[derive(Debug, Clone, Copy)]
struct Retries {
    max_attempts: u32,
    initial: Duration,
    max: Duration,
}

impl Retries {
    fn from_config(config: &SdkConfig) -> Self {
        let standard = RetryConfig::standard();
        let retry = config.retry_config().unwrap_or(&standard);
        Self {
            max_attempts: retry.max_attempts().max(1),
            initial: retry.initial_backoff(),
            max: retry.max_backoff(),
        }
    }

    /// The pause after failed attempt number `attempt` (1-based).
    fn backoff(&self, attempt: u32) -> Duration {
        let ceiling = self.initial.saturating_mul(1 << attempt.saturating_sub(1).min(16));
        ceiling.min(self.max).mul_f64(fastrand::f64())
    }
}

/// The two calls, for one endpoint and region.
#[derive(Debug)]
pub struct SqsJson {
    http: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
    endpoint: Uri,
    host: HeaderValue,
    region: String,
    credentials: SharedCredentialsProvider,
    cached: Mutex<Option<Credentials>>,
    user_agent: HeaderValue,
    retries: Retries,
}

impl SqsJson {
    /// The client for `config`'s region, endpoint, credentials and retry settings.
    pub async fn new(config: &SdkConfig, user_agent: &str) -> Result<Self, SetupError> {
        Self::with_endpoint(config, user_agent, configured_endpoint(config)).await
    }

    async fn with_endpoint(
        config: &SdkConfig,
        user_agent: &str,
        configured: Option<String>,
    ) -> Result<Self, SetupError> {
        let region = config.region().ok_or(SetupError::NoRegion)?.as_ref().to_owned();
        let credentials = config.credentials_provider().ok_or(SetupError::NoCredentials)?;
        let params = Params::builder()
            .region(region.clone())
            .use_fips(config.use_fips().unwrap_or(false))
            .use_dual_stack(config.use_dual_stack().unwrap_or(false))
            .set_endpoint(configured)
            .build()
            .map_err(|e| SetupError::Endpoint(e.into()))?;
        let resolved =
            DefaultResolver::new().resolve_endpoint(&params).await.map_err(SetupError::Endpoint)?;
        let endpoint: Uri = resolved
            .url()
            .parse()
            .map_err(|e: hyper::http::uri::InvalidUri| SetupError::Endpoint(e.into()))?;
        let host = endpoint
            .authority()
            .and_then(|a| HeaderValue::from_str(a.as_str()).ok())
            .ok_or_else(|| SetupError::Endpoint(format!("{endpoint} has no host").into()))?;
        let http = https_client().map_err(SetupError::Roots)?;
        let user_agent = HeaderValue::from_str(user_agent)
            .unwrap_or_else(|_| HeaderValue::from_static("sqs-worker"));
        let retries = Retries::from_config(config);
        let cached = Mutex::default();
        Ok(Self { http, endpoint, host, region, credentials, cached, user_agent, retries })
    }

    /// One long poll for up to `max` messages with every system and message attribute.
    pub async fn receive_message(
        &self,
        queue_url: &str,
        max: i32,
        wait: Duration,
        visibility: Duration,
        budget: Budget,
    ) -> Result<Vec<ReceivedMessage>, CallError> {
        let input = json!({
            "QueueUrl": queue_url,
            "MaxNumberOfMessages": max,
            "WaitTimeSeconds": wait.as_secs(),
            "VisibilityTimeout": visibility.as_secs(),
            "MessageSystemAttributeNames": ["All"],
            "MessageAttributeNames": ["All"],
        });
        let answer = self.call("ReceiveMessage", &input, budget).await?;
        let received: Received = serde_json::from_slice(&answer).map_err(CallError::Malformed)?;
        Ok(received.messages)
    }

    /// Deletes up to ten messages (`(entry id, receipt handle)`); returns the
    /// ids of the entries SQS refused.
    pub async fn delete_message_batch(
        &self,
        queue_url: &str,
        entries: &[(String, &str)],
        budget: Budget,
    ) -> Result<Vec<String>, CallError> {
        let entries: Vec<Value> =
            entries.iter().map(|(id, handle)| json!({"Id": id, "ReceiptHandle": handle})).collect();
        let input = json!({"QueueUrl": queue_url, "Entries": entries});
        let answer = self.call("DeleteMessageBatch", &input, budget).await?;
        let deleted: Deleted = serde_json::from_slice(&answer).map_err(CallError::Malformed)?;
        Ok(deleted.failed.into_iter().map(|f| f.id).collect())
    }

    /// Attempts until one succeeds, one fails for good, attempts run out or the budget does.
    async fn call(
        &self,
        operation: &str,
        input: &Value,
        budget: Budget,
    ) -> Result<Bytes, CallError> {
        let deadline = Instant::now() + budget.operation;
        let body = Bytes::from(input.to_string());
        let mut attempt = 1;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let limit = budget.attempt.min(left);
            let result = match timeout(limit, self.attempt(operation, body.clone())).await {
                Ok(result) => result,
                Err(_) => Err(CallError::Timeout(limit)),
            };
            let error = match result {
                Ok(answer) => return Ok(answer),
                Err(error) => error,
            };
            if !error.is_retryable() || attempt >= self.retries.max_attempts {
                return Err(error);
            }
            if let CallError::Service { code, .. } = &error
                && EXPIRED.contains(&code.as_str())
            {
                *self.cached.lock().await = None;
            }
            let pause = self.retries.backoff(attempt);
            if Instant::now() + pause >= deadline {
                return Err(error);
            }
            tracing::debug!(operation, attempt, error = %error, "retrying");
            sleep(pause).await;
            attempt += 1;
        }
    }

    async fn attempt(&self, operation: &str, body: Bytes) -> Result<Bytes, CallError> {
        let credentials = self.credentials().await?;
        let request = self.signed(operation, body, credentials)?;
        let response =
            self.http.request(request).await.map_err(|e| CallError::Transport(e.into()))?;
        let status = response.status();
        let code_header = response
            .headers()
            .get("x-amzn-query-error")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .map(str::to_owned);
        let answer = response
            .into_body()
            .collect()
            .await
            .map_err(|e| CallError::Transport(e.into()))?
            .to_bytes();
        if status.is_success() {
            return Ok(answer);
        }
        let error: ErrorBody = serde_json::from_slice(&answer).unwrap_or_default();
        // `__type` may carry a namespace: `com.amazonaws.sqs#QueueDoesNotExist`.
        let kind = error.kind.rsplit('#').next().unwrap_or_default().to_owned();
        let code = [kind, code_header.unwrap_or_default()]
            .into_iter()
            .find(|c| !c.is_empty())
            .unwrap_or_else(|| status.canonical_reason().unwrap_or("error").to_owned());
        Err(CallError::Service { status: status.as_u16(), code, message: error.message })
    }

    fn signed(
        &self,
        operation: &str,
        body: Bytes,
        credentials: Credentials,
    ) -> Result<Request<Full<Bytes>>, CallError> {
        let target = HeaderValue::from_str(&format!("AmazonSQS.{operation}"))
            .map_err(|e| CallError::Sign(e.into()))?;
        let mut request = Request::post(self.endpoint.clone())
            .header(HOST, self.host.clone())
            .header(CONTENT_TYPE, CONTENT)
            .header("x-amz-target", target)
            .header(USER_AGENT, self.user_agent.clone())
            .body(Full::new(body.clone()))
            .map_err(|e| CallError::Sign(e.into()))?;
        let identity = Identity::from(credentials);
        let params = SigningParams::builder()
            .identity(&identity)
            .region(&self.region)
            .name("sqs")
            .time(SystemTime::now())
            .settings(SigningSettings::default())
            .build()
            .map_err(|e| CallError::Sign(e.into()))?
            .into();
        let headers = request
            .headers()
            .iter()
            .filter_map(|(name, value)| Some((name.as_str(), value.to_str().ok()?)));
        let uri = request.uri().to_string();
        let signable = SignableRequest::new("POST", &uri, headers, SignableBody::Bytes(&body))
            .map_err(|e| CallError::Sign(e.into()))?;
        let (instructions, _signature) =
            sign(signable, &params).map_err(|e| CallError::Sign(e.into()))?.into_parts();
        instructions.apply_to_request_http1x(&mut request);
        Ok(request)
    }

    /// The cached credentials, renewed once they are within five minutes of expiring.
    async fn credentials(&self) -> Result<Credentials, CallError> {
        let mut cached = self.cached.lock().await;
        let fresh_until = SystemTime::now() + RENEW_BEFORE;
        if let Some(credentials) = cached.as_ref()
            && credentials.expiry().is_none_or(|expiry| expiry > fresh_until)
        {
            return Ok(credentials.clone());
        }
        let renewed = timeout(CREDENTIALS_WITHIN, self.credentials.provide_credentials())
            .await
            .unwrap_or_else(|_| Err(CredentialsError::provider_timed_out(CREDENTIALS_WITHIN)))
            .map_err(CallError::Credentials)?;
        *cached = Some(renewed.clone());
        Ok(renewed)
    }
}

/// `AWS_ENDPOINT_URL_SQS`, else `AWS_ENDPOINT_URL` (what the SDK configuration
/// holds), unless `AWS_IGNORE_CONFIGURED_ENDPOINT_URLS` is true.
fn configured_endpoint(config: &SdkConfig) -> Option<String> {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    if var("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
        return None;
    }
    var("AWS_ENDPOINT_URL_SQS").or_else(|| config.endpoint_url().map(str::to_owned))
}

#[cfg(test)]
#[path = "sqs_json_tests.rs"]
mod tests;
