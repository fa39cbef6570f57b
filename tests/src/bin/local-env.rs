//! `make invoke`: prepares the emulators for one function and prints the
//! environment it needs as NAME=VALUE lines (for `cargo lambda watch
//! --env-file`), then keeps the local downstream up until it is stopped.
//!
//! usage: local-env publisher|consumer ENV_FILE

use e2e_tests::downstream::Downstream;
use e2e_tests::fixtures::{Aws, BoxError};

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let mut args = std::env::args().skip(1);
    let (function, env_file) = match (args.next(), args.next()) {
        (Some(function), Some(env_file)) => (function, env_file),
        _ => return Err("usage: local-env publisher|consumer ENV_FILE".into()),
    };
    let aws = Aws::from_env().await?;
    let mut env: Vec<(&str, String)> = Vec::new();
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
            env.extend([
                ("QUEUE_URL", queue_url),
                ("ECS_CLUSTER_NAME", "demo".to_owned()),
                ("ECS_SERVICE_NAME", "orders-workers".to_owned()),
                ("TARGET_BACKLOG_PER_TASK", "100".to_owned()),
            ]);
        }
        "consumer" => {
            let started = Downstream::start().await?;
            let quarantine = aws.create_queue("orders-quarantine").await?;
            eprintln!("local-env: downstream at {}, quarantine queue {quarantine}", started.url());
            env.extend([("DOWNSTREAM_URL", started.url()), ("QUARANTINE_QUEUE_URL", quarantine)]);
            downstream = Some(started);
        }
        other => return Err(format!("unknown function {other:?}: publisher or consumer").into()),
    }
    let lines: String = env.iter().map(|(k, v)| format!("{k}={v}\n")).collect();
    std::fs::write(&env_file, lines)?;
    eprintln!("local-env: wrote {env_file}; waiting (stop with a signal)");
    tokio::signal::ctrl_c().await.ok();
    if let Some(downstream) = downstream {
        eprintln!("local-env: the downstream received {} requests", downstream.received().len());
    }
    Ok(())
}
