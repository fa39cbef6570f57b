//! The publisher's soak.

use std::time::{Duration, Instant};

use e2e_tests::fault_proxy::{Fault, FaultProxy, Rule};
use e2e_tests::fixtures::{Aws, BoxError, binary, unique};
use e2e_tests::runtime_host::{LambdaHost, Outcome};
use serde_json::Value;

use crate::report::Report;
use crate::{CALL_TIMEOUT_MS, INVOCATION_TIMEOUT};

/// The publisher with two targets (the first with a dead-letter queue); a
/// fault on most tenth invocations.
pub(crate) async fn soak_publisher(aws: &Aws, invocations: usize) -> Result<Report, BoxError> {
    let (queue_a, queue_b) = (unique("soak-a"), unique("soak-b"));
    let (url_a, dlq_a) = aws.create_queue_with_dlq(&queue_a).await?;
    let url_b = aws.create_queue(&queue_b).await?;
    aws.send_messages(&url_a, 8).await?;
    aws.send_messages(&url_b, 8).await?;
    aws.send_messages(&dlq_a, 1).await?;
    let (cluster_a, cluster_b) = (unique("soak-ca"), unique("soak-cb"));
    aws.create_service(&cluster_a, "svc", 2).await?;
    aws.create_service(&cluster_b, "svc", 2).await?;
    let targets = format!(
        r#"[{{"queueUrl":"{url_a}","cluster":"{cluster_a}","service":"svc"}},
            {{"queueUrl":"{url_b}","cluster":"{cluster_b}","service":"svc"}}]"#
    );
    let proxies = FaultProxy::for_each_endpoint().await?;
    let mut env = vec![
        ("TARGETS", targets.as_str()),
        ("METRIC_NAMESPACE", "SqsBackpressureSoak"),
        ("API_CALL_TIMEOUT_MS", CALL_TIMEOUT_MS),
    ];
    env.extend(proxies.iter().map(|(name, proxy)| (*name, proxy.url())));
    let host = LambdaHost::start(&binary("backlog-publisher")?, &env).await?;
    let event: Value = serde_json::from_str(include_str!("../../../../events/schedule.json"))?;
    let mut report = Report::new("backlog-publisher", invocations);
    let started = Instant::now();
    for i in 1..=invocations {
        for (_, proxy) in &proxies {
            proxy.clear();
        }
        let (sqs, ecs, cloudwatch) = (&proxies[0].1, &proxies[1].1, &proxies[2].1);
        // The errorType expected, and which targets' names it must mention.
        let expected: (&str, Option<&str>) = match i % 10 {
            _ if i % 100 == 99 => {
                cloudwatch.inject(Rule::new("PutMetricData", Fault::Hang));
                ("PutMetricDataFailed", None)
            }
            6 => {
                sqs.inject(
                    Rule::new("GetQueueAttributes", Fault::Deny)
                        .when_body_contains(&format!("{queue_a}\"")),
                );
                ("TargetsNotPublished", Some(queue_a.as_str()))
            }
            7 => {
                sqs.inject(
                    Rule::new("GetQueueAttributes", Fault::Throttle)
                        .when_body_contains(&format!("{queue_a}-dlq")),
                );
                ("DeadLetterQueueUnreadable", Some(queue_a.as_str()))
            }
            8 => {
                ecs.inject(
                    Rule::new("DescribeServices", Fault::ServerError)
                        .when_body_contains(&cluster_b),
                );
                ("TargetsNotPublished", Some(queue_b.as_str()))
            }
            9 => {
                cloudwatch
                    .inject(Rule::new("PutMetricData", Fault::Delay(Duration::from_millis(50))));
                ("success", None)
            }
            _ => ("success", None),
        };
        if expected != ("success", None) {
            report.faults_injected += 1;
        }
        let outcome = host.invoke(&event, INVOCATION_TIMEOUT).await;
        report.counted += 2;
        let correct = match (&outcome, expected) {
            (Outcome::Response(body), ("success", _)) => {
                let targets = body["targets"].as_array().cloned().unwrap_or_default();
                targets.len() == 2 && targets.iter().all(|t| t["backlogPerTask"] == 4.0)
            }
            (Outcome::Error(error), (error_type, named)) => {
                error["errorType"] == error_type
                    && named.is_none_or(|name| {
                        error["errorMessage"].as_str().unwrap_or_default().contains(name)
                    })
            }
            _ => false,
        };
        if !correct {
            report.misreported += 1;
            eprintln!("soak: publisher invocation {i} expected {expected:?}, got {outcome:?}");
        }
        if matches!(outcome, Outcome::TimedOut | Outcome::Exited(_)) {
            report.lost += 2;
        }
        report.sample(&host, i);
    }
    report.finish(&host, started);
    Ok(report)
}

// ---------------------------------------------------------------- consumer
