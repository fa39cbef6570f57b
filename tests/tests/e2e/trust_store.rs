//! The trust store a function's image carries: batch-consumer reaches an
//! HTTPS downstream and an HTTPS SQS endpoint whose certificates a CA of the
//! test's own signed, when `SSL_CERT_FILE` names that CA (as a corporate CA
//! added to an image would be), and refuses both when it does not. The AWS
//! SDK's client and the delivery's share the one read of the trust store.

use std::time::Duration;

use e2e_tests::downstream::Downstream;
use e2e_tests::fixtures::{Aws, binary, unique};
use e2e_tests::runtime_host::LambdaHost;
use e2e_tests::tls_front::TlsFront;
use serde_json::Value;

const TIMEOUT: Duration = Duration::from_secs(30);

fn standard_event() -> Value {
    let path = format!("{}/../events/sqs-standard.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn ids(event: &Value) -> Vec<String> {
    let records = event["Records"].as_array().unwrap();
    records.iter().map(|r| r["messageId"].as_str().unwrap().to_owned()).collect()
}

struct Fronted {
    aws: Aws,
    downstream: Downstream,
    downstream_tls: TlsFront,
    sqs_tls: TlsFront,
    quarantine_url: String,
}

async fn fronted() -> Fronted {
    let aws = Aws::from_env().await.unwrap();
    let quarantine_url = aws.create_queue(&unique("quarantine-tls")).await.unwrap();
    let downstream = Downstream::start().await.unwrap();
    let downstream_tls = TlsFront::start(&downstream.url()).await.unwrap();
    let sqs_tls = TlsFront::start(&std::env::var("AWS_ENDPOINT_URL_SQS").unwrap()).await.unwrap();
    Fronted { aws, downstream, downstream_tls, sqs_tls, quarantine_url }
}

impl Fronted {
    /// One invocation over HTTPS only, trusting `ca_file` if given.
    async fn invoke(&self, event: &Value, ca_file: Option<&str>) -> (Vec<String>, String) {
        let downstream = format!("{}/work", self.downstream_tls.url());
        let mut env = vec![
            ("DOWNSTREAM_URL", downstream.as_str()),
            ("QUARANTINE_QUEUE_URL", self.quarantine_url.as_str()),
            ("AWS_ENDPOINT_URL_SQS", self.sqs_tls.url()),
        ];
        // Only this file: rustls-native-certs reads no system store when it is set.
        if let Some(ca_file) = ca_file {
            env.push(("SSL_CERT_FILE", ca_file));
        }
        let host = LambdaHost::start(&binary("batch-consumer").unwrap(), &env).await.unwrap();
        let outcome = host.invoke(event, TIMEOUT).await;
        let failures = outcome
            .batch_item_failures()
            .unwrap_or_else(|| panic!("expected a batch response, got {outcome:?}"));
        (failures, host.logs().join("\n"))
    }
}

#[tokio::test]
async fn a_ca_named_by_ssl_cert_file_is_trusted_by_the_delivery_and_the_sdk() {
    let setup = fronted().await;
    assert_ne!(setup.downstream_tls.ca_file(), setup.sqs_tls.ca_file());
    // One file holding both authorities, as an image's bundle holds every root.
    let bundle = std::env::temp_dir().join(format!("{}.pem", unique("ca-bundle")));
    let pem = [setup.downstream_tls.ca_file(), setup.sqs_tls.ca_file()]
        .map(|path| std::fs::read_to_string(path).unwrap())
        .concat();
    std::fs::write(&bundle, pem).unwrap();

    let event = standard_event();
    let ids = ids(&event);
    let (failures, logs) = setup.invoke(&event, bundle.to_str()).await;
    let _ = std::fs::remove_file(&bundle);

    // As over plain HTTP: 429 and 503 retried, the four poison messages quarantined.
    assert_eq!(failures, [ids[6].clone(), ids[7].clone()], "logs: {logs}");
    assert_eq!(setup.downstream.received().len(), 5, "the deliveries over HTTPS");
    // The quarantine records went through the SDK's HTTPS client (its
    // GetQueueAttributes and SendMessageBatch), read back here over plain HTTP.
    let quarantined = setup.aws.quarantined(&setup.quarantine_url, 4).await.unwrap();
    assert_eq!(quarantined.len(), 4);
}

#[tokio::test]
async fn a_server_whose_ca_the_image_does_not_trust_is_refused_and_nothing_is_lost() {
    let setup = fronted().await;
    let event = standard_event();
    let (failures, logs) =
        setup.invoke(&event, Some(setup.downstream_tls.ca_file().to_str().unwrap())).await;

    // The downstream's CA is trusted, the SQS endpoint's is not: every delivery
    // happens, and no quarantine write does, so the four poison messages are
    // retried rather than dropped.
    let ids = ids(&event);
    let mut expected: Vec<String> = [2, 3, 4, 5, 6, 7].iter().map(|&i| ids[i].clone()).collect();
    let mut failures = failures;
    expected.sort();
    failures.sort();
    assert_eq!(failures, expected, "logs: {logs}");
    assert_eq!(setup.downstream.received().len(), 5);
    assert!(setup.aws.drain_quarantined(&setup.quarantine_url).await.unwrap().is_empty());
    assert!(logs.contains("UnknownIssuer"), "the refusal names its reason: {logs}");
}

#[tokio::test]
async fn with_neither_ca_trusted_every_message_goes_back_to_its_queue() {
    let setup = fronted().await;
    let event = standard_event();
    // A file of the tests' own that trusts neither front: the system's roots do not either.
    let other = TlsFront::start(&setup.downstream.url()).await.unwrap();
    let (mut failures, logs) = setup.invoke(&event, other.ca_file().to_str()).await;

    let mut expected = ids(&event);
    expected.sort();
    failures.sort();
    assert_eq!(failures, expected, "logs: {logs}");
    assert!(setup.downstream.received().is_empty(), "nothing reached the untrusted downstream");
    assert!(setup.aws.drain_quarantined(&setup.quarantine_url).await.unwrap().is_empty());
}

#[tokio::test]
async fn an_ssl_cert_file_with_no_certificate_is_said_once_and_nothing_is_lost() {
    let setup = fronted().await;
    let event = standard_event();
    let junk = std::env::temp_dir().join(format!("{}.pem", unique("not-a-bundle")));
    std::fs::write(&junk, "this is not a certificate\n").unwrap();
    let (mut failures, logs) = setup.invoke(&event, junk.to_str()).await;
    let _ = std::fs::remove_file(&junk);

    let mut expected = ids(&event);
    expected.sort();
    failures.sort();
    assert_eq!(failures, expected, "logs: {logs}");
    assert!(setup.downstream.received().is_empty());
    let said = logs.matches("the trust store has no root certificates").count();
    assert_eq!(said, 1, "said once, with the file it read: {logs}");
    assert!(logs.contains(junk.to_str().unwrap()), "names the file: {logs}");
}
