//! backlog-publisher end to end: the release-shaped binary runs under a Lambda
//! Runtime API host, reads moto's SQS and ECS, and publishes to LocalStack's
//! CloudWatch, from which the figures are read back.

use std::time::Duration;

use e2e_tests::fault_proxy::FaultProxy;
use e2e_tests::fixtures::{Aws, PublisherTarget, binary, unique};
use e2e_tests::runtime_host::{LambdaHost, Outcome};
use serde_json::Value;

const NAMESPACE: &str = "SqsBackpressureE2E";

fn schedule_event() -> Value {
    serde_json::from_str(include_str!("../../../events/schedule.json")).unwrap()
}

/// Runs the publisher once on the scheduled event with `env` as its configuration.
async fn invoke_publisher(env: &[(&str, &str)]) -> Outcome {
    let mut env = env.to_vec();
    env.push(("METRIC_NAMESPACE", NAMESPACE));
    let host = LambdaHost::start(&binary("backlog-publisher").unwrap(), &env).await.unwrap();
    host.invoke(&schedule_event(), Duration::from_secs(30)).await
}

fn response(outcome: Outcome) -> Value {
    match outcome {
        Outcome::Response(body) => body,
        other => panic!("expected a response, got {other:?}"),
    }
}

async fn setup(aws: &Aws, messages: usize, running: i32) -> PublisherTarget {
    PublisherTarget::create(aws, &unique("cluster"), messages, running).await.unwrap()
}

async fn read_back(aws: &Aws, target: &PublisherTarget, metric: &str) -> Vec<f64> {
    target.metric(aws, NAMESPACE, metric).await.unwrap()
}

#[tokio::test]
async fn a_150_messages_and_3_tasks_publish_50() {
    let aws = Aws::from_env().await.unwrap();
    let setup = setup(&aws, 150, 3).await;
    let body = response(invoke_publisher(&setup.env()).await);
    assert_eq!(body["targets"][0]["backlogPerTask"], 50.0);
    assert_eq!(read_back(&aws, &setup, "BacklogPerTask").await, [50.0]);
    assert_eq!(read_back(&aws, &setup, "QueueBacklog").await, [150.0]);
    assert_eq!(read_back(&aws, &setup, "TaskCount").await, [3.0]);
    assert_eq!(read_back(&aws, &setup, "InFlight").await, [0.0]);
    assert_eq!(read_back(&aws, &setup, "InFlightCapUtilization").await, [0.0]);
    assert!(read_back(&aws, &setup, "DesiredTasks").await.is_empty(), "no target, no DesiredTasks");
    assert!(read_back(&aws, &setup, "DlqBacklog").await.is_empty(), "no DLQ, no DlqBacklog");
}

#[tokio::test]
async fn b_a_backlog_with_no_task_publishes_above_the_target() {
    let aws = Aws::from_env().await.unwrap();
    let setup = setup(&aws, 5, 0).await;
    let mut env = setup.env();
    env.push(("TARGET_BACKLOG_PER_TASK", "100"));
    response(invoke_publisher(&env).await);
    let values = read_back(&aws, &setup, "BacklogPerTask").await;
    assert_eq!(values.len(), 1, "{values:?}");
    assert!(
        values[0] > 100.0,
        "zero tasks and a backlog must publish above the target: {values:?}"
    );
    assert_eq!(read_back(&aws, &setup, "DesiredTasks").await, [1.0]);
    assert_eq!(read_back(&aws, &setup, "TaskCount").await, [0.0]);
}

#[tokio::test]
async fn c_an_empty_queue_with_no_task_publishes_0() {
    let aws = Aws::from_env().await.unwrap();
    let setup = setup(&aws, 0, 0).await;
    let mut env = setup.env();
    env.push(("TARGET_BACKLOG_PER_TASK", "100"));
    response(invoke_publisher(&env).await);
    assert_eq!(read_back(&aws, &setup, "BacklogPerTask").await, [0.0]);
    assert_eq!(read_back(&aws, &setup, "DesiredTasks").await, [0.0]);
}

#[tokio::test]
async fn d_two_targets_from_targets_json() {
    let aws = Aws::from_env().await.unwrap();
    let (first, second) = (setup(&aws, 40, 4).await, setup(&aws, 90, 3).await);
    let targets = format!("[{},{}]", first.json(), second.json());
    let body = response(invoke_publisher(&[("TARGETS", &targets)]).await);
    assert_eq!(body["targets"].as_array().map(Vec::len), Some(2));
    assert_eq!(read_back(&aws, &first, "BacklogPerTask").await, [10.0]);
    assert_eq!(read_back(&aws, &second, "BacklogPerTask").await, [30.0]);
}

#[tokio::test]
async fn e_a_deleted_queue_fails_the_invocation_after_the_other_target_is_published() {
    let aws = Aws::from_env().await.unwrap();
    let (gone, kept) = (setup(&aws, 10, 1).await, setup(&aws, 60, 2).await);
    aws.delete_queue(&gone.queue_url).await.unwrap();
    let targets = format!("[{},{}]", gone.json(), kept.json());
    let error = match invoke_publisher(&[("TARGETS", &targets)]).await {
        Outcome::Error(error) => error,
        other => panic!("expected an invocation error, got {other:?}"),
    };
    assert_eq!(error["errorType"], "TargetsNotPublished");
    let message = error["errorMessage"].as_str().unwrap_or_default();
    assert!(message.contains(&gone.queue) && message.contains("GetQueueAttributes"), "{message}");
    assert_eq!(read_back(&aws, &kept, "BacklogPerTask").await, [30.0]);
    for metric in ["BacklogPerTask", "QueueBacklog", "TaskCount"] {
        assert!(
            read_back(&aws, &gone, metric).await.is_empty(),
            "{metric} published for a deleted queue"
        );
    }
}

#[tokio::test]
async fn f_a_dead_letter_queue_backlog_is_published() {
    let aws = Aws::from_env().await.unwrap();
    let queue = unique("work");
    let (queue_url, dlq_url) = aws.create_queue_with_dlq(&queue).await.unwrap();
    aws.send_messages(&queue_url, 20).await.unwrap();
    aws.send_messages(&dlq_url, 7).await.unwrap();
    let (cluster, service) = (unique("cluster"), unique("svc"));
    aws.create_service(&cluster, &service, 2).await.unwrap();
    let setup = PublisherTarget { queue_url, queue, cluster, service };
    let body = response(invoke_publisher(&setup.env()).await);
    assert_eq!(body["targets"][0]["dlqBacklog"], 7);
    assert_eq!(read_back(&aws, &setup, "DlqBacklog").await, [7.0]);
    assert_eq!(read_back(&aws, &setup, "BacklogPerTask").await, [10.0]);
}

#[tokio::test]
async fn an_invalid_variable_fails_the_init_naming_it_and_its_value() {
    let host = LambdaHost::start(
        &binary("backlog-publisher").unwrap(),
        &[
            ("QUEUE_URL", "https://sqs.us-east-1.amazonaws.com/123456789012/work"),
            ("ECS_CLUSTER_NAME", "c"),
            ("ECS_SERVICE_NAME", "s"),
            ("TASK_COUNT", "sometimes"),
        ],
    )
    .await
    .unwrap();
    let outcome = host.invoke(&schedule_event(), Duration::from_secs(10)).await;
    assert!(matches!(outcome, Outcome::Exited(status) if !status.success()), "{outcome:?}");
    let logs = host.logs().join("\n");
    assert!(logs.contains(r#"TASK_COUNT=\"sometimes\" is invalid"#), "{logs}");
}

#[tokio::test]
async fn g_twelve_targets_cost_one_read_per_queue_two_describes_and_one_put() {
    let aws = Aws::from_env().await.unwrap();
    let cluster = unique("cluster");
    let mut targets = Vec::new();
    for i in 0..12 {
        let queue_url = aws.create_queue(&unique(&format!("fan-{i}"))).await.unwrap();
        let service = format!("svc-{i}");
        aws.create_service(&cluster, &service, 1).await.unwrap();
        targets.push(format!(
            r#"{{"queueUrl":"{queue_url}","cluster":"{cluster}","service":"{service}"}}"#
        ));
    }
    let targets = format!("[{}]", targets.join(","));
    // Each service's calls go through a proxy that counts them by operation.
    let proxies = FaultProxy::for_each_endpoint().await.unwrap();
    let mut env: Vec<(&str, &str)> = vec![("TARGETS", targets.as_str())];
    env.extend(proxies.iter().map(|(name, proxy)| (*name, proxy.url())));
    response(invoke_publisher(&env).await);

    let calls = |i: usize| proxies[i].1.counts().into_iter().collect::<Vec<_>>();
    assert_eq!(calls(0), [("GetQueueAttributes".to_owned(), 12)]);
    assert_eq!(calls(1), [("DescribeServices".to_owned(), 2)]);
    assert_eq!(calls(2), [("PutMetricData".to_owned(), 1)]);
}
