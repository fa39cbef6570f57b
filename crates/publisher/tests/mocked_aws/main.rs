//! The publisher against SDK clients answered by `aws-smithy-mocks`: failures
//! of one target's reads, and what is (and is not) published because of them.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use std::sync::{Arc, Mutex};
use std::time::Duration;

use aws_sdk_cloudwatch::operation::put_metric_data::{
    PutMetricDataError, PutMetricDataInput, PutMetricDataOutput,
};
use aws_sdk_cloudwatch::types::{MetricDatum, StandardUnit};
use aws_sdk_ecs::operation::describe_services::{DescribeServicesError, DescribeServicesOutput};
use aws_sdk_ecs::types::{Failure, Service};
use aws_sdk_sqs::operation::get_queue_attributes::{
    GetQueueAttributesError, GetQueueAttributesOutput,
};
use aws_sdk_sqs::types::QueueAttributeName;
use aws_sdk_sqs::types::error::RequestThrottled;
use aws_smithy_mocks::{Rule, RuleMode, mock, mock_client};
use backlog_publisher::aws::{CloudWatchSink, EcsServices, SqsQueues};
use backlog_publisher::publisher::{InvocationError, Publisher};
use backlog_publisher::{BacklogTarget, PublisherConfig, Sampling, StorageResolution, Target};
use backpressure_core::queue::QueueRef;
use tokio::time::Instant;

const QUEUE_A: &str = "https://sqs.us-east-1.amazonaws.com/123456789012/queue-a";
const QUEUE_B: &str = "https://sqs.us-east-1.amazonaws.com/123456789012/queue-b";

fn target(queue: &str, cluster: &str, service: &str) -> Target {
    Target {
        queue: QueueRef::parse(queue).unwrap(),
        cluster: cluster.into(),
        service: service.into(),
        backlog_target: BacklogTarget::new(100.0),
    }
}

fn config(targets: Vec<Target>) -> PublisherConfig {
    PublisherConfig {
        targets,
        namespace: "Test".into(),
        storage_resolution: StorageResolution::Standard,
        policy: Default::default(),
        sampling: Sampling::default(),
        api_call_timeout: Duration::from_secs(5),
        load: None,
    }
}

fn queue_rule(url: &'static str, visible: u32, redrive: Option<&'static str>) -> Rule {
    mock!(aws_sdk_sqs::Client::get_queue_attributes)
        .match_requests(move |req| req.queue_url() == Some(url))
        .then_output(move || {
            let mut output = GetQueueAttributesOutput::builder()
                .attributes(QueueAttributeName::ApproximateNumberOfMessages, visible.to_string())
                .attributes(QueueAttributeName::ApproximateNumberOfMessagesNotVisible, "6")
                .attributes(QueueAttributeName::ApproximateNumberOfMessagesDelayed, "2");
            if let Some(policy) = redrive {
                output = output.attributes(QueueAttributeName::RedrivePolicy, policy);
            }
            output.build()
        })
}

fn throttled_queue_rule(url: &'static str) -> Rule {
    mock!(aws_sdk_sqs::Client::get_queue_attributes)
        .match_requests(move |req| req.queue_url() == Some(url))
        .then_error(|| {
            GetQueueAttributesError::RequestThrottled(RequestThrottled::builder().build())
        })
}

fn service(name: &str, running: i32) -> Service {
    Service::builder()
        .service_name(name)
        .status("ACTIVE")
        .running_count(running)
        .pending_count(1)
        .desired_count(running + 1)
        .build()
}

fn services_rule(cluster: &'static str, services: Vec<Service>, failures: Vec<Failure>) -> Rule {
    mock!(aws_sdk_ecs::Client::describe_services)
        .match_requests(move |req| req.cluster() == Some(cluster))
        .then_output(move || {
            DescribeServicesOutput::builder()
                .set_services(Some(services.clone()))
                .set_failures(Some(failures.clone()))
                .build()
        })
}

type Published = Arc<Mutex<Vec<PutMetricDataInput>>>;

fn recording_put_rule() -> (Rule, Published) {
    let published: Published = Arc::default();
    let sink = published.clone();
    let rule = mock!(aws_sdk_cloudwatch::Client::put_metric_data).then_compute_output(move |req| {
        sink.lock().unwrap().push(req.clone());
        PutMetricDataOutput::builder().build()
    });
    (rule, published)
}

fn publisher(
    config: PublisherConfig,
    sqs: &[&Rule],
    ecs: &[&Rule],
    cloudwatch: &[&Rule],
) -> Publisher<CloudWatchSink> {
    let sqs = mock_client!(aws_sdk_sqs, RuleMode::MatchAny, sqs);
    let ecs = mock_client!(aws_sdk_ecs, RuleMode::MatchAny, ecs);
    let cloudwatch = mock_client!(aws_sdk_cloudwatch, RuleMode::MatchAny, cloudwatch);
    let sink = CloudWatchSink::new(cloudwatch, config.namespace.clone(), config.storage_resolution);
    Publisher::new(config, SqsQueues::new(sqs), EcsServices::new(ecs), sink)
}

fn deadline() -> Instant {
    Instant::now() + Duration::from_secs(30)
}

fn all_datums(published: &Published) -> Vec<MetricDatum> {
    published.lock().unwrap().iter().flat_map(|input| input.metric_data().to_vec()).collect()
}

fn dimension(datum: &MetricDatum, name: &str) -> String {
    datum
        .dimensions()
        .iter()
        .find(|d| d.name() == Some(name))
        .and_then(|d| d.value())
        .unwrap_or_default()
        .to_owned()
}

fn value_of(datums: &[MetricDatum], metric: &str, queue: &str) -> Option<f64> {
    datums
        .iter()
        .find(|d| d.metric_name() == Some(metric) && dimension(d, "QueueName") == queue)
        .and_then(MetricDatum::value)
}

#[tokio::test]
async fn publishes_backlog_per_task_with_dimensions_and_units() {
    let (put, published) = recording_put_rule();
    let publisher = publisher(
        config(vec![target(QUEUE_A, "c1", "svc-a")]),
        &[&queue_rule(QUEUE_A, 150, None)],
        &[&services_rule("c1", vec![service("svc-a", 3)], vec![])],
        &[&put],
    );
    let summary = publisher.run(deadline()).await.unwrap();
    assert_eq!(summary.samples, 1);
    assert_eq!(summary.targets[0].backlog_per_task, 50.0);

    let requests = published.lock().unwrap().clone();
    assert_eq!(requests.len(), 1, "one PutMetricData per sample");
    assert_eq!(requests[0].namespace(), Some("Test"));
    let datums = all_datums(&published);
    let names: Vec<&str> = datums.iter().filter_map(MetricDatum::metric_name).collect();
    assert_eq!(
        names,
        [
            "BacklogPerTask",
            "QueueBacklog",
            "InFlight",
            "Delayed",
            "TaskCount",
            "DesiredTasks",
            "InFlightCapUtilization"
        ]
    );
    for datum in &datums {
        let dims: Vec<_> =
            datum.dimensions().iter().map(|d| (d.name().unwrap(), d.value().unwrap())).collect();
        assert_eq!(
            dims,
            [("ClusterName", "c1"), ("ServiceName", "svc-a"), ("QueueName", "queue-a")]
        );
        assert!(datum.timestamp().is_some());
        assert_eq!(datum.storage_resolution(), Some(60));
        let unit = if datum.metric_name() == Some("InFlightCapUtilization") {
            StandardUnit::Percent
        } else {
            StandardUnit::Count
        };
        assert_eq!(datum.unit(), Some(&unit));
    }
    assert_eq!(value_of(&datums, "BacklogPerTask", "queue-a"), Some(50.0));
    assert_eq!(value_of(&datums, "TaskCount", "queue-a"), Some(3.0));
    assert_eq!(value_of(&datums, "DesiredTasks", "queue-a"), Some(2.0));
    assert_eq!(value_of(&datums, "InFlight", "queue-a"), Some(6.0));
    assert_eq!(value_of(&datums, "Delayed", "queue-a"), Some(2.0));
}

#[tokio::test]
async fn throttled_queue_read_publishes_nothing_for_that_target_only() {
    let (put, published) = recording_put_rule();
    let publisher = publisher(
        config(vec![target(QUEUE_A, "c1", "svc-a"), target(QUEUE_B, "c1", "svc-b")]),
        &[&throttled_queue_rule(QUEUE_A), &queue_rule(QUEUE_B, 40, None)],
        &[&services_rule("c1", vec![service("svc-a", 2), service("svc-b", 4)], vec![])],
        &[&put],
    );
    let error = publisher.run(deadline()).await.unwrap_err();
    let InvocationError::TargetsNotPublished { failed, total, details } = &error else {
        panic!("unexpected error {error:?}");
    };
    assert_eq!((*failed, *total), (1, 2));
    assert!(
        details.contains("queue-a") && details.contains("GetQueueAttributes failed"),
        "{details}"
    );
    let datums = all_datums(&published);
    assert!(datums.iter().all(|d| dimension(d, "QueueName") == "queue-b"), "no datum for queue-a");
    assert_eq!(value_of(&datums, "BacklogPerTask", "queue-b"), Some(10.0));
}

#[tokio::test]
async fn failed_describe_services_publishes_nothing_for_that_cluster() {
    let (put, published) = recording_put_rule();
    let failing = mock!(aws_sdk_ecs::Client::describe_services)
        .match_requests(|req| req.cluster() == Some("c1"))
        .then_error(|| DescribeServicesError::unhandled("ThrottlingException: rate exceeded"));
    let publisher = publisher(
        config(vec![target(QUEUE_A, "c1", "svc-a"), target(QUEUE_B, "c2", "svc-b")]),
        &[&queue_rule(QUEUE_A, 10, None), &queue_rule(QUEUE_B, 40, None)],
        &[&failing, &services_rule("c2", vec![service("svc-b", 4)], vec![])],
        &[&put],
    );
    let error = publisher.run(deadline()).await.unwrap_err().to_string();
    assert!(error.contains("1 of 2 targets") && error.contains("cluster c1"), "{error}");
    let datums = all_datums(&published);
    assert!(!datums.is_empty());
    assert!(datums.iter().all(|d| dimension(d, "ClusterName") == "c2"));
}

#[tokio::test]
async fn service_missing_from_describe_services_is_a_failure_not_zero_tasks() {
    let (put, published) = recording_put_rule();
    let missing = Failure::builder()
        .arn("arn:aws:ecs:us-east-1:123456789012:service/c1/svc-a")
        .reason("MISSING")
        .build();
    let publisher = publisher(
        config(vec![target(QUEUE_A, "c1", "svc-a"), target(QUEUE_B, "c1", "svc-b")]),
        &[&queue_rule(QUEUE_A, 10, None), &queue_rule(QUEUE_B, 40, None)],
        &[&services_rule("c1", vec![service("svc-b", 4)], vec![missing])],
        &[&put],
    );
    let error = publisher.run(deadline()).await.unwrap_err().to_string();
    assert!(error.contains("service svc-a of cluster c1") && error.contains("MISSING"), "{error}");
    let datums = all_datums(&published);
    assert!(datums.iter().all(|d| dimension(d, "ServiceName") == "svc-b"));
    assert_eq!(value_of(&datums, "BacklogPerTask", "queue-b"), Some(10.0));
}

#[tokio::test]
async fn describe_services_is_batched_ten_services_per_cluster() {
    let (put, published) = recording_put_rule();
    let names: Vec<String> = (0..12).map(|i| format!("svc-{i}")).collect();
    let queues: Vec<&'static str> = (0..12)
        .map(|i| {
            &*Box::leak(format!("https://sqs.us-east-1.amazonaws.com/1/q{i}").into_boxed_str())
        })
        .collect();
    let targets =
        names.iter().zip(&queues).map(|(name, queue)| target(queue, "c1", name)).collect();
    let queue_rules: Vec<Rule> = queues.iter().map(|q| queue_rule(q, 30, None)).collect();
    let seen: Arc<Mutex<Vec<usize>>> = Arc::default();
    let record = seen.clone();
    let all_services: Vec<Service> = names.iter().map(|n| service(n, 3)).collect();
    let describe = mock!(aws_sdk_ecs::Client::describe_services).then_compute_output(move |req| {
        record.lock().unwrap().push(req.services().len());
        let asked: Vec<Service> = all_services
            .iter()
            .filter(|s| req.services().iter().any(|n| Some(n.as_str()) == s.service_name()))
            .cloned()
            .collect();
        DescribeServicesOutput::builder().set_services(Some(asked)).build()
    });
    let queue_refs: Vec<&Rule> = queue_rules.iter().collect();
    let publisher = publisher(config(targets), &queue_refs, &[&describe], &[&put]);
    let summary = publisher.run(deadline()).await.unwrap();
    assert_eq!(summary.targets.len(), 12);
    let mut sizes = seen.lock().unwrap().clone();
    sizes.sort_unstable();
    assert_eq!(sizes, [2, 10]);
    assert_eq!(published.lock().unwrap().len(), 1);
    assert_eq!(all_datums(&published).len(), 12 * 7);
}

#[tokio::test]
async fn dead_letter_queue_backlog_is_read_and_published() {
    let (put, published) = recording_put_rule();
    let policy = r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:123456789012:queue-a-dlq","maxReceiveCount":"5"}"#;
    let publisher = publisher(
        config(vec![target(QUEUE_A, "c1", "svc-a")]),
        &[
            &queue_rule(QUEUE_A, 10, Some(policy)),
            &queue_rule("https://sqs.us-east-1.amazonaws.com/123456789012/queue-a-dlq", 7, None),
        ],
        &[&services_rule("c1", vec![service("svc-a", 1)], vec![])],
        &[&put],
    );
    let summary = publisher.run(deadline()).await.unwrap();
    assert_eq!(summary.targets[0].dlq_backlog, Some(7));
    assert_eq!(value_of(&all_datums(&published), "DlqBacklog", "queue-a"), Some(7.0));
}

#[tokio::test]
async fn failed_put_metric_data_fails_the_invocation() {
    let failing = mock!(aws_sdk_cloudwatch::Client::put_metric_data)
        .then_error(|| PutMetricDataError::unhandled("InternalServiceError"));
    let publisher = publisher(
        config(vec![target(QUEUE_A, "c1", "svc-a")]),
        &[&queue_rule(QUEUE_A, 150, None)],
        &[&services_rule("c1", vec![service("svc-a", 3)], vec![])],
        &[&failing],
    );
    let error = publisher.run(deadline()).await.unwrap_err();
    assert!(matches!(error, InvocationError::Publish { sample: 0, .. }), "{error:?}");
    assert_eq!(error.error_type(), "PutMetricDataFailed");
}

mod sampling;
