//! [`LazyClient`]: an AWS service client built by its first use.

use std::fmt;
use std::sync::{Arc, OnceLock};

use aws_config::SdkConfig;

/// An AWS service client built by its first use. Building one parses its
/// service's endpoint rules (the SDK's partitions JSON and their regular
/// expressions, once per service crate), which a function's init should not
/// pay for a client that its first event may never call. Clones share the
/// one client.
pub struct LazyClient<C> {
    shared: Arc<Shared<C>>,
}

type Build<C> = Box<dyn Fn() -> C + Send + Sync>;

struct Shared<C> {
    client: OnceLock<C>,
    build: Build<C>,
}

impl<C: 'static> LazyClient<C> {
    /// A client that `build` (such as `aws_sdk_sqs::Client::new`) makes from
    /// `config` when it is first needed.
    pub fn new(config: &SdkConfig, build: fn(&SdkConfig) -> C) -> Self {
        let config = config.clone();
        Self::from_fn(move || build(&config))
    }

    fn from_fn(build: impl Fn() -> C + Send + Sync + 'static) -> Self {
        Self { shared: Arc::new(Shared { client: OnceLock::new(), build: Box::new(build) }) }
    }

    /// The client, built now if this is its first use.
    pub fn get(&self) -> &C {
        self.shared.client.get_or_init(&self.shared.build)
    }
}

/// A client already built (a test's, or one configured by hand).
impl<C: Clone + Send + Sync + 'static> From<C> for LazyClient<C> {
    fn from(client: C) -> Self {
        let built = OnceLock::from(client.clone());
        Self { shared: Arc::new(Shared { client: built, build: Box::new(move || client.clone()) }) }
    }
}

impl<C> Clone for LazyClient<C> {
    fn clone(&self) -> Self {
        Self { shared: self.shared.clone() }
    }
}

impl<C> fmt::Debug for LazyClient<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let built = self.shared.client.get().is_some();
        f.debug_struct("LazyClient").field("built", &built).finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn a_lazy_client_is_built_once_by_its_first_use_and_shared_by_its_clones() {
        static BUILT: AtomicUsize = AtomicUsize::new(0);
        let lazy = LazyClient::from_fn(|| BUILT.fetch_add(1, Ordering::SeqCst) + 1);
        let clone = lazy.clone();
        assert_eq!(BUILT.load(Ordering::SeqCst), 0, "built before its first use");
        assert_eq!((*clone.get(), *lazy.get()), (1, 1));
        assert_eq!(BUILT.load(Ordering::SeqCst), 1);
        assert_eq!(*LazyClient::from(7).get(), 7);
    }
}
