//! The SDK's default credentials chain, built by the first request that needs
//! credentials. `aws_config`'s loader builds the chain with every provider it
//! may try (web identity with its own STS client, SSO, ECS, IMDS), which costs
//! a Lambda function's init more than the rest of its start-up; in Lambda the
//! first provider, the environment's variables, is the one that answers.

use aws_config::SdkConfig;
use aws_credential_types::provider::error::CredentialsError;
use aws_credential_types::provider::{ProvideCredentials, SharedCredentialsProvider, future};
use tokio::sync::OnceCell;

/// The chain `aws_config` would build for a loader made by `load`, made with
/// that same loader when first asked for credentials.
#[derive(Debug)]
pub(super) struct ChainOnFirstUse<L> {
    load: L,
    chain: OnceCell<SharedCredentialsProvider>,
}

impl<L> ChainOnFirstUse<L> {
    pub(super) fn new(load: L) -> Self {
        Self { load, chain: OnceCell::new() }
    }
}

/// Loads the SDK's configuration with nothing set in place of its default
/// credentials chain.
pub(super) trait LoadDefaults: Send + Sync + std::fmt::Debug {
    fn load(&self) -> impl Future<Output = SdkConfig> + Send;
}

impl<L: LoadDefaults> ProvideCredentials for ChainOnFirstUse<L> {
    fn provide_credentials<'a>(&'a self) -> future::ProvideCredentials<'a>
    where
        Self: 'a,
    {
        future::ProvideCredentials::new(async move {
            let chain = self
                .chain
                .get_or_try_init(|| async {
                    self.load.load().await.credentials_provider().ok_or_else(|| {
                        CredentialsError::not_loaded("the SDK built no credentials chain")
                    })
                })
                .await?;
            chain.provide_credentials().await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_credential_types::Credentials;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[derive(Debug, Default)]
    struct Counted(AtomicUsize);

    impl LoadDefaults for &'static Counted {
        async fn load(&self) -> SdkConfig {
            self.0.fetch_add(1, Ordering::SeqCst);
            let credentials = Credentials::new("AKID", "secret", None, None, "test");
            SdkConfig::builder()
                .credentials_provider(SharedCredentialsProvider::new(credentials))
                .build()
        }
    }

    #[tokio::test]
    async fn the_chain_is_built_by_the_first_request_for_credentials_and_only_then() {
        static LOADS: Counted = Counted(AtomicUsize::new(0));
        let lazy = ChainOnFirstUse::new(&LOADS);
        assert_eq!(LOADS.0.load(Ordering::SeqCst), 0);
        let first = lazy.provide_credentials().await.unwrap();
        let second = lazy.provide_credentials().await.unwrap();
        assert_eq!((first.access_key_id(), second.access_key_id()), ("AKID", "AKID"));
        assert_eq!(LOADS.0.load(Ordering::SeqCst), 1);
    }
}
