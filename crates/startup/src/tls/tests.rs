//! The trust store's reading, and the lazily-built verifier held to WebPKI's
//! refusals over real handshakes with a TLS server on loopback whose
//! certificates an authority of the test's own signed.

use std::sync::atomic::{AtomicUsize, Ordering};

use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair, SanType, date_time_ymd};
use rustls::CertificateError;
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio_rustls::{TlsAcceptor, TlsConnector};

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

/// An authority of its own: its certificate, and what signs with its key.
fn authority(name: &str) -> (CertificateDer<'static>, Issuer<'static, KeyPair>) {
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(rcgen::DnType::CommonName, name);
    let certificate = params.self_signed(&key).unwrap();
    (CertificateDer::from(certificate.der().to_vec()), Issuer::new(params, key))
}

/// A server certificate for `localhost`, signed by `issuer`, valid until `expires` (y, m, d).
fn server(issuer: &Issuer<'_, KeyPair>, expires: (i32, u8, u8)) -> TlsAcceptor {
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(vec!["localhost".to_owned()]).unwrap();
    params.subject_alt_names.push(SanType::DnsName("localhost".try_into().unwrap()));
    params.not_before = date_time_ymd(2020, 1, 1);
    params.not_after = date_time_ymd(expires.0, expires.1, expires.2);
    let certificate = params.signed_by(&key, issuer).unwrap();
    let chain = vec![CertificateDer::from(certificate.der().to_vec())];
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
    let config = rustls::ServerConfig::builder_with_provider(crypto_provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .unwrap();
    TlsAcceptor::from(Arc::new(config))
}

/// One handshake of `client` with `acceptor`, as `host`, and one byte each way.
async fn handshake(
    client: &ClientConfig,
    acceptor: TlsAcceptor,
    host: &str,
) -> Result<(), std::io::Error> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let address = listener.local_addr()?;
    let serve = tokio::spawn(async move {
        let (stream, _) = listener.accept().await?;
        let mut tls = acceptor.accept(stream).await?;
        tls.write_all(b"k").await?;
        tls.flush().await
    });
    let stream = tokio::net::TcpStream::connect(address).await?;
    let name = ServerName::try_from(host.to_owned()).unwrap();
    let mut tls = TlsConnector::from(Arc::new(client.clone())).connect(name, stream).await?;
    let mut byte = [0u8; 1];
    tls.read_exact(&mut byte).await?;
    assert_eq!(&byte, b"k");
    serve.abort();
    Ok(())
}

/// Why the client refused the server's certificate.
fn refusal(error: std::io::Error) -> CertificateError {
    match error.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>()) {
        Some(rustls::Error::InvalidCertificate(why)) => why.clone(),
        _ => panic!("not a certificate refusal: {error}"),
    }
}

/// A client trusting `roots` only, counting how often it asked for them.
fn client(roots: Vec<CertificateDer<'static>>, asked: Arc<AtomicUsize>) -> ClientConfig {
    client_config_over(Box::new(move || {
        asked.fetch_add(1, Ordering::SeqCst);
        let mut store = RootCertStore::empty();
        for root in &roots {
            store.add(root.clone()).unwrap();
        }
        Arc::new(store)
    }))
    .unwrap()
}

#[tokio::test]
async fn a_trusted_chain_for_the_host_is_accepted_and_the_roots_read_at_the_first_handshake() {
    let (root, issuer) = authority("sqs-backpressure tls test: trusted");
    let asked = Arc::new(AtomicUsize::new(0));
    let client = client(vec![root], asked.clone());
    assert_eq!(asked.load(Ordering::SeqCst), 0, "the roots are read at the first handshake");
    handshake(&client, server(&issuer, (2100, 1, 1)), "localhost").await.unwrap();
    handshake(&client, server(&issuer, (2100, 1, 1)), "localhost").await.unwrap();
    assert_eq!(asked.load(Ordering::SeqCst), 1, "and only once");
}

#[tokio::test]
async fn a_chain_no_trusted_root_signed_is_refused() {
    let (root, _) = authority("sqs-backpressure tls test: trusted");
    let (_, stranger) = authority("sqs-backpressure tls test: stranger");
    let client = client(vec![root], Arc::default());
    let error = handshake(&client, server(&stranger, (2100, 1, 1)), "localhost").await.unwrap_err();
    assert_eq!(refusal(error), CertificateError::UnknownIssuer);
}

#[tokio::test]
async fn a_certificate_for_another_host_is_refused() {
    let (root, issuer) = authority("sqs-backpressure tls test: trusted");
    let client = client(vec![root], Arc::default());
    let error = handshake(&client, server(&issuer, (2100, 1, 1)), "sqs.example").await.unwrap_err();
    let why = refusal(error);
    assert!(
        matches!(
            why,
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. }
        ),
        "{why:?}"
    );
}

#[tokio::test]
async fn an_expired_certificate_is_refused() {
    let (root, issuer) = authority("sqs-backpressure tls test: trusted");
    let client = client(vec![root], Arc::default());
    let error = handshake(&client, server(&issuer, (2021, 1, 1)), "localhost").await.unwrap_err();
    let why = refusal(error);
    assert!(
        matches!(why, CertificateError::Expired | CertificateError::ExpiredContext { .. }),
        "{why:?}"
    );
}

#[tokio::test]
async fn an_empty_trust_store_refuses_with_the_variable_to_set() {
    let (_, issuer) = authority("sqs-backpressure tls test: trusted");
    let client = client(Vec::new(), Arc::default());
    let error = handshake(&client, server(&issuer, (2100, 1, 1)), "localhost").await.unwrap_err();
    assert!(error.to_string().contains("SSL_CERT_FILE"), "{error}");
}
