//! The benchmark's latency model against the real publisher binary.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use std::time::Duration;

use e2e_tests::fixtures::{ENDPOINT_VARS, binary};
use e2e_tests::runtime_host::{LambdaHost, Outcome};
use serde_json::{Value, json};
use sqs_backpressure_bench::latency_model::LatencyModel;

async fn invoke_publisher(env: &[(&str, &str)]) -> Outcome {
    let host = LambdaHost::start(&binary("backlog-publisher").unwrap(), env).await.unwrap();
    host.invoke(&json!({"detail-type": "Scheduled Event"}), Duration::from_secs(30)).await
}

fn response(outcome: Outcome) -> Value {
    match outcome {
        Outcome::Response(body) => body,
        other => panic!("expected a response, got {other:?}"),
    }
}

/// The benchmark's latency model must keep answering what the SDK expects, or
/// `make bench` would measure errors.
#[tokio::test]
async fn the_benchmarks_latency_model_serves_a_whole_invocation() {
    let model = LatencyModel::start(Duration::from_millis(1)).await.unwrap();
    let targets = r#"[{"queueUrl":"https://sqs.us-east-1.amazonaws.com/123456789012/m-0","cluster":"model","service":"worker-0"},
                      {"queueUrl":"https://sqs.us-east-1.amazonaws.com/123456789012/m-1","cluster":"model","service":"worker-1"}]"#;
    // Credentials of its own: the model checks no signature, and `make unit` runs without the
    // emulators' environment.
    let mut env = vec![
        ("TARGETS", targets),
        ("TARGET_BACKLOG_PER_TASK", "100"),
        ("AWS_ACCESS_KEY_ID", "testing"),
        ("AWS_SECRET_ACCESS_KEY", "testing"),
        ("AWS_REGION", "us-east-1"),
    ];
    env.extend(ENDPOINT_VARS.map(|name| (name, model.url())));
    let body = response(invoke_publisher(&env).await);
    let targets = body["targets"].as_array().unwrap();
    assert_eq!(targets.len(), 2, "{body}");
    for target in targets {
        assert_eq!(target["backlog"], 3, "{target}");
        assert_eq!(target["taskCount"], 1, "{target}");
        assert_eq!(target["backlogPerTask"], 3.0, "{target}");
    }
}
