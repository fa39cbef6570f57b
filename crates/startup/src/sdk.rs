//! The AWS SDK's configuration, built once per process: every call with its
//! own budget, and one HTTPS client shared by every service client built from
//! it, so a process has one connection pool and reads the system's trust
//! store once, not once per client.

use std::time::Duration;

use aws_config::stalled_stream_protection::StalledStreamProtectionConfig;
use aws_config::timeout::TimeoutConfig;
use aws_config::{BehaviorVersion, Region, SdkConfig};
use aws_smithy_http_client::proxy::ProxyConfig;
use aws_smithy_http_client::tls::{self, rustls_provider::CryptoMode};
use aws_smithy_http_client::{Builder, ConnectorBuilder};
use aws_smithy_runtime_api::client::http::SharedHttpClient;

/// What a binary may set over the environment's AWS configuration.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SdkSettings {
    /// One call's budget, retries included; each attempt gets half of it.
    pub api_call_timeout: Duration,
    /// A named profile of the AWS config files (`--profile`).
    pub profile: Option<String>,
    /// The region (`--region`).
    pub region: Option<String>,
    /// One endpoint for every service (`--endpoint-url`).
    pub endpoint_url: Option<String>,
}

impl SdkSettings {
    /// The environment's configuration with this call budget.
    pub fn new(api_call_timeout: Duration) -> Self {
        Self { api_call_timeout, profile: None, region: None, endpoint_url: None }
    }
}

/// [`load`] with nothing set over the environment but the call budget.
pub async fn sdk_config(api_call_timeout: Duration) -> SdkConfig {
    load(&SdkSettings::new(api_call_timeout)).await
}

/// The AWS SDK's configuration from the environment and `settings`: a hung
/// call fails on its own instead of taking the whole invocation's time.
pub async fn load(settings: &SdkSettings) -> SdkConfig {
    let call = settings.api_call_timeout;
    let timeouts = TimeoutConfig::builder()
        .operation_timeout(call)
        .operation_attempt_timeout(call / 2)
        .build();
    // The attempt timeout already bounds a response that stalls; the stream
    // protection on top of it costs a throughput check on every body poll.
    // Pinned, so an SDK upgrade changes no default (retries, timeouts, the
    // HTTP client) without this line changing with it.
    let mut loader = aws_config::defaults(BehaviorVersion::v2026_01_12())
        .timeout_config(timeouts)
        .stalled_stream_protection(StalledStreamProtectionConfig::disabled())
        .http_client(https_client());
    if let Some(profile) = &settings.profile {
        loader = loader.profile_name(profile);
    }
    if let Some(region) = &settings.region {
        loader = loader.region(Region::new(region.clone()));
    }
    if let Some(endpoint) = &settings.endpoint_url {
        loader = loader.endpoint_url(endpoint);
    }
    loader.load().await
}

/// The client the SDK builds by default for each service client (rustls with
/// aws-lc, the system's roots, `HTTPS_PROXY`/`NO_PROXY` from the
/// environment), built once: its connectors are cached per connection
/// setting, so every client with the same timeouts shares one pool.
fn https_client() -> SharedHttpClient {
    Builder::new().build_with_connector_fn(|settings, components| {
        let mut connector =
            ConnectorBuilder::default().tls_provider(tls::Provider::Rustls(CryptoMode::AwsLc));
        connector.set_connector_settings(settings.cloned());
        if let Some(components) = components {
            connector.set_sleep_impl(components.sleep_impl());
        }
        connector.set_proxy_config(Some(ProxyConfig::from_env()));
        connector.build()
    })
}
