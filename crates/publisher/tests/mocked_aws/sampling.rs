//! Sub-minute sampling against the mocks: each sample published as it is
//! taken, and none started that the deadline would cut.

use super::*;

fn sampling_publisher(samples: u32, interval_secs: u64) -> (Publisher<CloudWatchSink>, Published) {
    let (put, published) = recording_put_rule();
    let mut config = config(vec![target(QUEUE_A, "c1", "svc-a")]);
    config.sampling = Sampling { samples, interval: Duration::from_secs(interval_secs) };
    let publisher = publisher(
        config,
        &[&queue_rule(QUEUE_A, 150, None)],
        &[&services_rule("c1", vec![service("svc-a", 3)], vec![])],
        &[&put],
    );
    (publisher, published)
}

#[tokio::test(start_paused = true)]
async fn each_sample_is_published_as_it_is_taken() {
    let (publisher, published) = sampling_publisher(6, 10);
    let start = Instant::now();
    let summary = publisher.run(start + Duration::from_secs(70)).await.unwrap();
    assert_eq!(summary.samples, 6);
    assert_eq!(published.lock().unwrap().len(), 6, "one PutMetricData per sample");
    assert!(start.elapsed() >= Duration::from_secs(50), "samples are 10 s apart");
}

#[tokio::test(start_paused = true)]
async fn sampling_stops_before_the_deadline() {
    let (publisher, published) = sampling_publisher(6, 10);
    let start = Instant::now();
    let deadline = start + Duration::from_secs(25);
    let summary = publisher.run(deadline).await.unwrap();
    assert_eq!(summary.samples, 3, "samples at 0, 10 and 20 s fit; 30 s does not");
    assert_eq!(published.lock().unwrap().len(), 3);
    assert!(Instant::now() < deadline);
}

#[tokio::test(start_paused = true)]
async fn no_time_left_means_an_error_and_nothing_published() {
    let (publisher, published) = sampling_publisher(1, 0);
    let error = publisher.run(Instant::now() + Duration::from_millis(100)).await.unwrap_err();
    assert!(
        matches!(error, InvocationError::Deadline { sample: 0, published_requests: 0 }),
        "{error:?}"
    );
    assert!(error.to_string().contains("none of it was published"), "{error}");
    assert!(published.lock().unwrap().is_empty());
}

#[tokio::test]
async fn an_unreadable_dead_letter_queue_leaves_out_only_dlq_backlog() {
    let (put, published) = recording_put_rule();
    let policy = r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:123456789012:queue-a-dlq","maxReceiveCount":"5"}"#;
    let denied = mock!(aws_sdk_sqs::Client::get_queue_attributes)
        .match_requests(|req| req.queue_url().is_some_and(|url| url.ends_with("queue-a-dlq")))
        .then_error(|| GetQueueAttributesError::unhandled("AccessDenied"));
    let publisher = publisher(
        config(vec![target(QUEUE_A, "c1", "svc-a")]),
        &[&denied, &queue_rule(QUEUE_A, 10, Some(policy))],
        &[&services_rule("c1", vec![service("svc-a", 1)], vec![])],
        &[&put],
    );
    let error = publisher.run(deadline()).await.unwrap_err();
    assert_eq!(error.error_type(), "DeadLetterQueueUnreadable");
    assert!(
        error.to_string().contains("arn:aws:sqs:us-east-1:123456789012:queue-a-dlq"),
        "{error}"
    );
    let datums = all_datums(&published);
    assert_eq!(value_of(&datums, "BacklogPerTask", "queue-a"), Some(10.0));
    assert_eq!(value_of(&datums, "DlqBacklog", "queue-a"), None);
}

#[tokio::test]
async fn a_redrive_policy_naming_no_queue_leaves_out_only_dlq_backlog() {
    let (put, published) = recording_put_rule();
    let publisher = publisher(
        config(vec![target(QUEUE_A, "c1", "svc-a")]),
        &[&queue_rule(QUEUE_A, 10, Some(r#"{"maxReceiveCount":"5"}"#))],
        &[&services_rule("c1", vec![service("svc-a", 1)], vec![])],
        &[&put],
    );
    let error = publisher.run(deadline()).await.unwrap_err();
    assert_eq!(error.error_type(), "DeadLetterQueueUnreadable");
    assert_eq!(value_of(&all_datums(&published), "BacklogPerTask", "queue-a"), Some(10.0));
}

/// Accepts the first `PutMetricData` request and never answers the next.
#[derive(Debug, Default)]
struct StallsAfterFirstRequest {
    accepted: Mutex<usize>,
}

impl backlog_publisher::services::MetricSink for StallsAfterFirstRequest {
    async fn put_metric_data(
        &self,
        _datums: &[backlog_publisher::metrics::Datum],
    ) -> Result<(), backpressure_core::error::ApiError> {
        let first = {
            let mut accepted = self.accepted.lock().unwrap();
            *accepted += 1;
            *accepted == 1
        };
        if !first {
            std::future::pending::<()>().await;
        }
        Ok(())
    }
}

#[tokio::test(start_paused = true)]
async fn a_deadline_after_a_published_chunk_says_so() {
    // 200 targets × 6 datums: two PutMetricData requests.
    let targets: Vec<Target> = (0..200)
        .map(|i| {
            let mut target = target(&format!("{QUEUE_A}-{i}"), "c1", &format!("svc-{i}"));
            target.backlog_target = None;
            target
        })
        .collect();
    let any_queue = mock!(aws_sdk_sqs::Client::get_queue_attributes).then_output(|| {
        GetQueueAttributesOutput::builder()
            .attributes(QueueAttributeName::ApproximateNumberOfMessages, "5")
            .attributes(QueueAttributeName::ApproximateNumberOfMessagesNotVisible, "0")
            .attributes(QueueAttributeName::ApproximateNumberOfMessagesDelayed, "0")
            .build()
    });
    let any_services = mock!(aws_sdk_ecs::Client::describe_services).then_compute_output(|req| {
        DescribeServicesOutput::builder()
            .set_services(Some(req.services().iter().map(|name| service(name, 1)).collect()))
            .build()
    });
    let sqs = mock_client!(aws_sdk_sqs, RuleMode::MatchAny, &[&any_queue]);
    let ecs = mock_client!(aws_sdk_ecs, RuleMode::MatchAny, &[&any_services]);
    let publisher = Publisher::new(
        config(targets),
        SqsQueues::new(sqs),
        EcsServices::new(ecs),
        StallsAfterFirstRequest::default(),
    );
    let error = publisher.run(Instant::now() + Duration::from_secs(5)).await.unwrap_err();
    assert!(
        matches!(error, InvocationError::Deadline { sample: 0, published_requests: 1 }),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(!message.contains("none of it"), "{message}");
    assert!(message.contains("1 of its PutMetricData requests had been accepted"), "{message}");
}
