//! `make demo`: runs backlog-publisher against the emulators, through the
//! Lambda Runtime API, on `events/schedule.json`, and prints what it published.

use std::time::Duration;

use backpressure_core::metrics::{DIMENSION_NAMES, METRIC_NAMES};
use e2e_tests::fixtures::{Aws, BoxError, binary};
use e2e_tests::runtime_host::{LambdaHost, Outcome};

const NAMESPACE: &str = "SqsBackpressure";

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let aws = Aws::from_env().await?;
    let event: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../events/schedule.json"
    ))?)?;

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

    println!("\n== Emulated AWS");
    println!("  queue {queue}: 150 messages waiting, its dead-letter queue holds 2");
    println!("  ECS service {cluster}/{busy}: 3 running tasks");
    println!(
        "  queue {idle_queue}: 5 messages waiting; ECS service {cluster}/{idle}: 0 running tasks"
    );
    println!("  target backlog per task: 100 (TARGET_BACKLOG_PER_TASK)");

    let targets = format!(
        r#"[{{"queueUrl":"{queue_url}","cluster":"{cluster}","service":"{busy}"}},
            {{"queueUrl":"{idle_queue_url}","cluster":"{cluster}","service":"{idle}"}}]"#
    );
    let env = [("TARGETS", targets.as_str()), ("TARGET_BACKLOG_PER_TASK", "100")];
    println!("\n== Invoking backlog-publisher with events/schedule.json (its logs follow)");
    let host = LambdaHost::start(&binary("backlog-publisher")?, &env).await?;
    let outcome = host.invoke(&event, Duration::from_secs(30)).await;
    if let Some(init) = host.time_to_first_next() {
        println!(
            "\n  process start → first GET /runtime/invocation/next: {:.1} ms",
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
    println!(
        "\n  The idle service has no task but 5 messages wait: BacklogPerTask is published at twice\n  \
         the target (200), above it, so target tracking scales the service out from zero."
    );
    Ok(())
}
