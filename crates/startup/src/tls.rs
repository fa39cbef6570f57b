//! The system's trust store, read once per process and only when a TLS
//! connection first needs it, then shared by every HTTPS client of the
//! process: the AWS SDK's (which takes it as PEM) and any rustls client built
//! on [`client_config`] (the HTTP delivery's).
//!
//! It is `rustls-native-certs`' trust store: `SSL_CERT_FILE` and
//! `SSL_CERT_DIR` when set, the distribution's bundle and directory otherwise,
//! so a corporate CA added to the image is trusted. Reading it is most of what
//! a start-up would spend on TLS (hundreds of files on Debian), and a function
//! whose first invocation makes no TLS connection never reads it.

use std::collections::HashSet;
use std::fmt;
use std::sync::{Arc, LazyLock, OnceLock};

use backpressure_core::error::error_chain;
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, aws_lc_rs};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};

/// The root certificates the system trusts, each once.
pub struct SystemRoots {
    certificates: Vec<CertificateDer<'static>>,
    store: Arc<RootCertStore>,
}

impl fmt::Debug for SystemRoots {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SystemRoots").field("certificates", &self.certificates.len()).finish()
    }
}

impl SystemRoots {
    /// The certificates rustls accepts as trust anchors, in DER.
    pub fn certificates(&self) -> &[CertificateDer<'static>] {
        &self.certificates
    }

    /// The same as a rustls root store.
    pub fn store(&self) -> Arc<RootCertStore> {
        self.store.clone()
    }

    fn read() -> Self {
        let loaded = rustls_native_certs::load_native_certs();
        for error in &loaded.errors {
            tracing::warn!(error = %error_chain(error), "part of the system's trust store could not be read");
        }
        let (certificates, store, refused) = accepted(loaded.certs);
        if refused > 0 {
            tracing::warn!(
                refused,
                "certificates of the system's trust store are not valid trust anchors"
            );
        }
        if store.is_empty() {
            let variable = |name| std::env::var(name).unwrap_or_else(|_| "unset".to_owned());
            tracing::warn!(
                ssl_cert_file = variable("SSL_CERT_FILE"),
                ssl_cert_dir = variable("SSL_CERT_DIR"),
                "the trust store has no root certificates: no TLS connection can be verified; \
                 point SSL_CERT_FILE at a PEM bundle of the roots to trust"
            );
        }
        Self { certificates, store: Arc::new(store) }
    }
}

/// The certificates a root store accepts, without repeats (a bundle and its
/// directory hold the same ones), the store, and how many it refused.
fn accepted(
    loaded: Vec<CertificateDer<'static>>,
) -> (Vec<CertificateDer<'static>>, RootCertStore, usize) {
    let mut seen = HashSet::new();
    let mut store = RootCertStore::empty();
    let (mut certificates, mut refused) = (Vec::new(), 0);
    for certificate in loaded {
        if !seen.insert(certificate.as_ref().to_vec()) {
            continue;
        }
        match store.add(certificate.clone()) {
            Ok(()) => certificates.push(certificate),
            Err(_) => refused += 1,
        }
    }
    (certificates, store, refused)
}

static ROOTS: LazyLock<SystemRoots> = LazyLock::new(SystemRoots::read);

/// The system's roots, read on the first call.
pub fn system_roots() -> &'static SystemRoots {
    &ROOTS
}

/// The crypto provider of every TLS client of the process (aws-lc, as the AWS SDK's).
pub fn crypto_provider() -> Arc<CryptoProvider> {
    static PROVIDER: LazyLock<Arc<CryptoProvider>> =
        LazyLock::new(|| Arc::new(aws_lc_rs::default_provider()));
    PROVIDER.clone()
}

/// A rustls client configuration that verifies servers against
/// [`system_roots`], read at the first handshake rather than here.
pub fn client_config() -> Result<ClientConfig, rustls::Error> {
    client_config_over(Box::new(|| system_roots().store()))
}

/// What gives the trust anchors, called at the first handshake.
type Roots = Box<dyn Fn() -> Arc<RootCertStore> + Send + Sync>;

/// As [`client_config`], trusting what `roots` gives.
fn client_config_over(roots: Roots) -> Result<ClientConfig, rustls::Error> {
    let provider = crypto_provider();
    let verifier =
        Arc::new(SystemVerifier { provider: provider.clone(), roots, inner: OnceLock::new() });
    Ok(ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth())
}

/// rustls' own WebPKI verifier over the roots, built on its first use: only
/// the chain check waits for them, signatures need none. rustls offers no
/// lazily-built verifier, hence the `dangerous()` door; the tests below hold
/// it to WebPKI's refusals (an unknown issuer, another host, an expired
/// certificate) over real handshakes.
struct SystemVerifier {
    provider: Arc<CryptoProvider>,
    roots: Roots,
    inner: OnceLock<Result<Arc<WebPkiServerVerifier>, String>>,
}

impl fmt::Debug for SystemVerifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SystemVerifier").field("built", &self.inner.get().is_some()).finish()
    }
}

impl SystemVerifier {
    fn webpki(&self) -> Result<&Arc<WebPkiServerVerifier>, rustls::Error> {
        self.inner
            .get_or_init(|| {
                WebPkiServerVerifier::builder_with_provider((self.roots)(), self.provider.clone())
                    .build()
                    .map_err(|error| {
                        format!(
                            "the trust store has no usable root certificates ({error}); point \
                             SSL_CERT_FILE at a PEM bundle of the roots to trust"
                        )
                    })
            })
            .as_ref()
            .map_err(|reason| rustls::Error::General(reason.clone()))
    }
}

impl ServerCertVerifier for SystemVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.webpki()?.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        )
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests;
