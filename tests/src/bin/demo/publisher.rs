//! The demo's publisher part: a busy service and an idle one with work
//! waiting, published once with the template's default settings, and the
//! metrics read back from CloudWatch.

use std::time::Duration;

use backlog_publisher::backlog::ZERO_TASK_TARGET_MULTIPLIER;
use backlog_publisher::load::HOLD_FRACTION;
use backlog_publisher::metrics::{DIMENSION_NAMES, METRIC_NAMES};
use e2e_tests::fixtures::{Aws, BoxError, binary};
use e2e_tests::runtime_host::{LambdaHost, Outcome};
use e2e_tests::template_defaults;

use crate::{READABLE_LOGS, sample};

const NAMESPACE: &str = "SqsBackpressure";

pub async fn publisher(aws: &Aws) -> Result<(), BoxError> {
    let event = sample("schedule.json")?;
    // The demo's emulators start empty on every run, so fixed names are safe.
    let (queue, idle_queue) = ("orders-work".to_owned(), "reports-work".to_owned());
    let (cluster, busy, idle) =
        ("demo".to_owned(), "orders-workers".to_owned(), "reports-workers".to_owned());
    let (queue_url, dlq_url) = aws.create_queue_with_dlq(&queue).await?;
    aws.send_messages(&queue_url, 150).await?;
    aws.send_messages(&dlq_url, 2).await?;
    aws.create_service(&cluster, &busy, 3).await?;
    aws.create_service(&cluster, &idle, 0).await?;
    let idle_queue_url = aws.create_queue(&idle_queue).await?;
    aws.send_messages(&idle_queue_url, 5).await?;

    println!("\n#### backlog-publisher\n\n== Emulated AWS");
    println!("  queue {queue}: 150 messages waiting, its dead-letter queue holds 2");
    println!("  ECS service {cluster}/{busy}: 3 running tasks");
    println!(
        "  queue {idle_queue}: 5 messages waiting; ECS service {cluster}/{idle}: 0 running tasks"
    );
    let template = template_defaults::environment("PublisherFunction")?;
    let setting = |name: &str| {
        template.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone()).unwrap_or_default()
    };
    let target = setting("TARGET_LOAD_PERCENT");
    println!("  the publisher's settings: the template's defaults, as a stack deploys them");
    println!(
        "  target backlog per task: {} (TARGET_BACKLOG_PER_TASK)",
        setting("TARGET_BACKLOG_PER_TASK")
    );
    println!(
        "  ScalingLoad, the template's signal: {} slots a task (CONSUMER_CONCURRENCY), {} s a \
         message (AVG_PROCESSING_SECONDS), target {target} % (TARGET_LOAD_PERCENT)",
        setting("CONSUMER_CONCURRENCY"),
        setting("AVG_PROCESSING_SECONDS"),
    );

    let targets = format!(
        r#"[{{"queueUrl":"{queue_url}","cluster":"{cluster}","service":"{busy}"}},
            {{"queueUrl":"{idle_queue_url}","cluster":"{cluster}","service":"{idle}"}}]"#
    );
    let mut env: Vec<(&str, &str)> =
        template.iter().map(|(name, value)| (name.as_str(), value.as_str())).collect();
    env.extend([("TARGETS", targets.as_str()), READABLE_LOGS]);
    println!("\n== Invoking backlog-publisher with events/schedule.json (its logs follow)");
    let host = LambdaHost::start(&binary("backlog-publisher")?, &env).await?;
    let outcome = host.invoke(&event, Duration::from_secs(30)).await;
    if let Some(init) = host.time_to_first_next() {
        println!(
            "\n  init (process start → its first request for an event, as Lambda bills it): {:.1} ms",
            init.as_secs_f64() * 1e3
        );
    }
    match outcome {
        Outcome::Response(body) => println!("  response: {}", serde_json::to_string_pretty(&body)?),
        other => return Err(format!("the publisher did not succeed: {other:?}").into()),
    }

    println!("\n== Read back from CloudWatch (namespace {NAMESPACE}, 1-minute average)");
    for (queue, service) in [(&queue, &busy), (&idle_queue, &idle)] {
        let values = [cluster.as_str(), service.as_str(), queue.as_str()];
        let dimensions: Vec<(&str, &str)> = DIMENSION_NAMES.into_iter().zip(values).collect();
        let shown: Vec<String> =
            dimensions.iter().map(|(name, value)| format!("{name}={value}")).collect();
        println!("  {}", shown.join(" "));
        for metric in METRIC_NAMES {
            let values = aws
                .metric_averages(NAMESPACE, metric, &dimensions, Duration::from_secs(600))
                .await?;
            match values.last() {
                Some(value) => println!("    {metric:<24} {value}"),
                None => println!("    {metric:<24} (not published)"),
            }
        }
    }
    let target: f64 = target.parse().map_err(|_| format!("TARGET_LOAD_PERCENT {target:?}"))?;
    let busy_tasks = 3.0;
    println!(
        "\n  The busy service: DesiredTasks is the backlog over the target, 150 / 100 rounded up = 2,\n  \
         fewer than its 3 tasks, and ScalingLoad is under its {target} % target: both say scale in.\n  \
         Its ScalingLoad {floor} is the hold's floor: 150 messages at 1 s each need under one slot\n  \
         to drain within LOAD_DRAIN_SECONDS, but while work waits the load never drops below one\n  \
         held task's worth ({HOLD_FRACTION} × {target} % ÷ 3 tasks), so the template's scaling keeps one task.\n  \
         The idle service has no task but 5 messages wait: both signals are published at twice\n  \
         their target (BacklogPerTask {backlog}, ScalingLoad {load}), above it, so target tracking\n  \
         scales the service out from zero.",
        floor = HOLD_FRACTION * target / busy_tasks,
        backlog = 100.0 * ZERO_TASK_TARGET_MULTIPLIER,
        load = target * ZERO_TASK_TARGET_MULTIPLIER,
    );
    Ok(())
}
