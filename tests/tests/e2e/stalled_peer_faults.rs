//! One message whose own I/O stalls never holds the rest, on batch-consumer
//! and on sqs-worker: an offloaded payload whose object sends its headers and
//! half its body and then nothing (the fault proxy in front of S3), an
//! idempotency claim that never answers (in front of DynamoDB), a POST the
//! downstream never answers, and a quarantine write that never answers (in
//! front of SQS). The messages beside it are done; only it is retried, with
//! its own cause.

use std::time::Duration;

use e2e_tests::fault_proxy::{Fault, FaultProxy, Rule};
use e2e_tests::fixtures::{Aws, binary, sqs_record, unique};
use e2e_tests::idempotency_table::{StoreKind, Table};
use e2e_tests::runtime_host::LambdaHost;
use serde_json::{Value, json};

use crate::idempotency::{failures, lambda};
use crate::worker_setup::{SETTLED, Setup, request, setup};

/// A pointer as the SQS Extended Client (Java) writes it.
fn pointer(bucket: &str, key: &str) -> String {
    json!(["software.amazon.payloadoffloading.PayloadS3Pointer",
           {"s3BucketName": bucket, "s3Key": key}])
    .to_string()
}

/// Four plain bodies, `o-1` to `o-4`.
fn plain() -> Vec<String> {
    (1..=4).map(|n| json!({"orderId": format!("o-{n}")}).to_string()).collect()
}

/// A bucket holding the object `stalled` (`o-stalled`'s payload), and a
/// proxy in front of S3 whose reads of it meet `fault`.
async fn faulty_object(aws: &Aws, fault: Fault) -> (String, FaultProxy) {
    let bucket = unique("stalling").to_lowercase();
    aws.create_bucket(&bucket).await.unwrap();
    let payload = json!({"orderId": "o-stalled", "blob": "x".repeat(200_000)}).to_string();
    let put = aws.s3.put_object().bucket(&bucket).key("stalled");
    put.body(payload.into_bytes().into()).send().await.unwrap();
    let proxy = FaultProxy::start(&std::env::var("AWS_ENDPOINT_URL_S3").unwrap()).await.unwrap();
    proxy.inject(Rule::new("GetObject", fault).when_path_contains("/stalled"));
    (bucket, proxy)
}

/// [`faulty_object`] whose reads stall mid-body.
async fn stalling_object(aws: &Aws) -> (String, FaultProxy) {
    faulty_object(aws, Fault::StallBody).await
}

/// The orders the downstream was sent, sorted.
fn orders(received: &[e2e_tests::downstream::Received]) -> Vec<String> {
    let mut orders: Vec<String> = received
        .iter()
        .map(|r| serde_json::from_str::<Value>(&r.body).unwrap()["orderId"].to_string())
        .map(|id| id.trim_matches('"').to_owned())
        .collect();
    orders.sort();
    orders
}

/// batch-consumer on four plain records and one whose offloaded payload
/// stalls, in an invocation of `invocation`, with `extra` settings: the
/// failures it reports, the orders POSTed, and its logs.
async fn consume_beside_a_stalled_payload(
    invocation: Duration,
    extra: &[(&str, &str)],
) -> (Vec<String>, Vec<String>, String) {
    let (failed, posted, logs, reads) =
        consume_beside_a_faulty_payload(Fault::StallBody, invocation, extra).await;
    assert_eq!(reads, 1, "the object was asked for once");
    (failed, posted, logs)
}

/// The same with the object's reads meeting `fault`; also how often it was asked for.
async fn consume_beside_a_faulty_payload(
    fault: Fault,
    invocation: Duration,
    extra: &[(&str, &str)],
) -> (Vec<String>, Vec<String>, String, u64) {
    let aws = Aws::from_env().await.unwrap();
    let (bucket, proxy) = faulty_object(&aws, fault).await;
    let quarantine_url = aws.create_queue(&unique("quarantine")).await.unwrap();
    let source = aws.create_queue(&unique("work")).await.unwrap();
    let arn = aws.queue_arn(&source).await.unwrap();
    let downstream = e2e_tests::downstream::Downstream::start().await.unwrap();
    let url = downstream.url();
    let mut env = vec![
        ("QUARANTINE_QUEUE_URL", quarantine_url.as_str()),
        ("DOWNSTREAM_URL", url.as_str()),
        ("BODY_FORMAT", "raw"),
        ("OFFLOADED_PAYLOADS", "read"),
        ("AWS_ENDPOINT_URL_S3", proxy.url()),
    ];
    env.extend_from_slice(extra);
    let mut records: Vec<Value> = plain()
        .iter()
        .enumerate()
        .map(|(n, body)| sqs_record(&format!("m-{}", n + 1), json!(body), &arn))
        .collect();
    records.insert(2, sqs_record("m-stalled", json!(pointer(&bucket, "stalled")), &arn));
    let host = LambdaHost::start(&binary("batch-consumer").unwrap(), &env).await.unwrap();
    let outcome = host.invoke(&json!({ "Records": records }), invocation).await;
    let reads = proxy.counts().get("GetObject").copied().unwrap_or(0);
    (failures(&outcome), orders(&downstream.received()), host.logs().join("\n"), reads)
}

/// Denied, throttled, failing (each past the SDK's retries) or never
/// answering: the object's message alone is retried, with its own cause and
/// S3's code or the first-byte timeout named; the four beside it are done.
#[tokio::test]
async fn an_offloaded_payload_denied_throttled_failing_or_hung_retries_only_its_message() {
    // The SDK retries a throttle and a 5xx: the first-byte timeout is set past its retries there.
    for (fault, first_byte_ms, said) in [
        (Fault::Deny, "10000", "AccessDenied"),
        (Fault::Throttle, "10000", "SlowDown"),
        (Fault::ServerError, "10000", "InternalError"),
        (Fault::Hang, "1000", "/stalled sent no first byte within 1000 ms"),
    ] {
        let env = [("OFFLOADED_PAYLOAD_FIRST_BYTE_TIMEOUT_MS", first_byte_ms)];
        let name = fault.name();
        let (failed, posted, logs, reads) =
            consume_beside_a_faulty_payload(fault, Duration::from_secs(20), &env).await;
        assert_eq!(failed, ["m-stalled"], "{name}: {logs}");
        assert_eq!(posted, ["o-1", "o-2", "o-3", "o-4"], "{name}: {logs}");
        assert!(reads >= 1, "{name}: asked for");
        assert!(logs.contains(r#""retry_causes":"offloaded_payload=1""#), "{name}: {logs}");
        assert!(logs.contains(said), "{name}: {logs}");
    }
}

#[tokio::test]
async fn a_stalled_offloaded_payload_retries_only_its_own_message_on_lambda() {
    let read_timeout = [("OFFLOADED_PAYLOAD_READ_TIMEOUT_MS", "1000")];
    let (failed, posted, logs) =
        consume_beside_a_stalled_payload(Duration::from_secs(20), &read_timeout).await;
    assert_eq!(failed, ["m-stalled"], "{logs}");
    assert_eq!(posted, ["o-1", "o-2", "o-3", "o-4"], "{logs}");
    assert!(logs.contains(r#""retry_causes":"offloaded_payload=1""#), "its own cause: {logs}");
    assert!(logs.contains("/stalled was not read whole within 1000 ms"), "{logs}");
}

/// With the read's own timeout (30 s) past the invocation's end, the
/// messages beside it are still done: their work never waited for the read.
#[tokio::test]
async fn the_messages_beside_a_stalled_payload_are_worked_on_while_it_is_read() {
    let (failed, posted, logs) =
        consume_beside_a_stalled_payload(Duration::from_secs(8), &[]).await;
    assert_eq!(failed, ["m-stalled"], "{logs}");
    assert_eq!(posted, ["o-1", "o-2", "o-3", "o-4"], "{logs}");
}

/// Waits until the worker said `text`, and returns the line.
async fn said(worker: &e2e_tests::process::Process, text: &str) -> String {
    let line = worker.wait_for_line(text, SETTLED).await;
    line.unwrap_or_else(|| panic!("never said {text:?}: {:#?}", worker.lines()))
}

/// Stops the worker; it exits 0.
async fn stop(mut worker: e2e_tests::process::Process) {
    worker.signal("TERM").await.unwrap();
    assert_eq!(worker.exit(SETTLED).await.unwrap().code(), Some(0), "{:#?}", worker.lines());
}

#[tokio::test]
async fn a_stalled_offloaded_payload_retries_only_its_own_message_on_the_worker() {
    let setup = setup().await;
    let (bucket, proxy) = stalling_object(&setup.aws).await;
    let mut bodies = plain();
    bodies.insert(2, pointer(&bucket, "stalled"));
    setup.send(&bodies).await;
    let worker = setup.start(&[
        ("BODY_FORMAT", "raw"),
        ("OFFLOADED_PAYLOADS", "read"),
        ("OFFLOADED_PAYLOAD_READ_TIMEOUT_MS", "1000"),
        ("AWS_ENDPOINT_URL_S3", proxy.url()),
    ]);
    let retried = said(&worker, "/stalled was not read whole within 1000 ms").await;
    assert!(retried.contains("message will be retried"), "{retried}");
    setup.wait_until("the four beside it", |s| s.downstream.received().len() >= 4).await;
    assert_eq!(orders(&setup.downstream.received()), ["o-1", "o-2", "o-3", "o-4"]);
    // Once S3 answers, the retried message is read and done.
    proxy.clear();
    setup.wait_until_empty().await;
    stop(worker).await;
    let posted = orders(&setup.downstream.received());
    assert_eq!(posted, ["o-1", "o-2", "o-3", "o-4", "o-stalled"]);
}

/// A proxy in front of DynamoDB whose claims of `k-stalled` never answer.
async fn stalling_claims() -> FaultProxy {
    let upstream = std::env::var("AWS_ENDPOINT_URL_DYNAMODB").unwrap();
    let proxy = FaultProxy::start(&upstream).await.unwrap();
    proxy.inject(Rule::new("PutItem", Fault::Hang).when_body_contains("k-stalled"));
    proxy
}

fn keyed() -> Vec<(String, String)> {
    let mut keyed: Vec<(String, String)> =
        (1..=4).map(|n| (format!("m-{n}"), request("ledger.post", &format!("k-{n}")))).collect();
    keyed.insert(2, ("m-stalled".into(), request("ledger.post", "k-stalled")));
    keyed
}

#[tokio::test]
async fn a_claim_that_never_answers_holds_only_its_own_message_on_lambda() {
    let lambda = lambda(StoreKind::DynamoDb).await;
    let proxy = stalling_claims().await;
    let records = keyed();
    let records: Vec<(&str, String)> =
        records.iter().map(|(id, b)| (id.as_str(), b.clone())).collect();
    let env = [("AWS_ENDPOINT_URL_DYNAMODB", proxy.url()), ("API_CALL_TIMEOUT_MS", "1000")];
    let outcome = lambda.invoke(&records, &env).await;
    assert_eq!(failures(&outcome), ["m-stalled"]);
    for key in ["k-1", "k-2", "k-3", "k-4"] {
        assert_eq!(lambda.posts(key), 1, "{key}");
    }
    assert_eq!(lambda.posts("k-stalled"), 0, "never POSTed unclaimed");
}

#[tokio::test]
async fn a_claim_that_never_answers_holds_only_its_own_message_on_the_worker() {
    let setup: Setup = setup().await;
    let table = Table::create().await.unwrap();
    let proxy = stalling_claims().await;
    let bodies: Vec<String> = keyed().into_iter().map(|(_, body)| body).collect();
    setup.send(&bodies).await;
    let worker = setup.start(&[
        ("IDEMPOTENCY_TABLE", table.name.as_str()),
        ("AWS_ENDPOINT_URL_DYNAMODB", proxy.url()),
        ("API_CALL_TIMEOUT_MS", "1000"),
    ]);
    setup.wait_until("the four beside it", |s| s.delivered().len() >= 4).await;
    let delivered = setup.delivered();
    assert_eq!(delivered.keys().collect::<Vec<_>>(), ["k-1", "k-2", "k-3", "k-4"]);
    said(&worker, "retry_causes=").await;
    proxy.clear();
    setup.wait_until_empty().await;
    stop(worker).await;
    assert_eq!(setup.delivered().get("k-stalled"), Some(&1), "claimed and POSTed once");
}

/// batch-consumer on four work requests beside one whose own I/O stalls
/// (`odd_one`'s operation, quarantined into a queue reached through `sqs`):
/// the failures it reports and the keys POSTed.
async fn consume_beside(odd_one: &str, extra: &[(&str, &str)]) -> (Vec<String>, Vec<String>) {
    let aws = Aws::from_env().await.unwrap();
    let quarantine_url = aws.create_queue(&unique("quarantine")).await.unwrap();
    let arn = aws.queue_arn(&aws.create_queue(&unique("work")).await.unwrap()).await.unwrap();
    let downstream = e2e_tests::downstream::Downstream::start().await.unwrap();
    let url = downstream.url();
    let mut env = vec![("QUARANTINE_QUEUE_URL", quarantine_url.as_str()), ("DOWNSTREAM_URL", &url)];
    env.extend_from_slice(extra);
    let mut records: Vec<(String, String)> =
        (1..=4).map(|n| (format!("m-{n}"), request("ledger.post", &format!("k-{n}")))).collect();
    records.insert(2, ("m-stalled".into(), request(odd_one, "k-stalled")));
    let records: Vec<Value> =
        records.iter().map(|(id, body)| sqs_record(id, json!(body), &arn)).collect();
    let host = LambdaHost::start(&binary("batch-consumer").unwrap(), &env).await.unwrap();
    let outcome = host.invoke(&json!({ "Records": records }), Duration::from_secs(20)).await;
    let mut posted: Vec<String> = downstream
        .received()
        .into_iter()
        .filter(|r| r.status == 204)
        .filter_map(|r| r.idempotency_key)
        .collect();
    posted.sort();
    (failures(&outcome), posted)
}

/// A downstream that does not answer one message's POST.
#[tokio::test]
async fn a_post_that_never_answers_holds_only_its_own_message_on_lambda() {
    let (failed, posted) =
        consume_beside("ledger.slow", &[("DOWNSTREAM_TIMEOUT_MS", "1000")]).await;
    assert_eq!(failed, ["m-stalled"]);
    assert_eq!(posted, ["k-1", "k-2", "k-3", "k-4"]);
}

/// The quarantine write of the one rejected message never answers.
#[tokio::test]
async fn a_quarantine_write_that_never_answers_holds_only_its_own_message_on_lambda() {
    let proxy = FaultProxy::start(&std::env::var("AWS_ENDPOINT_URL_SQS").unwrap()).await.unwrap();
    proxy.inject(Rule::new("SendMessageBatch", Fault::Hang));
    proxy.inject(Rule::new("SendMessage", Fault::Hang));
    let env = [("AWS_ENDPOINT_URL_SQS", proxy.url()), ("API_CALL_TIMEOUT_MS", "1000")];
    let (failed, posted) = consume_beside("ledger.reject", &env).await;
    assert_eq!(failed, ["m-stalled"], "not quarantined, so retried");
    assert_eq!(posted, ["k-1", "k-2", "k-3", "k-4"]);
}

/// sqs-worker: one POST held while the four beside it are POSTed and
/// deleted; once answered, it is done too.
#[tokio::test]
async fn a_post_that_never_answers_holds_only_its_own_message_on_the_worker() {
    let setup = setup().await;
    let mut bodies: Vec<String> =
        (1..=4).map(|n| request("ledger.post", &format!("k-{n}"))).collect();
    bodies.insert(2, request("ledger.hold", "k-stalled"));
    setup.send(&bodies).await;
    let worker = setup.start(&[("DOWNSTREAM_TIMEOUT_MS", "60000")]);
    setup.wait_until("the four beside it", |s| s.delivered().len() >= 4).await;
    // Deleted while the held one is still in work: one in flight, none visible.
    setup.wait_counts((0, 1)).await;
    assert_eq!(setup.delivered().keys().collect::<Vec<_>>(), ["k-1", "k-2", "k-3", "k-4"]);
    setup.downstream.release_held();
    setup.wait_until_empty().await;
    stop(worker).await;
    assert_eq!(setup.delivered().get("k-stalled"), Some(&1));
}

/// sqs-worker: the quarantine write of the one rejected message never
/// answers; the four beside it are deleted, and it is quarantined once the
/// quarantine queue answers.
#[tokio::test]
async fn a_quarantine_write_that_never_answers_holds_only_its_own_message_on_the_worker() {
    let setup = setup().await;
    let proxy = FaultProxy::start(&setup.sqs.endpoint().unwrap()).await.unwrap();
    let quarantine = setup.quarantine_url.rsplit('/').next().unwrap().to_owned();
    proxy.inject(Rule::new("SendMessageBatch", Fault::Hang).when_body_contains(&quarantine));
    proxy.inject(Rule::new("SendMessage", Fault::Hang).when_body_contains(&quarantine));
    let mut bodies: Vec<String> =
        (1..=4).map(|n| request("ledger.post", &format!("k-{n}"))).collect();
    bodies.insert(2, request("ledger.reject", "k-stalled"));
    setup.send(&bodies).await;
    let worker =
        setup.start(&[("AWS_ENDPOINT_URL_SQS", proxy.url()), ("API_CALL_TIMEOUT_MS", "1000")]);
    said(&worker, "quarantine write not confirmed").await;
    let done: Vec<String> = setup
        .downstream
        .received()
        .into_iter()
        .filter(|r| r.status == 204)
        .filter_map(|r| r.idempotency_key)
        .collect();
    assert_eq!(done.len(), 4, "{done:?}");
    proxy.clear();
    setup.wait_until_empty().await;
    stop(worker).await;
    let quarantined = setup.aws.quarantined(&setup.quarantine_url, 1).await.unwrap();
    assert_eq!(quarantined[0].record["errorCode"], "downstream_rejected");
}
