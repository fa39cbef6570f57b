//! The AWS SDK's configuration, built once per process: every call with its
//! own budget, and one HTTPS client shared by every service client built from
//! it, so a process has one connection pool. Its TLS set-up waits for the
//! first request and trusts [`crate::tls::system_roots`], read once for every
//! client of the process.

mod credentials;
mod http;
mod lazy;

use std::time::Duration;

pub use aws_config::SdkConfig;
use aws_config::stalled_stream_protection::StalledStreamProtectionConfig;
use aws_config::timeout::TimeoutConfig;
use aws_config::{BehaviorVersion, ConfigLoader, Region};
use aws_smithy_runtime_api::client::http::SharedHttpClient;
use credentials::{ChainOnFirstUse, LoadDefaults};

pub use lazy::LazyClient;

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
/// call fails on its own instead of taking the whole invocation's time. The
/// credentials chain and each client's connector are built by the first
/// request, not here.
pub async fn load(settings: &SdkSettings) -> SdkConfig {
    let defaults = Defaults { settings: settings.clone(), http: http::https_client() };
    defaults.loader().credentials_provider(ChainOnFirstUse::new(defaults.clone())).load().await
}

/// The loader of the process's configuration, with the SDK's default
/// credentials chain unless another is set on it.
#[derive(Debug, Clone)]
struct Defaults {
    settings: SdkSettings,
    http: SharedHttpClient,
}

impl Defaults {
    fn loader(&self) -> ConfigLoader {
        let call = self.settings.api_call_timeout;
        let timeouts = TimeoutConfig::builder()
            .operation_timeout(call)
            .operation_attempt_timeout(call / 2)
            .build();
        // The attempt timeout already bounds a response that stalls; the stream
        // protection on top of it costs a throughput check on every body poll.
        // Pinned, so an SDK upgrade changes no default (retries, timeouts, the
        // HTTP client) without this line changing with it. A newer aws-config
        // deprecates each version when it adds the next: that says one exists,
        // not that this one stopped working, and must not warn in a user's build.
        #[allow(deprecated)]
        let behavior = BehaviorVersion::v2026_01_12();
        let mut loader = aws_config::defaults(behavior)
            .timeout_config(timeouts)
            .stalled_stream_protection(StalledStreamProtectionConfig::disabled())
            .http_client(self.http.clone());
        if let Some(profile) = &self.settings.profile {
            loader = loader.profile_name(profile);
        }
        if let Some(region) = &self.settings.region {
            loader = loader.region(Region::new(region.clone()));
        }
        if let Some(endpoint) = &self.settings.endpoint_url {
            loader = loader.endpoint_url(endpoint);
        }
        loader
    }
}

impl LoadDefaults for Defaults {
    async fn load(&self) -> SdkConfig {
        self.loader().load().await
    }
}
