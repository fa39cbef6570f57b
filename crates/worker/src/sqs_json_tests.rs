//! The JSON calls against a scripted local endpoint: what is retried, what
//! is not, timeouts, signing and the credentials cache.

use super::*;

#[test]
fn a_receive_answer_reads_with_every_attribute() {
    let answer = br#"{"Messages":[{"MessageId":"m1","ReceiptHandle":"r1","MD5OfBody":"d41d","Body":"{\"a\":1}",
        "Attributes":{"ApproximateReceiveCount":"2","MessageGroupId":"g"},
        "MessageAttributes":{"bin":{"DataType":"Binary","BinaryValue":"AAE="},"s":{"DataType":"String.custom","StringValue":"x"}}}]}"#;
    let received: Received = serde_json::from_slice(answer).expect("parses");
    let message = &received.messages[0];
    assert_eq!(message.message_id.as_deref(), Some("m1"));
    assert_eq!(message.md5_of_body.as_deref(), Some("d41d"));
    assert_eq!(message.body.as_deref(), Some(r#"{"a":1}"#));
    assert_eq!(message.attributes["MessageGroupId"], "g");
    assert_eq!(message.message_attributes["bin"]["BinaryValue"], "AAE=");
    let record =
        received.messages.into_iter().next().expect("one").into_record("arn:q", "eu-west-1");
    assert_eq!(
        record.message_attributes["bin"],
        json!({"dataType": "Binary", "binaryValue": "AAE="})
    );
    assert_eq!(
        record.message_attributes["s"],
        json!({"dataType": "String.custom", "stringValue": "x"})
    );
    assert_eq!(record.message_group_id(), Some("g"));
    assert_eq!(
        (record.event_source_arn.as_deref(), record.aws_region.as_deref()),
        (Some("arn:q"), Some("eu-west-1"))
    );
    let empty: Received = serde_json::from_slice(b"{}").expect("parses");
    assert!(empty.messages.is_empty());
}

#[test]
fn what_is_retried_is_throttling_5xx_expired_credentials_and_transport() {
    let service = |status: u16, code: &str| CallError::Service {
        status,
        code: code.into(),
        message: String::new(),
    };
    assert!(service(400, "ThrottlingException").is_retryable());
    assert!(service(400, "AWS.SimpleQueueService.RequestThrottled").is_retryable());
    assert!(service(500, "InternalError").is_retryable());
    assert!(service(503, "ServiceUnavailable").is_retryable());
    assert!(service(400, "ExpiredToken").is_retryable());
    assert!(!service(400, "AccessDeniedException").is_retryable());
    assert!(!service(400, "QueueDoesNotExist").is_retryable());
    assert!(CallError::Timeout(Duration::from_secs(1)).is_retryable());
    let malformed = serde_json::from_slice::<Received>(b"[").expect_err("not an object");
    assert!(!CallError::Malformed(malformed).is_retryable());
}

#[test]
fn backoff_stays_under_its_doubling_ceiling() {
    let retries =
        Retries { max_attempts: 3, initial: Duration::from_secs(1), max: Duration::from_secs(20) };
    for attempt in 1..40 {
        let ceiling = Duration::from_secs(1 << (attempt - 1).min(16)).min(Duration::from_secs(20));
        for _ in 0..100 {
            assert!(retries.backoff(attempt) <= ceiling);
        }
    }
    let standard = Retries::from_config(&SdkConfig::builder().build());
    assert_eq!(
        (standard.max_attempts, standard.initial, standard.max),
        (3, Duration::from_secs(1), Duration::from_secs(20))
    );
}

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use aws_credential_types::provider::future;
use aws_sdk_sqs::config::Region;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// What the scripted endpoint answers to one request.
#[derive(Debug, Clone, Copy)]
enum Reply {
    Answer(u16, &'static str),
    Hang,
}

/// One request as the endpoint read it: its head (lower-cased) and body.
#[derive(Debug, Clone)]
struct Seen {
    head: String,
    body: String,
}

/// Answers request `n` with `script[n]` (the last one again once it runs out).
async fn endpoint(script: Vec<Reply>) -> (String, Arc<std::sync::Mutex<Vec<Seen>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = seen.clone();
    tokio::spawn(async move {
        loop {
            let (mut stream, _) = listener.accept().await.unwrap();
            let (head, body) = read_request(&mut stream).await;
            let index = {
                let mut seen = record.lock().unwrap();
                seen.push(Seen { head, body });
                seen.len() - 1
            };
            let reply = script[index.min(script.len() - 1)];
            tokio::spawn(async move {
                match reply {
                    Reply::Hang => {
                        tokio::time::sleep(Duration::from_secs(3600)).await;
                        drop(stream);
                    }
                    Reply::Answer(status, body) => {
                        let answer = format!(
                            "HTTP/1.1 {status} X\r\nContent-Type: application/x-amz-json-1.0\r\n\
                             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                            body.len()
                        );
                        let _ = stream.write_all(answer.as_bytes()).await;
                    }
                }
            });
        }
    });
    (url, seen)
}

async fn read_request(stream: &mut tokio::net::TcpStream) -> (String, String) {
    let mut bytes = Vec::new();
    loop {
        if let Some(end) = bytes.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&bytes[..end]).to_ascii_lowercase();
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .map_or(0, |v| v.trim().parse().unwrap());
            if bytes.len() >= end + 4 + length {
                let body = String::from_utf8_lossy(&bytes[end + 4..end + 4 + length]).into_owned();
                return (head, body);
            }
        }
        let mut chunk = [0; 4096];
        let n = stream.read(&mut chunk).await.unwrap();
        assert!(n > 0, "the client closed the connection mid-request");
        bytes.extend_from_slice(&chunk[..n]);
    }
}

/// Credentials from a provider that counts its calls; they expire after `lifetime`.
#[derive(Debug)]
struct Counted {
    calls: Arc<AtomicUsize>,
    lifetime: Duration,
}

impl ProvideCredentials for Counted {
    fn provide_credentials<'a>(&'a self) -> future::ProvideCredentials<'a>
    where
        Self: 'a,
    {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let expiry = SystemTime::now() + self.lifetime;
        future::ProvideCredentials::ready(Ok(Credentials::new(
            "AKIDTEST",
            "secret",
            Some("session-token".into()),
            Some(expiry),
            "test",
        )))
    }
}

async fn client(url: &str, lifetime: Duration) -> (SqsJson, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let provider = Counted { calls: calls.clone(), lifetime };
    let config = SdkConfig::builder()
        .region(Region::new("eu-west-1"))
        .credentials_provider(SharedCredentialsProvider::new(provider))
        .retry_config(RetryConfig::standard().with_initial_backoff(Duration::from_millis(1)))
        .build();
    let sqs =
        SqsJson::with_endpoint(&config, "sqs-worker/test", Some(url.to_owned())).await.unwrap();
    (sqs, calls)
}

const QUICK: Budget =
    Budget { attempt: Duration::from_secs(5), operation: Duration::from_secs(10) };
const ONE_MESSAGE: &str = r#"{"Messages":[{"MessageId":"m1","ReceiptHandle":"r1","Body":"{}"}]}"#;
const THROTTLED: &str =
    r#"{"__type":"com.amazonaws.sqs#ThrottlingException","message":"slow down"}"#;

async fn receive(sqs: &SqsJson, budget: Budget) -> Result<Vec<ReceivedMessage>, CallError> {
    sqs.receive_message("https://q/1/work", 10, Duration::ZERO, Duration::from_secs(30), budget)
        .await
}

#[tokio::test]
async fn a_throttled_receive_is_tried_again_until_it_succeeds() {
    let (url, seen) = endpoint(vec![
        Reply::Answer(400, THROTTLED),
        Reply::Answer(400, THROTTLED),
        Reply::Answer(200, ONE_MESSAGE),
    ])
    .await;
    let (sqs, _) = client(&url, Duration::from_secs(3600)).await;
    let messages = receive(&sqs, QUICK).await.unwrap();
    assert_eq!(messages.len(), 1);
    assert_eq!(seen.lock().unwrap().len(), 3);
}

#[tokio::test]
async fn a_denied_call_is_not_tried_again_and_names_its_code() {
    let denied = r#"{"__type":"AccessDeniedException","Message":"not allowed"}"#;
    let (url, seen) =
        endpoint(vec![Reply::Answer(400, denied), Reply::Answer(200, ONE_MESSAGE)]).await;
    let (sqs, _) = client(&url, Duration::from_secs(3600)).await;
    let error = receive(&sqs, QUICK).await.unwrap_err();
    assert_eq!(error.to_string(), "AccessDeniedException: not allowed (HTTP 400)");
    assert_eq!(seen.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn server_errors_are_tried_the_configured_number_of_times() {
    let (url, seen) = endpoint(vec![
        Reply::Answer(500, "{}"),
        Reply::Answer(500, "{}"),
        Reply::Answer(500, "{}"),
        Reply::Answer(200, ONE_MESSAGE),
    ])
    .await;
    let (sqs, _) = client(&url, Duration::from_secs(3600)).await;
    let error = receive(&sqs, QUICK).await.unwrap_err();
    assert!(matches!(error, CallError::Service { status: 500, .. }), "{error}");
    assert_eq!(seen.lock().unwrap().len(), 3);
}

#[tokio::test]
async fn a_hanging_endpoint_ends_the_call_within_its_budget() {
    let (url, seen) = endpoint(vec![Reply::Hang]).await;
    let (sqs, _) = client(&url, Duration::from_secs(3600)).await;
    let budget =
        Budget { attempt: Duration::from_millis(200), operation: Duration::from_millis(500) };
    let started = Instant::now();
    let error = receive(&sqs, budget).await.unwrap_err();
    assert!(matches!(error, CallError::Timeout(_)), "{error}");
    assert!(error.to_string().starts_with("timeout"), "{error}");
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    let attempts = seen.lock().unwrap().len();
    assert!((2..=3).contains(&attempts), "{attempts} attempts");
}

#[tokio::test]
async fn an_answer_that_is_not_the_operations_json_is_an_error_not_an_empty_receive() {
    let (url, seen) = endpoint(vec![Reply::Answer(200, "<html>gateway</html>")]).await;
    let (sqs, _) = client(&url, Duration::from_secs(3600)).await;
    let error = receive(&sqs, QUICK).await.unwrap_err();
    assert!(matches!(error, CallError::Malformed(_)), "{error}");
    assert_eq!(seen.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_delete_returns_the_entries_sqs_refused() {
    let answer = r#"{"Successful":[{"Id":"d0"}],"Failed":[{"Id":"d1","SenderFault":true,"Code":"ReceiptHandleIsInvalid","Message":"x"}]}"#;
    let (url, seen) = endpoint(vec![Reply::Answer(200, answer)]).await;
    let (sqs, _) = client(&url, Duration::from_secs(3600)).await;
    let entries = [("d0".to_owned(), "handle-0"), ("d1".to_owned(), "handle\"1")];
    let failed = sqs.delete_message_batch("https://q/1/work", &entries, QUICK).await.unwrap();
    assert_eq!(failed, ["d1"]);
    let seen = seen.lock().unwrap();
    let sent: Value = serde_json::from_str(&seen[0].body).unwrap();
    assert_eq!(
        sent,
        json!({"QueueUrl": "https://q/1/work", "Entries": [
            {"Id": "d0", "ReceiptHandle": "handle-0"}, {"Id": "d1", "ReceiptHandle": "handle\"1"}]})
    );
    assert!(
        seen[0].head.contains("x-amz-target: amazonsqs.deletemessagebatch"),
        "{}",
        seen[0].head
    );
}

#[tokio::test]
async fn requests_are_signed_for_sqs_in_the_region_with_the_session_token() {
    let (url, seen) = endpoint(vec![Reply::Answer(200, "{}")]).await;
    let (sqs, _) = client(&url, Duration::from_secs(3600)).await;
    assert!(receive(&sqs, QUICK).await.unwrap().is_empty());
    let head = seen.lock().unwrap()[0].head.clone();
    // The credential scope's day, UTC.
    let today = jiff::Timestamp::now().strftime("%Y%m%d").to_string();
    assert!(head.starts_with("post / http/1.1"), "{head}");
    assert!(head.contains("x-amz-target: amazonsqs.receivemessage"), "{head}");
    assert!(head.contains("content-type: application/x-amz-json-1.0"), "{head}");
    assert!(head.contains("x-amz-security-token: session-token"), "{head}");
    assert!(
        head.contains(&format!("credential=akidtest/{today}/eu-west-1/sqs/aws4_request")),
        "{head}"
    );
    assert!(
        head.contains(
            "signedheaders=content-type;host;x-amz-date;x-amz-security-token;x-amz-target"
        ),
        "{head}"
    );
}

#[tokio::test]
async fn credentials_are_fetched_once_until_they_near_their_expiry() {
    let (url, _) = endpoint(vec![Reply::Answer(200, "{}")]).await;
    let (sqs, provider) = client(&url, Duration::from_secs(3600)).await;
    for _ in 0..3 {
        receive(&sqs, QUICK).await.unwrap();
    }
    assert_eq!(provider.load(Ordering::SeqCst), 1);
    // Within five minutes of expiring: renewed for every call.
    let (sqs, provider) = client(&url, Duration::from_secs(60)).await;
    for _ in 0..3 {
        receive(&sqs, QUICK).await.unwrap();
    }
    assert_eq!(provider.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn expired_credentials_are_renewed_and_the_call_tried_again() {
    let expired = r#"{"__type":"ExpiredToken","message":"The security token included in the request is expired"}"#;
    let (url, seen) =
        endpoint(vec![Reply::Answer(400, expired), Reply::Answer(200, ONE_MESSAGE)]).await;
    let (sqs, provider) = client(&url, Duration::from_secs(3600)).await;
    assert_eq!(receive(&sqs, QUICK).await.unwrap().len(), 1);
    assert_eq!((seen.lock().unwrap().len(), provider.load(Ordering::SeqCst)), (2, 2));
}

#[tokio::test]
async fn a_gateway_error_without_a_json_body_is_named_by_its_status_and_tried_again() {
    let (url, seen) = endpoint(vec![Reply::Answer(503, "<html>busy</html>")]).await;
    let (sqs, _) = client(&url, Duration::from_secs(3600)).await;
    let error = receive(&sqs, QUICK).await.unwrap_err();
    assert!(
        matches!(&error, CallError::Service { status: 503, code, .. } if code == "Service Unavailable"),
        "{error}"
    );
    assert_eq!(seen.lock().unwrap().len(), 3);
}

#[tokio::test]
async fn a_refused_connection_is_a_transport_error_after_every_attempt() {
    let closed = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let (sqs, _) = client(&url, Duration::from_secs(3600)).await;
    let entries = [("d0".to_owned(), "handle-0")];
    let error = sqs.delete_message_batch("https://q/1/work", &entries, QUICK).await.unwrap_err();
    assert!(matches!(error, CallError::Transport(_)), "{error}");
}
