//! The documented promises (docs/failure-behaviour.md) under faults and hostile input, end to end: each
//! function under the Lambda Runtime API host, its AWS calls through the
//! fault-injecting proxy in front of moto and LocalStack.

use std::time::Duration;

use e2e_tests::downstream::Downstream;
use e2e_tests::fault_proxy::{Fault, FaultProxy, Rule};
use e2e_tests::fixtures::{Aws, PublisherTarget, Quarantined, binary, sqs_record, unique};
use e2e_tests::runtime_host::{LambdaHost, Outcome};
use serde_json::{Value, json};

const NAMESPACE: &str = "SqsBackpressureReliability";
/// Each AWS call's own budget in these tests: short, so a hung call costs little.
const CALL_TIMEOUT_MS: &str = "2500";

fn schedule_event() -> Value {
    serde_json::from_str(include_str!("../../../events/schedule.json")).unwrap()
}

/// The three proxies (SQS, ECS, CloudWatch), in `ENDPOINT_VARS` order.
struct Proxies(Vec<(&'static str, FaultProxy)>);

impl Proxies {
    async fn start() -> Self {
        Self(FaultProxy::for_each_endpoint().await.unwrap())
    }
    fn sqs(&self) -> &FaultProxy {
        &self.0[0].1
    }
    fn ecs(&self) -> &FaultProxy {
        &self.0[1].1
    }
    fn env(&self) -> Vec<(&'static str, &str)> {
        self.0.iter().map(|(name, proxy)| (*name, proxy.url())).collect()
    }
}

async fn invoke_publisher(env: &[(&str, &str)], proxies: &Proxies, timeout: Duration) -> Outcome {
    let mut env = env.to_vec();
    env.push(("METRIC_NAMESPACE", NAMESPACE));
    env.push(("API_CALL_TIMEOUT_MS", CALL_TIMEOUT_MS));
    env.extend(proxies.env());
    let host = LambdaHost::start(&binary("backlog-publisher").unwrap(), &env).await.unwrap();
    host.invoke(&schedule_event(), timeout).await
}

async fn target(aws: &Aws, messages: usize, running: i32) -> PublisherTarget {
    PublisherTarget::create(aws, &unique("cluster"), messages, running).await.unwrap()
}

async fn read_back(aws: &Aws, target: &PublisherTarget, metric: &str) -> Vec<f64> {
    target.metric(aws, NAMESPACE, metric).await.unwrap()
}

fn error_of(outcome: Outcome) -> Value {
    match outcome {
        Outcome::Error(error) => error,
        other => panic!("expected an invocation error, got {other:?}"),
    }
}

// ---------------------------------------------------------------- defect 1

#[tokio::test]
async fn d1_a_service_given_as_an_arn_is_counted_and_published_under_its_name() {
    let aws = Aws::from_env().await.unwrap();
    let proxies = Proxies::start().await;
    let target = target(&aws, 150, 3).await;
    let described = aws
        .ecs
        .describe_services()
        .cluster(&target.cluster)
        .services(&target.service)
        .send()
        .await
        .unwrap();
    let arn = described.services()[0].service_arn().unwrap().to_owned();
    assert!(arn.starts_with("arn:aws:ecs:"), "{arn}");
    let env = [
        ("QUEUE_URL", target.queue_url.as_str()),
        ("ECS_CLUSTER_NAME", target.cluster.as_str()),
        ("ECS_SERVICE_NAME", arn.as_str()),
    ];
    match invoke_publisher(&env, &proxies, Duration::from_secs(30)).await {
        Outcome::Response(body) => {
            assert_eq!(body["targets"][0]["backlogPerTask"], 50.0, "{body}");
            assert_eq!(body["targets"][0]["service"], target.service.as_str(), "{body}");
        }
        other => panic!("expected a response, got {other:?}"),
    }
    assert_eq!(read_back(&aws, &target, "BacklogPerTask").await, [50.0]);
}

// ---------------------------------------------------------------- defect 2

#[tokio::test]
async fn d2_an_unreadable_dead_letter_queue_still_publishes_the_scaling_figures() {
    let aws = Aws::from_env().await.unwrap();
    let proxies = Proxies::start().await;
    let queue = unique("work");
    let (queue_url, dlq_url) = aws.create_queue_with_dlq(&queue).await.unwrap();
    let dlq_arn = aws.queue_arn(&dlq_url).await.unwrap();
    aws.send_messages(&queue_url, 20).await.unwrap();
    let (cluster, service) = (unique("cluster"), unique("svc"));
    aws.create_service(&cluster, &service, 2).await.unwrap();
    let target = PublisherTarget { queue_url, queue: queue.clone(), cluster, service };
    proxies.sqs().inject(
        Rule::new("GetQueueAttributes", Fault::Deny).when_body_contains(&format!("{queue}-dlq")),
    );
    let env = [
        ("QUEUE_URL", target.queue_url.as_str()),
        ("ECS_CLUSTER_NAME", target.cluster.as_str()),
        ("ECS_SERVICE_NAME", target.service.as_str()),
    ];
    let error = error_of(invoke_publisher(&env, &proxies, Duration::from_secs(30)).await);
    assert_eq!(error["errorType"], "DeadLetterQueueUnreadable", "{error}");
    assert!(error["errorMessage"].as_str().unwrap().contains(&dlq_arn), "{error}");
    assert_eq!(read_back(&aws, &target, "BacklogPerTask").await, [10.0]);
    assert_eq!(read_back(&aws, &target, "QueueBacklog").await, [20.0]);
    assert!(read_back(&aws, &target, "DlqBacklog").await.is_empty(), "no DlqBacklog when unread");
}

// ---------------------------------------------------------------- defect 3

#[tokio::test]
async fn d3_a_hung_queue_read_costs_only_its_own_target() {
    let aws = Aws::from_env().await.unwrap();
    let proxies = Proxies::start().await;
    let (hung, healthy) = (target(&aws, 10, 1).await, target(&aws, 60, 2).await);
    proxies
        .sqs()
        .inject(Rule::new("GetQueueAttributes", Fault::Hang).when_body_contains(&hung.queue));
    let targets = format!("[{},{}]", hung.json(), healthy.json());
    let outcome =
        invoke_publisher(&[("TARGETS", &targets)], &proxies, Duration::from_secs(10)).await;
    let error = error_of(outcome);
    assert_eq!(error["errorType"], "TargetsNotPublished", "{error}");
    assert!(error["errorMessage"].as_str().unwrap().contains(&hung.queue), "{error}");
    assert_eq!(read_back(&aws, &healthy, "BacklogPerTask").await, [30.0]);
    assert!(read_back(&aws, &hung, "BacklogPerTask").await.is_empty());
}

#[tokio::test]
async fn d3_a_hung_describe_services_costs_only_its_clusters_targets() {
    let aws = Aws::from_env().await.unwrap();
    let proxies = Proxies::start().await;
    let hung_cluster = unique("hung");
    let (hung, healthy) = (
        PublisherTarget::create(&aws, &hung_cluster, 10, 1).await.unwrap(),
        target(&aws, 60, 2).await,
    );
    proxies
        .ecs()
        .inject(Rule::new("DescribeServices", Fault::Hang).when_body_contains(&hung_cluster));
    let targets = format!("[{},{}]", hung.json(), healthy.json());
    let outcome =
        invoke_publisher(&[("TARGETS", &targets)], &proxies, Duration::from_secs(10)).await;
    let error = error_of(outcome);
    assert_eq!(error["errorType"], "TargetsNotPublished", "{error}");
    assert!(error["errorMessage"].as_str().unwrap().contains("DescribeServices"), "{error}");
    assert_eq!(read_back(&aws, &healthy, "BacklogPerTask").await, [30.0]);
    assert!(read_back(&aws, &hung, "BacklogPerTask").await.is_empty());
}

// ---------------------------------------------------------------- defect 4

#[tokio::test]
async fn d4_absurd_targets_are_refused_at_start_naming_the_variable_and_value() {
    let queue = "https://sqs.us-east-1.amazonaws.com/123456789012/work";
    let targets = format!(
        r#"[{{"queueUrl":"{queue}","cluster":"c","service":"s","targetBacklogPerTask":1e300}}]"#
    );
    let cases: [(&[(&str, &str)], &str); 3] = [
        (
            &[
                ("QUEUE_URL", queue),
                ("ECS_CLUSTER_NAME", "c"),
                ("ECS_SERVICE_NAME", "s"),
                ("TARGET_BACKLOG_PER_TASK", "1e300"),
            ],
            r#"TARGET_BACKLOG_PER_TASK=\"1e300\" is invalid"#,
        ),
        (&[("TARGETS", targets.as_str())], "targetBacklogPerTask"),
        (
            &[
                ("QUEUE_URL", queue),
                ("ECS_CLUSTER_NAME", "c"),
                ("ECS_SERVICE_NAME", "s"),
                ("ACCEPTABLE_LATENCY_SECONDS", "1e200"),
                ("AVG_PROCESSING_SECONDS", "1e-200"),
            ],
            "ACCEPTABLE_LATENCY_SECONDS",
        ),
    ];
    for (env, expected) in cases {
        let host = LambdaHost::start(&binary("backlog-publisher").unwrap(), env).await.unwrap();
        let outcome = host.invoke(&schedule_event(), Duration::from_secs(10)).await;
        assert!(matches!(outcome, Outcome::Exited(status) if !status.success()), "{outcome:?}");
        let logs = host.logs().join("\n");
        assert!(logs.contains(expected), "{expected} not in {logs}");
    }
}

#[tokio::test]
async fn d4_desired_tasks_is_exact() {
    let aws = Aws::from_env().await.unwrap();
    let proxies = Proxies::start().await;
    let target = target(&aws, 21, 2).await;
    let env = [
        ("QUEUE_URL", target.queue_url.as_str()),
        ("ECS_CLUSTER_NAME", target.cluster.as_str()),
        ("ECS_SERVICE_NAME", target.service.as_str()),
        ("TARGET_BACKLOG_PER_TASK", "0.7"),
    ];
    match invoke_publisher(&env, &proxies, Duration::from_secs(30)).await {
        Outcome::Response(body) => assert_eq!(body["targets"][0]["desiredTasks"], 30, "{body}"),
        other => panic!("expected a response, got {other:?}"),
    }
    assert_eq!(read_back(&aws, &target, "DesiredTasks").await, [30.0]);
}

// ---------------------------------------------------------------- consumer

struct Consumer {
    aws: Aws,
    proxies: Proxies,
    downstream: Downstream,
    quarantine_url: String,
}

impl Consumer {
    async fn start() -> Self {
        let aws = Aws::from_env().await.unwrap();
        let quarantine_url = aws.create_queue(&unique("quarantine")).await.unwrap();
        Self {
            aws,
            proxies: Proxies::start().await,
            downstream: Downstream::start().await.unwrap(),
            quarantine_url,
        }
    }

    async fn host(&self, extra: &[(&str, &str)]) -> LambdaHost {
        let url = self.downstream.url();
        let mut env = vec![
            ("DOWNSTREAM_URL", url.as_str()),
            ("QUARANTINE_QUEUE_URL", self.quarantine_url.as_str()),
            ("API_CALL_TIMEOUT_MS", CALL_TIMEOUT_MS),
        ];
        env.extend(self.proxies.env());
        env.extend_from_slice(extra);
        LambdaHost::start(&binary("batch-consumer").unwrap(), &env).await.unwrap()
    }

    async fn invoke(&self, event: &Value, extra: &[(&str, &str)]) -> Outcome {
        self.host(extra).await.invoke(event, Duration::from_secs(20)).await
    }

    async fn quarantined(&self, expected: usize) -> Vec<Quarantined> {
        self.aws.quarantined(&self.quarantine_url, expected).await.unwrap()
    }
}

fn record(id: &str, body: &str) -> Value {
    sqs_record(id, json!(body), "arn:aws:sqs:us-east-1:123456789012:orders-work")
}

fn work(operation: &str, key: &str) -> String {
    json!({"schemaVersion": "1", "operation": operation, "tenantId": "t", "idempotencyKey": key})
        .to_string()
}

fn failures(outcome: Outcome) -> Vec<String> {
    outcome
        .batch_item_failures()
        .unwrap_or_else(|| panic!("expected a batch response, got {outcome:?}"))
}

#[tokio::test]
async fn d3_a_hung_quarantine_write_retries_only_the_poison_and_answers_in_time() {
    let consumer = Consumer::start().await;
    consumer.proxies.sqs().inject(Rule::new("SendMessageBatch", Fault::Hang));
    let event = json!({"Records": [
        record("ok-1", &work("invoice.create", "k1")),
        record("poison-1", "not json"),
        record("ok-2", &work("invoice.create", "k2")),
    ]});
    let host = consumer.host(&[]).await;
    let failed = failures(host.invoke(&event, Duration::from_secs(20)).await);
    assert_eq!(failed, ["poison-1"]);
    assert_eq!(consumer.downstream.received().len(), 2);
    // The call's own timeout ended the write, not the invocation's deadline guard.
    let logs = host.logs().join("\n");
    assert!(logs.contains("the SendMessageBatch call failed"), "{logs}");
    assert!(!logs.contains("did not finish before the invocation's deadline"), "{logs}");
}

// ---------------------------------------------------------------- defect 5

#[tokio::test]
async fn d5_poison_holding_characters_sqs_refuses_is_still_quarantined_byte_for_byte() {
    let consumer = Consumer::start().await;
    // Valid JSON whose contract fields decode to characters SQS refuses.
    let bodies = [
        r#"{"schemaVersion":"1","operation":"invoice.reject","tenantId":"t\u0000\u0001\uffff","idempotencyKey":"k\u000b1"}"#,
        r#"{"schemaVersion":"9\ufffe","operation":"op\u001f","tenantId":"\uffff","idempotencyKey":"k2"}"#,
        r#"{"schemaVersion":"1","operation":"x","tenantId":"t","idempotencyKey":"\u0000"}"#,
    ];
    let event = json!({"Records": bodies.iter().enumerate()
        .map(|(i, body)| record(&format!("poison-{i}"), body)).collect::<Vec<_>>()});
    let failed = failures(consumer.invoke(&event, &[]).await);
    assert!(failed.is_empty(), "every poison message is quarantined, none retried: {failed:?}");
    let quarantined = consumer.quarantined(bodies.len()).await;
    assert_eq!(quarantined.len(), bodies.len());
    for Quarantined { record, attributes } in &quarantined {
        let index: usize =
            record["messageId"].as_str().unwrap().trim_start_matches("poison-").parse().unwrap();
        assert_eq!(record["body"].as_str().unwrap(), bodies[index], "body byte for byte");
        for (name, value) in attributes {
            assert!(e2e_tests::fault_proxy::sqs_accepts(value), "{name}={value:?}");
        }
    }
    assert_eq!(consumer.proxies.sqs().refused_characters(), 0);
}

// ---------------------------------------------------------------- defect 6

#[tokio::test]
async fn d6_the_verdict_comes_from_the_status_line_not_a_slow_body() {
    let consumer = Consumer::start().await;
    let event = json!({"Records": [
        record("accepted", &work("invoice.slowbody", "k1")),
        record("rejected", &work("invoice.rejectslowbody", "k2")),
    ]});
    let failed = failures(consumer.invoke(&event, &[("DOWNSTREAM_TIMEOUT_MS", "1000")]).await);
    assert!(failed.is_empty(), "a 202 is done and a 422 quarantined: {failed:?}");
    let quarantined = consumer.quarantined(1).await;
    assert_eq!(quarantined.len(), 1);
    assert_eq!(quarantined[0].message_id(), "rejected");
    assert_eq!(quarantined[0].record["errorCode"], "downstream_rejected");
}

// ---------------------------------------------------------------- found by reading

#[tokio::test]
async fn trace_logging_never_prints_message_bodies() {
    let consumer = Consumer::start().await;
    let secret = "card-4111-1111-1111-1111";
    let body = json!({"schemaVersion": "1", "operation": "invoice.create", "tenantId": "t",
                      "idempotencyKey": "k", "pan": secret})
    .to_string();
    let event =
        json!({"Records": [record("m-1", &body), record("m-2", &format!("not json {secret}"))]});
    for level in [("AWS_LAMBDA_LOG_LEVEL", "TRACE"), ("RUST_LOG", "trace")] {
        let host = consumer.host(&[level]).await;
        let failed = failures(host.invoke(&event, Duration::from_secs(20)).await);
        assert!(failed.is_empty(), "{failed:?}");
        let logs = host.logs();
        assert!(logs.len() > 5, "{level:?} logs something: {logs:?}");
        assert!(!logs.iter().any(|line| line.contains(secret)), "{level:?} printed a body");
    }
}

#[tokio::test]
async fn a_tiny_max_rps_is_a_configuration_error_not_a_panic() {
    let consumer = Consumer::start().await;
    let host = consumer.host(&[("DOWNSTREAM_MAX_RPS", "1e-300")]).await;
    let outcome = host.invoke(&json!({"Records": []}), Duration::from_secs(10)).await;
    assert!(matches!(outcome, Outcome::Exited(status) if !status.success()), "{outcome:?}");
    let logs = host.logs().join("\n");
    assert!(logs.contains(r#"DOWNSTREAM_MAX_RPS=\"1e-300\" is invalid"#), "{logs}");
    assert!(!logs.contains("panicked"), "{logs}");
}
