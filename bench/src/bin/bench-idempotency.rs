//! What the idempotency store costs: CPU per message and DynamoDB calls per
//! message, without the store, with it on a 5,000-message batch seen for the
//! first time, and on the same batch redelivered; then the same DynamoDB
//! calls made directly through the SDK (no store), so the store's own CPU
//! beyond its calls is the difference; and the same batches on the
//! in-memory store, the claim logic's own CPU with no SDK under it; and the
//! same batches on the Redis store (Debian's redis-server), its commands
//! counted by the server's own `INFO commandstats`. Against moto's DynamoDB, whose wall
//! clock is the bottleneck: CPU is the fair figure. The processor does
//! nothing, so the figures are the engine's and the store's alone. A
//! counting proxy (the tests' fault proxy, with no faults) counts the calls.
//!
//! Runs inside `scripts/emulators.sh run`, built with `--release`.
//!
//! usage: bench-idempotency [--messages 5000] [--out FILE]

use std::time::{Duration, SystemTime};

use backpressure_app::WorkRequest;
use backpressure_batch::idempotency::Idempotency;
use backpressure_batch::{BatchProcessor, Message, Verdict, record::SqsRecord};
use backpressure_core::quarantine::body_hash;
use e2e_tests::fault_proxy::FaultProxy;
use e2e_tests::fixtures::BoxError;
use e2e_tests::idempotency_table::Table;
use futures::StreamExt;
use serde_json::{Value, json};
use sqs_backpressure_bench::args::{BenchArgs, summary};
use sqs_backpressure_bench::proc_stats::process_cpu_seconds;
use tokio::time::Instant;

const USAGE: &str = "bench-idempotency [--messages 5000] [--out FILE]";
const WRITES: [&str; 3] = ["PutItem", "UpdateItem", "DeleteItem"];

fn cpu() -> Result<f64, BoxError> {
    process_cpu_seconds(std::process::id())
}

fn records(count: usize) -> Vec<SqsRecord> {
    (0..count)
        .map(|i| {
            let body = json!({"schemaVersion": "1", "operation": "ledger.post", "tenantId": "t",
                              "idempotencyKey": format!("bench-{i}")});
            SqsRecord::new(format!("m-{i}"))
                .with_body(body.to_string())
                .with_receipt_handle(format!("rh-{i}"))
                .with_source_arn("arn:aws:sqs:us-east-1:123456789012:bench")
        })
        .collect()
}

/// A processor with no side effect of its own.
struct Noop;

impl backpressure_batch::Processor<WorkRequest> for Noop {
    async fn process(&self, _: &Message<'_, WorkRequest>) -> Verdict {
        Verdict::Done
    }
}

/// One batch through `batch`: CPU seconds, and every record acknowledged.
async fn run<P, Q>(
    batch: &BatchProcessor<P, Q, WorkRequest>,
    records: &[SqsRecord],
) -> Result<f64, BoxError>
where
    P: backpressure_batch::Processor<WorkRequest>,
    Q: backpressure_batch::quarantine::QuarantineStore,
{
    let before = cpu()?;
    let report = batch.process(records, Instant::now() + Duration::from_secs(3600)).await?;
    let spent = cpu()? - before;
    if !report.batch_item_failures.is_empty() || report.idempotency_store_errors > 0 {
        return Err(format!(
            "{} retried, {} store errors",
            report.batch_item_failures.len(),
            report.idempotency_store_errors
        )
        .into());
    }
    Ok(spent)
}

fn per_message(counts: &std::collections::BTreeMap<String, u64>, messages: usize) -> Value {
    let calls: u64 = counts.values().sum();
    let writes: u64 = WRITES.iter().filter_map(|w| counts.get(*w)).sum();
    json!({
        "calls": counts,
        "calls_per_message": calls as f64 / messages as f64,
        "writes_per_message": writes as f64 / messages as f64,
    })
}

/// One message's claim and completion, as the DynamoDB store writes them; the
/// completion's round trip in milliseconds (the documented window).
async fn same_calls(
    dynamodb: &aws_sdk_dynamodb::Client,
    table: &str,
    i: usize,
    record: &SqsRecord,
) -> Result<f64, BoxError> {
    use aws_sdk_dynamodb::types::AttributeValue::{N, S};
    use aws_sdk_dynamodb::types::ReturnValuesOnConditionCheckFailure;
    let hash = body_hash(record.body.as_deref().unwrap_or_default());
    let id = format!("raw#{i}");
    let now_ms = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH)?.as_millis() as u64;
    dynamodb
        .put_item()
        .table_name(table)
        .item("id", S(id.clone()))
        .item("status", S("INPROGRESS".into()))
        .item("expiration", N((now_ms / 1000 + 3600).to_string()))
        .item("in_progress_expiration", N((now_ms + 60_000).to_string()))
        .item("validation", S(hash))
        .item("holder", S(format!("{:016x}{:016x}", i, i)))
        .condition_expression(
            "attribute_not_exists(id) OR expiration <= :now_s \
             OR (#status = :in_progress AND in_progress_expiration <= :now_ms)",
        )
        .expression_attribute_names("#status", "status")
        .expression_attribute_values(":now_s", N((now_ms / 1000).to_string()))
        .expression_attribute_values(":now_ms", N(now_ms.to_string()))
        .expression_attribute_values(":in_progress", S("INPROGRESS".into()))
        .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
        .send()
        .await?;
    let at = Instant::now();
    dynamodb
        .update_item()
        .table_name(table)
        .key("id", S(id))
        .update_expression("SET #status = :completed, expiration = :expiration")
        .condition_expression("#status = :in_progress AND holder = :holder")
        .expression_attribute_names("#status", "status")
        .expression_attribute_values(":completed", S("COMPLETED".into()))
        .expression_attribute_values(":expiration", N((now_ms / 1000 + 3600).to_string()))
        .expression_attribute_values(":in_progress", S("INPROGRESS".into()))
        .expression_attribute_values(":holder", S(format!("{:016x}{:016x}", i, i)))
        .send()
        .await?;
    Ok(at.elapsed().as_secs_f64() * 1e3)
}

/// Calls per command so far, from the server's `INFO commandstats`.
async fn command_calls(url: &str) -> Result<std::collections::BTreeMap<String, u64>, BoxError> {
    let client = redis::Client::open(url)?;
    let mut connection = client.get_multiplexed_async_connection().await?;
    let info: String = redis::cmd("INFO").arg("commandstats").query_async(&mut connection).await?;
    Ok(info
        .lines()
        .filter_map(|line| {
            let (name, stats) = line.strip_prefix("cmdstat_")?.split_once(':')?;
            let calls = stats.split(',').find_map(|kv| kv.strip_prefix("calls="))?;
            Some((name.to_uppercase(), calls.parse().ok()?))
        })
        .collect())
}

/// `after - before`, the commands a run sent (the counting `INFO` left out).
fn sent(
    before: &std::collections::BTreeMap<String, u64>,
    after: &std::collections::BTreeMap<String, u64>,
) -> std::collections::BTreeMap<String, u64> {
    after
        .iter()
        .filter(|(name, _)| name.as_str() != "INFO")
        .map(|(name, n)| (name.clone(), n - before.get(name).copied().unwrap_or(0)))
        .filter(|(_, n)| *n > 0)
        .collect()
}

/// The same batches on the Redis store: CPU and commands per message.
async fn redis_figures(records: &[SqsRecord], url: &str) -> Result<Value, BoxError> {
    let messages = records.len();
    let namespace = format!("bench-{}:", std::process::id());
    let store = Idempotency::redis(url, &namespace, Duration::from_secs(5))?;
    let guarded = BatchProcessor::builder(Noop).idempotency(store).build()?;
    let before = command_calls(url).await?;
    let started = Instant::now();
    let first = run(&guarded, records).await?;
    let first_wall = started.elapsed();
    let middle = command_calls(url).await?;
    let redelivered = run(&guarded, records).await?;
    let after = command_calls(url).await?;
    // The server counts the commands its Lua scripts run too; the requests a
    // message sends are its scripts (`EVALSHA`) and its share of the
    // pre-check's pipelined `HMGET`s.
    let per = |commands: &std::collections::BTreeMap<String, u64>| {
        let scripts = commands.get("EVALSHA").copied().unwrap_or(0);
        json!({
            "server_commands_with_lua_ones": commands,
            "scripts_per_message": scripts as f64 / messages as f64,
        })
    };
    Ok(json!({
        "cpu_us_per_message": {
            "first_time": first * 1e6 / messages as f64,
            "redelivered": redelivered * 1e6 / messages as f64,
        },
        "first_time": per(&sent(&before, &middle)),
        "redelivered": per(&sent(&middle, &after)),
        "first_time_wall_seconds": first_wall.as_secs_f64(),
    }))
}

/// The same requests a first-time message makes (its claim's PutItem and its
/// completion's UpdateItem, attribute for attribute), straight through the
/// SDK, 32 messages at a time as the engine runs them, on fresh keys: their
/// CPU seconds, and each completion's round trip at 32 in flight and one at
/// a time (200 messages, without moto's queue).
async fn sdk_calls_alone(
    dynamodb: &aws_sdk_dynamodb::Client,
    records: &[SqsRecord],
) -> Result<(f64, Vec<f64>, Vec<f64>), BoxError> {
    let raw = Table::create().await?;
    let before = cpu()?;
    let calls = records.iter().enumerate().map(|(i, record)| {
        let (dynamodb, table) = (dynamodb, raw.name.as_str());
        async move { same_calls(dynamodb, table, i, record).await }
    });
    let update_ms: Vec<f64> = futures::stream::iter(calls)
        .buffer_unordered(32)
        .collect::<Vec<Result<f64, BoxError>>>()
        .await
        .into_iter()
        .collect::<Result<_, _>>()?;
    let raw_calls = cpu()? - before;
    // The completion's round trip one message at a time, without moto's queue.
    let mut sequential_ms = Vec::with_capacity(200);
    for (i, record) in records.iter().take(200).enumerate() {
        sequential_ms.push(same_calls(dynamodb, &raw.name, records.len() + i, record).await?);
    }
    Ok((raw_calls, update_ms, sequential_ms))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), BoxError> {
    let args = BenchArgs::from_env(USAGE)?;
    let messages = args.number("messages", 5000)?;
    let records = records(messages);
    let upstream = std::env::var("AWS_ENDPOINT_URL_DYNAMODB")?;
    let proxy = FaultProxy::start(&upstream).await?;
    let table = Table::create().await?;
    let config = aws_config::load_from_env().await;
    let dynamodb = aws_sdk_dynamodb::Client::from_conf(
        aws_sdk_dynamodb::config::Builder::from(&config).endpoint_url(proxy.url()).build(),
    );

    let plain = BatchProcessor::builder(Noop).build()?;
    run(&plain, &records[..100.min(messages)]).await?;
    let without = run(&plain, &records).await?;

    // The store's own logic with no SDK under it: the in-memory store.
    let in_memory = BatchProcessor::builder(Noop).idempotency(Idempotency::in_memory()).build()?;
    let memory_first = run(&in_memory, &records).await?;
    let memory_redelivered = run(&in_memory, &records).await?;

    let store = Idempotency::dynamodb(dynamodb.clone(), &table.name);
    let guarded = BatchProcessor::builder(Noop).idempotency(store).build()?;
    proxy.clear();
    let counted = |proxy: &FaultProxy| proxy.counts();
    let started = Instant::now();
    let first = run(&guarded, &records).await?;
    let first_wall = started.elapsed();
    let first_calls = counted(&proxy);
    let again: Vec<SqsRecord> = records.clone();
    let before = counted(&proxy);
    let redelivered = run(&guarded, &again).await?;
    let mut redelivered_calls = counted(&proxy);
    for (op, n) in before {
        *redelivered_calls.entry(op).or_default() -= n;
    }
    redelivered_calls.retain(|_, n| *n > 0);

    let (raw_calls, update_ms, sequential_ms) = sdk_calls_alone(&dynamodb, &records).await?;

    let redis = redis_figures(&records, &std::env::var("E2E_REDIS_URL")?).await?;

    let us = |seconds: f64| seconds * 1e6 / messages as f64;
    let store_own = (first - without) - raw_calls;
    let result = json!({
        "messages": messages,
        "cpu_us_per_message": {
            "without_store": us(without),
            "memory_store_first_time": us(memory_first),
            "memory_store_redelivered": us(memory_redelivered),
            "first_time": us(first),
            "redelivered": us(redelivered),
            "sdk_calls_alone": us(raw_calls),
            "store_own_beyond_sdk_calls": us(store_own),
            "store_own_share_of_sdk_calls": store_own / raw_calls,
        },
        "first_time": per_message(&first_calls, messages),
        "redelivered": per_message(&redelivered_calls, messages),
        "first_time_wall_seconds": first_wall.as_secs_f64(),
        "completion_window_ms_32_in_flight": {
            "median": summary(&update_ms)["median"],
            "max": summary(&update_ms)["max"],
        },
        "completion_window_ms_one_at_a_time": {
            "median": summary(&sequential_ms)["median"],
            "max": summary(&sequential_ms)["max"],
        },
        "redis": redis,
    });
    args.report(&result)
}
