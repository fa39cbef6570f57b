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
    let provider = crypto_provider();
    let verifier = Arc::new(SystemVerifier { provider: provider.clone(), inner: OnceLock::new() });
    Ok(ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth())
}

/// rustls' own WebPKI verifier over [`system_roots`], built on its first use.
/// Signatures need no roots, so only the chain check waits for them.
#[derive(Debug)]
struct SystemVerifier {
    provider: Arc<CryptoProvider>,
    inner: OnceLock<Result<Arc<WebPkiServerVerifier>, String>>,
}

impl SystemVerifier {
    fn webpki(&self) -> Result<&Arc<WebPkiServerVerifier>, rustls::Error> {
        self.inner
            .get_or_init(|| {
                WebPkiServerVerifier::builder_with_provider(
                    system_roots().store(),
                    self.provider.clone(),
                )
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
mod tests {
    use super::*;

    #[test]
    fn repeats_are_dropped_and_what_is_not_a_certificate_is_refused() {
        let roots = system_roots();
        let Some(first) = roots.certificates().first().cloned() else {
            panic!("this machine's trust store is empty: the test needs ca-certificates");
        };
        let junk = CertificateDer::from(vec![0x30, 0x03, 0x02, 0x01, 0x00]);
        let (kept, store, refused) = accepted(vec![first.clone(), junk, first.clone()]);
        assert_eq!(kept, vec![first]);
        assert_eq!(store.len(), 1);
        assert_eq!(refused, 1);
    }

    #[test]
    fn the_system_store_is_read_once_and_holds_each_root_once() {
        let (a, b) = (system_roots(), system_roots());
        assert!(std::ptr::eq(a, b));
        let distinct: HashSet<&[u8]> = a.certificates().iter().map(|c| c.as_ref()).collect();
        assert_eq!(distinct.len(), a.certificates().len());
        assert_eq!(a.store().len(), a.certificates().len());
    }
}
