//! The demo's idempotency part: one batch delivered twice with a table.

use std::time::Duration;

use e2e_tests::downstream::Downstream;
use e2e_tests::fixtures::{Aws, BoxError, binary};
use e2e_tests::idempotency_table::Table;
use e2e_tests::process::field;
use e2e_tests::runtime_host::{LambdaHost, Outcome};

use crate::{READABLE_LOGS, sample};

/// The standard sample batch delivered twice to batch-consumer with an
/// idempotency table: the second time, what was done is acknowledged as a
/// duplicate and not posted again; what failed is retried.
pub async fn redelivered(aws: &Aws) -> Result<(), BoxError> {
    println!("\n#### batch-consumer with IDEMPOTENCY_TABLE: one batch delivered twice");
    let downstream = Downstream::start().await?;
    let quarantine_url = aws.create_queue("orders-quarantine-idempotent").await?;
    let table = Table::create().await?;
    println!("\n== DynamoDB table {} (partition key id, TTL attribute expiration)", table.name);
    let url = downstream.url();
    let env = [
        ("DOWNSTREAM_URL", url.as_str()),
        ("QUARANTINE_QUEUE_URL", quarantine_url.as_str()),
        ("IDEMPOTENCY_TABLE", table.name.as_str()),
        READABLE_LOGS,
    ];
    let event = sample("sqs-standard.json")?;
    println!(
        "== events/sqs-standard.json delivered twice, as SQS does after an invocation whose answer \
         was lost (the function's logs follow)"
    );
    for delivery in ["first", "second"] {
        let before = downstream.received().len();
        let host = LambdaHost::start(&binary("batch-consumer")?, &env).await?;
        let outcome = host.invoke(&event, Duration::from_secs(30)).await;
        let summary =
            host.logs().into_iter().find(|l| l.contains("batch summary")).unwrap_or_default();
        let count = |name: &str| field(&summary, name).unwrap_or(0);
        println!(
            "  {delivery} delivery: done={} duplicates={} quarantined={} retried={}; the downstream received {} request(s){}",
            count("done"),
            count("duplicates"),
            count("quarantined"),
            count("retried"),
            downstream.received().len() - before,
            match outcome {
                Outcome::Response(_) => String::new(),
                other => format!(" (no batch response: {other:?})"),
            }
        );
        if delivery == "second" {
            let again: Vec<String> = downstream.received()[before..]
                .iter()
                .map(|r| {
                    format!("{} (HTTP {})", r.idempotency_key.clone().unwrap_or_default(), r.status)
                })
                .collect();
            println!(
                "  posted again: {}: the retried ones, and the one the downstream refused (a \
                 permanent failure never marks its key done, so a replay once fixed reaches \
                 the downstream); the two done the first time were not",
                again.join(", ")
            );
        }
    }
    let stored = table.records().await?;
    let mut states: Vec<(String, String)> = stored
        .into_iter()
        .map(|(id, r)| (id, r.get("status").cloned().unwrap_or_default()))
        .collect();
    states.sort();
    println!(
        "\n== The table afterwards (completed keys stay for IDEMPOTENCY_TTL_SECONDS, 3600 by default)"
    );
    for (id, status) in states {
        println!("    {id:<40} {status}");
    }
    Ok(())
}
