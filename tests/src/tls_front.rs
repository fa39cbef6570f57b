//! An HTTPS front on loopback for a plain-HTTP server (an emulator, the test
//! downstream), with a certificate from a certificate authority of its own:
//! what a corporate CA looks like to a function. The authority's certificate
//! is written to a PEM file, for `SSL_CERT_FILE`.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair, SanType};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::crypto::aws_lc_rs;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

use crate::fixtures::{BoxError, unique};

/// TLS on `https://127.0.0.1:port`, the bytes passed on to the upstream.
#[derive(Debug)]
pub struct TlsFront {
    url: String,
    ca_file: PathBuf,
    server: JoinHandle<()>,
}

impl TlsFront {
    /// A front for `upstream` (`http://host:port`, any path ignored).
    pub async fn start(upstream: &str) -> Result<Self, BoxError> {
        let upstream: hyper::Uri = upstream.parse()?;
        let upstream = format!(
            "{}:{}",
            upstream.host().ok_or("the upstream has no host")?,
            upstream.port_u16().unwrap_or(80)
        );
        let (acceptor, ca_pem) = acceptor()?;
        let ca_file = std::env::temp_dir().join(format!("{}.pem", unique("test-ca")));
        std::fs::write(&ca_file, ca_pem)?;
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let address: SocketAddr = listener.local_addr()?;
        let server = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let (acceptor, upstream) = (acceptor.clone(), upstream.clone());
                tokio::spawn(async move {
                    // A client that refuses the certificate ends the handshake: nothing to pass on.
                    let Ok(mut tls) = acceptor.accept(client).await else { return };
                    if let Ok(mut plain) = TcpStream::connect(&upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
                    }
                });
            }
        });
        Ok(Self { url: format!("https://{address}"), ca_file, server })
    }

    /// `https://127.0.0.1:port`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The authority's certificate, PEM.
    pub fn ca_file(&self) -> &Path {
        &self.ca_file
    }
}

impl Drop for TlsFront {
    fn drop(&mut self) {
        self.server.abort();
        let _ = std::fs::remove_file(&self.ca_file);
    }
}

/// A server configuration whose certificate (for 127.0.0.1) a new authority
/// signed, and that authority's certificate in PEM.
fn acceptor() -> Result<(TlsAcceptor, String), BoxError> {
    let ca_key = KeyPair::generate()?;
    let mut ca = CertificateParams::new(Vec::<String>::new())?;
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    // Each its own name: two authorities of one name would be taken for each other.
    ca.distinguished_name.push(rcgen::DnType::CommonName, unique("sqs-backpressure test CA"));
    let ca_cert = ca.self_signed(&ca_key)?;
    let issuer = Issuer::new(ca, ca_key);

    let server_key = KeyPair::generate()?;
    let mut server = CertificateParams::new(Vec::<String>::new())?;
    server.subject_alt_names.push(SanType::IpAddress([127, 0, 0, 1].into()));
    let server_cert = server.signed_by(&server_key, &issuer)?;

    let chain = vec![CertificateDer::from(server_cert.der().to_vec())];
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(server_key.serialize_der()));
    let config = ServerConfig::builder_with_provider(aws_lc_rs::default_provider().into())
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(chain, key)?;
    Ok((TlsAcceptor::from(std::sync::Arc::new(config)), ca_cert.pem()))
}
