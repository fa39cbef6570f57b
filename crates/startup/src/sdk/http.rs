//! The one HTTPS client of the AWS SDK in a process: the SDK's own (hyper,
//! rustls with aws-lc), trusting [`crate::tls::system_roots`], with its
//! connectors built by the first request.

use std::sync::LazyLock;

use aws_smithy_http_client::proxy::ProxyConfig;
use aws_smithy_http_client::tls::{self, TlsContext, TrustStore, rustls_provider::CryptoMode};
use aws_smithy_http_client::{Builder, ConnectorBuilder};
use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::connector_metadata::ConnectorMetadata;
use aws_smithy_runtime_api::client::http::{
    HttpClient, HttpConnectorSettings, SharedHttpClient, SharedHttpConnector,
};
use aws_smithy_runtime_api::client::runtime_components::{
    RuntimeComponents, RuntimeComponentsBuilder,
};
use aws_smithy_runtime_api::shared::IntoShared;
use aws_smithy_types::config_bag::ConfigBag;

use crate::tls::system_roots;

/// The client the SDK builds by default for each service client (rustls with
/// aws-lc, `HTTPS_PROXY`/`NO_PROXY` from the environment) over the system's
/// roots, built once: its connectors are cached per connection setting, so
/// every client with the same timeouts shares one pool.
pub(crate) fn https_client() -> SharedHttpClient {
    let client = Builder::new().build_with_connector_fn(|settings, components| {
        let mut connector =
            ConnectorBuilder::default().tls_provider(tls::Provider::Rustls(CryptoMode::AwsLc));
        connector.set_connector_settings(settings.cloned());
        if let Some(components) = components {
            connector.set_sleep_impl(components.sleep_impl());
        }
        connector.set_proxy_config(Some(ProxyConfig::from_env()));
        connector.set_tls_context(system_trust());
        connector.build()
    });
    FirstRequest(client).into_shared()
}

/// The system's roots as the SDK's trust store takes them: PEM, encoded once.
fn system_trust() -> TlsContext {
    static PEM: LazyLock<Vec<u8>> = LazyLock::new(|| pem(system_roots().certificates()));
    TlsContext::builder()
        .with_trust_store(TrustStore::empty().with_pem_certificate(PEM.as_slice()))
        .build()
        .unwrap_or_default()
}

fn pem(certificates: &[rustls::pki_types::CertificateDer<'_>]) -> Vec<u8> {
    let mut pem = Vec::new();
    for certificate in certificates {
        let encoded = aws_smithy_types::base64::encode(certificate.as_ref());
        pem.extend_from_slice(b"-----BEGIN CERTIFICATE-----\n");
        for line in encoded.as_bytes().chunks(64) {
            pem.extend_from_slice(line);
            pem.push(b'\n');
        }
        pem.extend_from_slice(b"-----END CERTIFICATE-----\n");
    }
    pem
}

/// The SDK's client, whose connector (and with it the TLS set-up and the
/// trust store) is built by the first request that needs it. The SDK's own
/// client builds one for every service client it is given to, to check it,
/// at start-up; a process that builds three clients and calls none before
/// its first event would pay for three.
#[derive(Debug)]
struct FirstRequest(SharedHttpClient);

impl HttpClient for FirstRequest {
    fn http_connector(
        &self,
        settings: &HttpConnectorSettings,
        components: &RuntimeComponents,
    ) -> SharedHttpConnector {
        self.0.http_connector(settings, components)
    }

    fn validate_base_client_config(
        &self,
        _: &RuntimeComponentsBuilder,
        _: &ConfigBag,
    ) -> Result<(), BoxError> {
        Ok(())
    }

    fn connector_metadata(&self) -> Option<ConnectorMetadata> {
        self.0.connector_metadata()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;

    #[test]
    fn the_pem_trust_store_decodes_to_the_same_certificates() {
        let roots = system_roots().certificates();
        assert!(
            !roots.is_empty(),
            "this machine's trust store is empty: the test needs ca-certificates"
        );
        let decoded =
            CertificateDer::pem_slice_iter(&pem(roots)).collect::<Result<Vec<_>, _>>().unwrap();
        assert_eq!(decoded, roots);
    }
}
