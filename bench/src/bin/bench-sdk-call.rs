//! What one SQS call costs in CPU on this machine against moto: through the
//! AWS SDK client (the configuration sqs-worker gives it) and as a
//! bare socket exchange (connect, write a JSON `ReceiveMessage`, read the answer and drop the connection;
//! no SDK, no signing, which moto does not check). moto answers every request
//! with `Connection: close`, so both open a connection per call. The bare
//! exchange is the floor any client pays here; the difference is the SDK's.
//!
//! Each call is an empty `ReceiveMessage` (no wait) on an empty queue, one
//! at a time, back to back (gap 0) and with `--gap-ms` idle between calls:
//! a worker's calls are apart, waiting for moto, and an idle process comes
//! back to cold caches.
//!
//! Runs inside `scripts/emulators.sh run`, built with `--release` (the SDK
//! unoptimised would measure the debug build).
//!
//! usage: bench-sdk-call [--calls 300] [--gap-ms 10] [--out FILE]

use std::time::Duration;

use backpressure_startup as startup;
use e2e_tests::fixtures::{Aws, BoxError, unique};
use serde_json::{Value, json};
use sqs_backpressure_bench::args::BenchArgs;
use sqs_backpressure_bench::proc_stats::process_cpu_seconds;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Instant;

const USAGE: &str = "bench-sdk-call [--calls 300] [--gap-ms 10] [--out FILE]";
/// Calls before each measured loop, so connection set-up code is loaded.
const WARM_UP: usize = 20;
/// The worker's budget for one call (`API_CALL_TIMEOUT_MS`' default).
const CALL_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Clone, Copy)]
enum Caller {
    Sdk,
    Socket,
}

struct Target {
    sdk: aws_sdk_sqs::Client,
    url: String,
    /// `host:port` of the endpoint, and the request the socket writes there.
    address: String,
    request: Vec<u8>,
}

impl Target {
    async fn call(&self, caller: Caller) -> Result<(), BoxError> {
        match caller {
            Caller::Sdk => {
                self.sdk.receive_message().queue_url(&self.url).wait_time_seconds(0).send().await?;
            }
            Caller::Socket => {
                let mut stream = TcpStream::connect(&self.address).await?;
                stream.write_all(&self.request).await?;
                let answer = read_response(&mut stream).await?;
                if !answer.starts_with(b"HTTP/1.1 200") {
                    let head =
                        String::from_utf8_lossy(&answer[..answer.len().min(80)]).into_owned();
                    return Err(format!("the bare ReceiveMessage was answered {head:?}").into());
                }
            }
        }
        Ok(())
    }
}

/// Reads one response, head and `Content-Length` body, as the SDK does
/// before it drops the connection (moto closes it a while later).
async fn read_response(stream: &mut TcpStream) -> Result<Vec<u8>, BoxError> {
    let mut answer = Vec::with_capacity(1024);
    loop {
        if let Some(end) = answer.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&answer[..end]).to_ascii_lowercase();
            let length = head
                .lines()
                .find_map(|line| line.strip_prefix("content-length:"))
                .and_then(|value| value.trim().parse::<usize>().ok())
                .ok_or("the bare ReceiveMessage's answer has no Content-Length")?;
            if answer.len() >= end + 4 + length {
                return Ok(answer);
            }
        }
        if stream.read_buf(&mut answer).await? == 0 {
            return Err("moto closed the connection before the whole answer".into());
        }
    }
}

fn bare_request(address: &str, url: &str) -> Vec<u8> {
    let body = json!({"QueueUrl": url, "WaitTimeSeconds": 0}).to_string();
    format!(
        "POST / HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/x-amz-json-1.0\r\n\
         X-Amz-Target: AmazonSQS.ReceiveMessage\r\n\
         Authorization: AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/sqs/aws4_request, \
         SignedHeaders=host, Signature=0\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), BoxError> {
    let args = BenchArgs::from_env(USAGE)?;
    let calls = args.number("calls", 300)?;
    let gap = Duration::from_millis(args.number("gap-ms", 10)? as u64);
    let endpoint = std::env::var("AWS_ENDPOINT_URL_SQS")
        .map_err(|_| "AWS_ENDPOINT_URL_SQS is not set: run inside scripts/emulators.sh run")?;
    let address = endpoint
        .strip_prefix("http://")
        .ok_or_else(|| format!("AWS_ENDPOINT_URL_SQS {endpoint:?}: expected http://host:port"))?
        .trim_end_matches('/')
        .to_owned();
    let aws = Aws::from_env().await?;
    let url = aws.create_queue(&unique("bench-sdk-call")).await?;
    let config = startup::sdk_config(CALL_TIMEOUT).await;
    let sdk = aws_sdk_sqs::Client::new(&config);
    let request = bare_request(&address, &url);
    let target = Target { sdk, url, address, request };
    let pid = std::process::id();
    let mut rows = Vec::new();
    for gap in [Duration::ZERO, gap] {
        let callers = [(Caller::Sdk, "AWS SDK"), (Caller::Socket, "bare socket")];
        for (caller, label) in callers {
            for _ in 0..WARM_UP {
                target.call(caller).await?;
            }
            let (cpu_before, started) = (process_cpu_seconds(pid)?, Instant::now());
            for _ in 0..calls {
                target.call(caller).await?;
                if !gap.is_zero() {
                    tokio::time::sleep(gap).await;
                }
            }
            let cpu_us = (process_cpu_seconds(pid)? - cpu_before) / calls as f64 * 1e6;
            let wall_us =
                (started.elapsed() - gap * calls as u32).as_secs_f64() / calls as f64 * 1e6;
            let gap_ms = gap.as_millis();
            eprintln!(
                "bench-sdk-call: {label}, {gap_ms} ms apart: {cpu_us:.0} µs CPU a call ({wall_us:.0} µs a call's wall time)"
            );
            rows.push(json!({"caller": label, "gap_ms": gap_ms, "calls": calls, "cpu_us_per_call": cpu_us, "wall_us_per_call": wall_us}));
        }
    }
    aws.delete_queue(&target.url).await?;
    args.report(&json!({ "rows": Value::Array(rows) }))
}
