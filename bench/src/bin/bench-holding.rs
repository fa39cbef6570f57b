//! What sqs-backpressure keeps per message while a scan holds a queue, as the
//! queue grows: `N` leases (a 36-character id and an SQS-sized receipt handle
//! of `--handle-chars`) and the `N` ids read, held as the CLI holds them
//! (`spill`: its temporary stores, 4 MiB of cache each, disk past it), and as
//! plain in-memory maps for comparison (`memory`: what it kept before). Each
//! cell runs in a fresh process, whose peak RSS (`VmHWM`) is the figure.
//!
//! usage: bench-holding [--sizes 10000,100000,1000000] [--handle-chars 380] [--out FILE]

use std::collections::HashMap;
use std::time::Duration;

use e2e_tests::fixtures::BoxError;
use serde_json::json;
use sqs_backpressure::lease::Holding;
use sqs_backpressure::spill::Keys;
use sqs_backpressure_bench::args::BenchArgs;
use sqs_backpressure_bench::proc_stats::peak_rss_kib;
use tokio::time::Instant;

const USAGE: &str =
    "bench-holding [--sizes 10000,100000,1000000] [--handle-chars 380] [--out FILE]";

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), BoxError> {
    let args = BenchArgs::from_env(USAGE)?;
    let handle_chars = args.number("handle-chars", 380)?;
    if let Some(store) = args.option("store") {
        return one(store, args.number("held", 0)?, handle_chars);
    }
    let sizes: Vec<usize> = args
        .option("sizes")
        .unwrap_or("10000,100000,1000000")
        .split(',')
        .map(|n| n.parse().map_err(|e| format!("--sizes {n:?}: {e}")))
        .collect::<Result<_, _>>()?;
    let me = std::env::current_exe()?;
    let mut rows = Vec::new();
    for store in ["spill", "memory"] {
        for &held in &sizes {
            let output = std::process::Command::new(&me)
                .args(["--store", store, "--held", &held.to_string()])
                .args(["--handle-chars", &handle_chars.to_string()])
                .output()?;
            if !output.status.success() {
                return Err(String::from_utf8_lossy(&output.stderr).into_owned().into());
            }
            let row: serde_json::Value = serde_json::from_slice(&output.stdout)?;
            eprintln!("bench-holding: {row}");
            rows.push(row);
        }
    }
    args.report(&json!({"handle_chars": handle_chars, "rows": rows}))
}

/// Holds `held` messages in `store`, looks each up once, and prints the peak RSS.
fn one(store: &str, held: usize, handle_chars: usize) -> Result<(), BoxError> {
    let id = |n: usize| format!("{n:08x}-0000-4000-8000-{n:012x}");
    let handle = |n: usize| format!("{n:012}{}", "h".repeat(handle_chars.saturating_sub(12)));
    let expires = Instant::now() + Duration::from_secs(120);
    let started = std::time::Instant::now();
    let found = match store {
        "spill" => {
            let mut leases = Holding::new()?;
            let mut read = Keys::new()?;
            for n in 0..held {
                leases.hold(&id(n), &handle(n), expires);
                read.insert(&id(n), Some(&id(n)));
            }
            let found =
                (0..held).filter(|&n| read.contains(&id(n)) && leases.holds(&id(n))).count();
            if let Some(failure) = leases.failure().or_else(|| read.failure()) {
                return Err(failure.into());
            }
            found
        }
        "memory" => {
            let mut leases: HashMap<String, (String, Instant)> = HashMap::new();
            let mut read: HashMap<String, String> = HashMap::new();
            for n in 0..held {
                leases.insert(id(n), (handle(n), expires));
                read.insert(id(n), id(n));
            }
            (0..held).filter(|&n| read.contains_key(&id(n)) && leases.contains_key(&id(n))).count()
        }
        other => return Err(format!("--store {other:?}: spill or memory").into()),
    };
    if found != held {
        return Err(format!("{found} of {held} found again").into());
    }
    let row = json!({"store": store, "held": held, "found_again": found,
        "seconds": started.elapsed().as_secs_f64(),
        "peak_rss_mib": peak_rss_kib(std::process::id())? as f64 / 1024.0});
    println!("{row}");
    Ok(())
}
