//! Lambda Managed Instances: one function process serving several invocations
//! at once (`AWS_LAMBDA_MAX_CONCURRENCY`), under the Lambda Runtime API host,
//! with the quarantine queue on the SQS emulator. Each invocation must get
//! its own answer and trace; the downstream's limits are the process's.

use std::collections::HashMap;
use std::time::Duration;

use e2e_tests::downstream::Downstream;
use e2e_tests::fixtures::{Aws, binary, sqs_record, unique};
use e2e_tests::runtime_host::{LambdaHost, Served};
use serde_json::{Value, json};

const SOURCE: &str = "arn:aws:sqs:us-east-1:123456789012:orders";
const TIMEOUT: Duration = Duration::from_secs(30);
const AT_ONCE: usize = 4;

/// Invocation `n`'s batch: a message per operation, `i{n}-m{k}`, the id also its idempotency key.
fn batch(n: usize, operations: &[&str]) -> Value {
    let records: Vec<Value> = operations
        .iter()
        .enumerate()
        .map(|(k, operation)| {
            let id = format!("i{n}-m{k}");
            let body = json!({"schemaVersion": "1", "operation": operation, "tenantId": "t",
                              "idempotencyKey": id});
            sqs_record(&id, json!(body.to_string()), SOURCE)
        })
        .collect();
    json!({ "Records": records })
}

/// The invocation a message was in, from its id.
fn invocation_of(id: &str) -> usize {
    id.trim_start_matches('i').split('-').next().unwrap().parse().unwrap()
}

async fn start(program: &str, extra: &[(&str, &str)]) -> (LambdaHost, String) {
    let aws = Aws::from_env().await.unwrap();
    let quarantine_url = aws.create_queue(&unique("quarantine")).await.unwrap();
    let at_once = AT_ONCE.to_string();
    let mut env = vec![
        ("QUARANTINE_QUEUE_URL", quarantine_url.as_str()),
        ("AWS_LAMBDA_MAX_CONCURRENCY", at_once.as_str()),
    ];
    env.extend_from_slice(extra);
    let host = LambdaHost::start(&binary(program).unwrap(), &env).await.unwrap();
    assert!(host.wait_until_ready(TIMEOUT).await.is_some(), "{:?}", host.logs());
    (host, quarantine_url)
}

async fn invoke_together(host: &LambdaHost, events: &[Value]) -> Vec<Served> {
    futures::future::join_all(events.iter().map(|event| host.invoke_served(event, TIMEOUT))).await
}

fn json_logs(host: &LambdaHost) -> Vec<Value> {
    host.logs().iter().filter_map(|line| serde_json::from_str(line).ok()).collect()
}

#[tokio::test]
async fn invocations_at_once_are_each_answered_and_traced_as_their_own_under_one_rate() {
    let downstream = Downstream::start().await.unwrap();
    let url = downstream.url();
    let extra = [("DOWNSTREAM_URL", url.as_str()), ("DOWNSTREAM_MAX_RPS", "10")];
    let (host, _) = start("batch-consumer", &extra).await;
    // Five messages each; invocation n's message n fails with a 503 and is retried.
    let events: Vec<Value> = (0..AT_ONCE)
        .map(|n| {
            let mut operations = ["orders.post"; 5];
            operations[n] = "orders.fail";
            batch(n, &operations)
        })
        .collect();

    let served = invoke_together(&host, &events).await;

    assert_eq!(host.most_in_flight(), AT_ONCE as u64, "the invocations overlapped");
    for (n, invocation) in served.iter().enumerate() {
        assert_eq!(
            invocation.outcome.batch_item_failures(),
            Some(vec![format!("i{n}-m{n}")]),
            "invocation {n}: {:?}",
            invocation.outcome
        );
    }
    let traces: Vec<&str> = served.iter().map(|s| s.trace_header.as_str()).collect();
    let received = downstream.received();
    assert_eq!(received.len(), AT_ONCE * 5);
    for request in &received {
        let id = request.idempotency_key.as_deref().unwrap();
        // These messages carry no trace of their own: each is followed in its invocation's.
        assert_eq!(request.amzn_trace_id.as_deref(), Some(traces[invocation_of(id)]), "{id}");
    }
    // DOWNSTREAM_MAX_RPS is the process's: 20 requests at 10 a second span
    // 1.9 s however many invocations sent them (at 10 a second each, 0.4 s).
    let first = received.iter().map(|r| r.at).min().unwrap();
    let last = received.iter().map(|r| r.at).max().unwrap();
    assert!(last - first >= Duration::from_millis(1_850), "{:?}", last - first);

    // Each invocation's log lines carry its own request id and trace.
    let logs = json_logs(&host);
    let by_request: HashMap<&str, usize> =
        served.iter().enumerate().map(|(n, s)| (s.request_id.as_str(), n)).collect();
    let received_lines: Vec<&Value> =
        logs.iter().filter(|log| log["fields"]["message"] == "batch received").collect();
    assert_eq!(received_lines.len(), AT_ONCE);
    for line in received_lines {
        let n = by_request[line["fields"]["request_id"].as_str().unwrap()];
        let trace_id = line["fields"]["trace_id"].as_str().unwrap();
        assert!(traces[n].replace('-', "").contains(trace_id), "{line}");
    }
    let summaries: Vec<&Value> =
        logs.iter().filter(|log| log["fields"]["message"] == "batch summary").collect();
    assert_eq!(summaries.len(), AT_ONCE);
    for summary in summaries {
        let n = by_request[summary["span"]["requestId"].as_str().unwrap()];
        assert_eq!(summary["span"]["xrayTraceId"], traces[n], "{summary}");
        assert_eq!(summary["fields"]["records"], 5, "{summary}");
        let failed = summary["fields"]["failed"].as_str().unwrap();
        assert!(failed.starts_with(&format!("i{n}-m{n}:retry:")), "{summary}");
    }
}

#[tokio::test]
async fn consumer_concurrency_is_the_processs_across_invocations() {
    let downstream = Downstream::start().await.unwrap();
    let url = downstream.url();
    let extra = [("DOWNSTREAM_URL", url.as_str()), ("CONSUMER_CONCURRENCY", "3")];
    let (host, _) = start("batch-consumer", &extra).await;
    // Every request is held 300 ms: alone, each invocation would have 3 in work.
    let events: Vec<Value> = (0..AT_ONCE).map(|n| batch(n, &["orders.pause"; 6])).collect();

    let served = invoke_together(&host, &events).await;

    assert_eq!(host.most_in_flight(), AT_ONCE as u64);
    for invocation in &served {
        assert_eq!(invocation.outcome.batch_item_failures(), Some(vec![]));
    }
    assert_eq!(downstream.received().len(), AT_ONCE * 6);
    assert_eq!(downstream.most_in_flight(), 3, "3 for the process, not 3 per invocation");
}

#[tokio::test]
async fn a_panic_in_one_invocation_leaves_the_others_and_the_process_unharmed() {
    let (host, _) = start("probe-consumer", &[]).await;
    let probe = |n: usize, actions: &[&str]| {
        let records: Vec<Value> = actions
            .iter()
            .enumerate()
            .map(|(k, action)| {
                let body = json!({ "action": action }).to_string();
                sqs_record(&format!("i{n}-m{k}"), json!(body), SOURCE)
            })
            .collect();
        json!({ "Records": records })
    };
    let events: Vec<Value> = (0..AT_ONCE)
        .map(|n| if n == 0 { probe(n, &["hold", "panic", "hold"]) } else { probe(n, &["hold"; 3]) })
        .collect();

    let served = invoke_together(&host, &events).await;

    assert_eq!(host.most_in_flight(), AT_ONCE as u64);
    assert_eq!(served[0].outcome.batch_item_failures(), Some(vec!["i0-m1".to_owned()]));
    for invocation in &served[1..] {
        assert_eq!(invocation.outcome.batch_item_failures(), Some(vec![]), "{invocation:?}");
    }
    // The same process takes the next invocation.
    let after = host.invoke_served(&probe(9, &["hold"]), TIMEOUT).await;
    assert_eq!(after.outcome.batch_item_failures(), Some(vec![]));
    let panicked = json_logs(&host)
        .into_iter()
        .filter(|log| {
            log["fields"]["message"] == "the processor panicked; the message will be retried"
        })
        .map(|log| log["span"]["requestId"].as_str().unwrap_or_default().to_owned())
        .collect::<Vec<_>>();
    assert_eq!(panicked, [served[0].request_id.clone()]);
}
