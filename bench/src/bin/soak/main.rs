//! `make soak`: one warm process of each function serves thousands of
//! consecutive invocations with mixed outcomes and injected faults (through
//! the fault proxy). Reports resident memory at invocation 100 and at the
//! end, open file descriptors, and every message id counted: none lost, none
//! misreported. Exits non-zero when a promise is broken.
//!
//! usage: soak [--invocations 2000] [--out FILE]

use std::time::Duration;

use e2e_tests::fixtures::{Aws, BoxError};
use sqs_backpressure_bench::args::BenchArgs;

use consumer::soak_consumer;
use publisher::soak_publisher;

const USAGE: &str = "soak [--invocations 2000] [--out FILE]";
const CALL_TIMEOUT_MS: &str = "500";
const INVOCATION_TIMEOUT: Duration = Duration::from_secs(30);
/// The bound on memory growth between invocation 100 and the end.
const MAX_RSS_GROWTH: f64 = 0.05;

mod consumer;
mod publisher;
mod report;

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let args = BenchArgs::from_env(USAGE)?;
    let invocations = args.number("invocations", 2_000)?;
    if invocations <= 100 {
        return Err("--invocations must be above 100 (memory is first read at 100)".into());
    }
    let aws = Aws::from_env().await?;
    let publisher = soak_publisher(&aws, invocations).await?;
    eprintln!("soak: publisher done");
    let consumer = soak_consumer(&aws, invocations).await?;
    let mut table = String::from(
        "| Function | Invocations | With a fault | RSS at 100 | RSS at end | Growth | Open fds (100 → end) | Counted | Lost | Misreported | Took |\n\
         | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    for report in [&publisher, &consumer] {
        table.push_str(&report.row());
        table.push('\n');
    }
    println!("{table}");
    if let Some(out) = args.option("out") {
        if let Some(parent) = std::path::Path::new(out).parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(out, &table)?;
    }
    if publisher.holds() && consumer.holds() {
        Ok(())
    } else {
        Err("soak: a promise broke (memory growth above 5 %, a descriptor leak, or a lost or misreported message)".into())
    }
}
