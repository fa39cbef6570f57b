//! sqs-worker signs its own `ReceiveMessage` and `DeleteMessageBatch`
//! (`crates/worker/src/sqs_json.rs`): here a verifier checks those
//! signatures. The test starts a moto server of its own and turns its IAM
//! authentication on (`/moto-api/reset-auth`): from then on moto recomputes
//! every request's SigV4 signature from the IAM user's secret and refuses a
//! request whose signature differs. The shared emulators stay as they are.

use std::path::PathBuf;
use std::time::Duration;

use aws_config::BehaviorVersion;
use aws_sdk_sqs::config::{Credentials, Region};
use e2e_tests::downstream::Downstream;
use e2e_tests::fixtures::unique;
use e2e_tests::process::{Process, field};
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::body::Bytes;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

use crate::worker_setup::{STARTED, request, start_worker};

/// moto as the emulator script installs it.
fn moto_server() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.venv/bin/moto_server")
}

async fn post(url: &str, content_type: &str, authorization: &str, body: String) -> String {
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let request = Request::post(url)
        .header("content-type", content_type)
        .header("authorization", authorization)
        .body(Full::new(Bytes::from(body)))
        .unwrap();
    let response = client.request(request).await.unwrap();
    let status = response.status();
    let text = String::from_utf8(response.into_body().collect().await.unwrap().to_bytes().to_vec())
        .unwrap();
    assert!(status.is_success(), "{url}: {status} {text}");
    text
}

/// One IAM Query API call while authentication is still off: the header
/// only tells moto which service is asked.
async fn iam(endpoint: &str, params: &str) -> String {
    let scope = "AWS4-HMAC-SHA256 Credential=testing/20260101/us-east-1/iam/aws4_request, \
                 SignedHeaders=host, Signature=0";
    let body = format!("{params}&Version=2010-05-08");
    post(endpoint, "application/x-www-form-urlencoded", scope, body).await
}

fn between<'a>(text: &'a str, open: &str, close: &str) -> &'a str {
    let start = text.find(open).map(|i| i + open.len()).unwrap();
    let end = text[start..].find(close).unwrap();
    &text[start..start + end]
}

async fn sqs_client(endpoint: &str, key: &str, secret: &str) -> aws_sdk_sqs::Client {
    let config = aws_sdk_sqs::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .endpoint_url(endpoint)
        .credentials_provider(Credentials::new(key, secret, None, None, "test"))
        .build();
    aws_sdk_sqs::Client::from_conf(config)
}

#[tokio::test]
async fn a_verifier_accepts_the_workers_own_signatures() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let endpoint = format!("http://127.0.0.1:{port}");
    let args = ["-H", "127.0.0.1", "-p", &port.to_string()];
    let _moto = Process::spawn(&moto_server(), &args, &[]).unwrap();
    let give_up = tokio::time::Instant::now() + STARTED;
    while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
        assert!(tokio::time::Instant::now() < give_up, "moto_server never listened");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let user = unique("worker");
    iam(&endpoint, &format!("Action=CreateUser&UserName={user}")).await;
    let created = iam(&endpoint, &format!("Action=CreateAccessKey&UserName={user}")).await;
    let key = between(&created, "<AccessKeyId>", "</AccessKeyId>").to_owned();
    let secret = between(&created, "<SecretAccessKey>", "</SecretAccessKey>").to_owned();
    let policy = r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"sqs:*","Resource":"*"}]}"#;
    let policy: String = form_urlencoded(policy);
    iam(
        &endpoint,
        &format!("Action=PutUserPolicy&UserName={user}&PolicyName=sqs&PolicyDocument={policy}"),
    )
    .await;
    let sqs = sqs_client(&endpoint, &key, &secret).await;
    let work = sqs.create_queue().queue_name("work").send().await.unwrap().queue_url.unwrap();
    let quarantine =
        sqs.create_queue().queue_name("quarantine").send().await.unwrap().queue_url.unwrap();
    for i in 0..3 {
        let body = request("ledger.post", &format!("signed-{i}"));
        sqs.send_message().queue_url(&work).message_body(body).send().await.unwrap();
    }
    post(&format!("{endpoint}/moto-api/reset-auth"), "text/plain", "", "0".into()).await;

    let downstream = Downstream::start().await.unwrap();
    let url = downstream.url();
    let start = |secret: &str| {
        let env = [
            ("AWS_ENDPOINT_URL_SQS", endpoint.as_str()),
            ("AWS_ACCESS_KEY_ID", key.as_str()),
            ("AWS_SECRET_ACCESS_KEY", secret),
        ];
        start_worker(&work, &quarantine, &url, &env)
    };

    // A wrong secret is refused: the server does check signatures.
    let mut refused = start("not-the-secret");
    assert_eq!(refused.exit(STARTED).await.unwrap().code(), Some(1), "{:?}", refused.lines());

    let mut worker = start(&secret);
    let give_up = tokio::time::Instant::now() + STARTED;
    while downstream.received().len() < 3 {
        assert!(tokio::time::Instant::now() < give_up, "not delivered: {:?}", worker.lines());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    worker.signal("TERM").await.unwrap();
    assert_eq!(worker.exit(STARTED).await.unwrap().code(), Some(0));
    let lines = worker.lines();
    assert!(!lines.iter().any(|l| l.contains("ReceiveMessage failed")), "{lines:?}");
    let summary = lines.iter().find(|l| l.contains("worker stopped")).unwrap();
    assert_eq!((field(summary, "received"), field(summary, "deleted")), (Some(3), Some(3)));
    let left = sqs
        .get_queue_attributes()
        .queue_url(&work)
        .attribute_names(aws_sdk_sqs::types::QueueAttributeName::All)
        .send()
        .await
        .unwrap();
    let count = |name| {
        left.attributes().unwrap()[&aws_sdk_sqs::types::QueueAttributeName::from(name)].clone()
    };
    let counts =
        (count("ApproximateNumberOfMessages"), count("ApproximateNumberOfMessagesNotVisible"));
    assert_eq!(counts, ("0".to_owned(), "0".to_owned()));
}

/// `application/x-www-form-urlencoded` for one value.
fn form_urlencoded(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
