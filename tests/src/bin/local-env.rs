//! `make invoke`: prepares the emulators for one function and prints the
//! environment it needs as NAME=VALUE lines (for `cargo lambda watch
//! --env-file`), then keeps the local downstream up until it is stopped;
//! and, after the invocation, each message's outcome.
//!
//! usage: local-env publisher|consumer ENV_FILE
//!        local-env outcomes EVENT_FILE RESPONSE_FILE QUARANTINE_QUEUE_URL FUNCTION_LOG?

use e2e_tests::downstream::Downstream;
use e2e_tests::fixtures::{Aws, BoxError};
use e2e_tests::log_view::retry_causes;
use e2e_tests::template_defaults;

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let mut args = std::env::args().skip(1);
    if args.next().as_deref() == Some("outcomes") {
        let (Some(event), Some(response), Some(quarantine)) =
            (args.next(), args.next(), args.next())
        else {
            return Err(
                "usage: local-env outcomes EVENT_FILE RESPONSE_FILE QUARANTINE_QUEUE_URL".into()
            );
        };
        return outcomes(&event, &response, &quarantine, args.next()).await;
    }
    let mut args = std::env::args().skip(1);
    let (function, env_file) = match (args.next(), args.next()) {
        (Some(function), Some(env_file)) => (function, env_file),
        _ => return Err("usage: local-env publisher|consumer ENV_FILE".into()),
    };
    let aws = Aws::from_env().await?;
    let mut env: Vec<(String, String)> = Vec::new();
    let mut downstream = None;
    match function.as_str() {
        "publisher" => {
            let (queue_url, dlq_url) = aws.create_queue_with_dlq("orders-work").await?;
            aws.send_messages(&queue_url, 150).await?;
            aws.send_messages(&dlq_url, 2).await?;
            aws.create_service("demo", "orders-workers", 3).await?;
            eprintln!(
                "local-env: orders-work holds 150 messages (its DLQ 2); demo/orders-workers runs 3 tasks"
            );
            // Run as a stack runs it: every setting at the template's default.
            env.extend(template_defaults::environment("PublisherFunction")?);
            env.extend([
                ("QUEUE_URL".to_owned(), queue_url),
                ("ECS_CLUSTER_NAME".to_owned(), "demo".to_owned()),
                ("ECS_SERVICE_NAME".to_owned(), "orders-workers".to_owned()),
            ]);
        }
        "consumer" => {
            let started = Downstream::start().await?;
            let quarantine = aws.create_queue("orders-quarantine").await?;
            eprintln!("local-env: downstream at {}, quarantine queue {quarantine}", started.url());
            env.extend(template_defaults::environment("ConsumerFunction")?);
            env.extend([
                ("DOWNSTREAM_URL".to_owned(), started.url()),
                ("QUARANTINE_QUEUE_URL".to_owned(), quarantine),
            ]);
            downstream = Some(started);
        }
        other => return Err(format!("unknown function {other:?}: publisher or consumer").into()),
    }
    let lines: String = env.iter().map(|(k, v)| format!("{k}={v}\n")).collect();
    std::fs::write(&env_file, lines)?;
    eprintln!("local-env: wrote {env_file}; serving until stopped");
    tokio::signal::ctrl_c().await.ok();
    if let Some(downstream) = downstream {
        eprintln!("local-env: the downstream received {} requests", downstream.received().len());
    }
    Ok(())
}

/// Each record of the event with what became of it: retried (listed in the
/// response's `batchItemFailures`, with the cause the function's log gives),
/// quarantined (a record for it on the quarantine queue, with its error code) or done.
async fn outcomes(
    event: &str,
    response: &str,
    quarantine: &str,
    log: Option<String>,
) -> Result<(), BoxError> {
    let read = |path: &str| {
        std::fs::read_to_string(path).map_err(|error| format!("cannot read {path}: {error}"))
    };
    let event: serde_json::Value =
        serde_json::from_str(&read(event)?).map_err(|error| format!("{event}: {error}"))?;
    let response: serde_json::Value =
        serde_json::from_str(&read(response)?).map_err(|error| format!("{response}: {error}"))?;
    let log = match log {
        Some(path) => read(&path)?,
        None => String::new(),
    };
    let causes = retry_causes(log.lines());
    let retried: Vec<&str> = response["batchItemFailures"]
        .as_array()
        .map(|all| all.iter().filter_map(|f| f["itemIdentifier"].as_str()).collect())
        .unwrap_or_default();
    let aws = Aws::from_env().await?;
    let records = event["Records"].as_array().cloned().unwrap_or_default();
    let messages = aws.receive_all(quarantine, records.len()).await?;
    // Visible again at once: the queue stays inspectable (KEEP=1).
    for message in &messages {
        if let Some(handle) = message.receipt_handle() {
            let release = aws.sqs.change_message_visibility().queue_url(quarantine);
            release.receipt_handle(handle).visibility_timeout(0).send().await?;
        }
    }
    let quarantined: Vec<serde_json::Value> = messages
        .iter()
        .filter_map(|m| serde_json::from_str(m.body().unwrap_or_default()).ok())
        .collect();
    println!("{:<40} outcome", "messageId");
    for record in &records {
        let id = record["messageId"].as_str().unwrap_or("(none)");
        let outcome = if retried.contains(&id) {
            let cause = causes.get(id).copied().unwrap_or("see the function's log");
            format!("retry ({cause}; in batchItemFailures: Lambda returns it to the queue)")
        } else if let Some(q) = quarantined.iter().find(|q| q["messageId"] == id) {
            format!("quarantined ({})", q["errorCode"].as_str().unwrap_or("?"))
        } else {
            "done".to_owned()
        };
        println!("{id:<40} {outcome}");
    }
    Ok(())
}
