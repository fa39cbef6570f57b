//! The engine's own cost: a 5,000-message, ~6 MB event taken from bytes to a
//! batch report with a processor that does nothing, next to the floor any
//! handler pays: a bare `serde_json` parse of the same bytes, both into a
//! `serde_json::Value` and into `aws_lambda_events`' typed `SqsEvent` (what a
//! plain Rust handler gets from `lambda_runtime`).
//!
//! The same batch inside SNS notifications and EventBridge events shows
//! what opening an envelope costs per message.
//!
//! `cargo bench -p sqs-backpressure-bench --bench engine`

use std::hint::black_box;
use std::time::Duration;

use backpressure_app::WorkRequest;
use backpressure_batch::Verdict;
use backpressure_batch::envelope::Envelope;
use backpressure_batch::quarantine::QuarantineRecord;
use backpressure_batch::quarantine::{QuarantineError, QuarantineStore};
use backpressure_batch::record::SqsEvent;
use backpressure_batch::{BatchProcessor, Message, Processor};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use sqs_backpressure_bench::fixtures::{work_batch, wrapped};

struct NoOp;

impl Processor<WorkRequest> for NoOp {
    async fn process(&self, _message: &Message<'_, WorkRequest>) -> Verdict {
        Verdict::Done
    }
}

impl QuarantineStore for NoOp {
    async fn store(&self, records: &[QuarantineRecord]) -> Vec<Result<(), QuarantineError>> {
        records.iter().map(|_| Ok(())).collect()
    }
}

fn engine_overhead(c: &mut Criterion) {
    let bytes = work_batch(5_000).to_string().into_bytes();
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_time().build() {
        Ok(runtime) => runtime,
        Err(error) => panic!("cannot build the runtime: {error}"),
    };
    let built = BatchProcessor::builder(NoOp)
        .quarantine(NoOp)
        .concurrency(32)
        .deadline_margin(Duration::from_secs(1))
        .build();
    let batch = match built {
        Ok(batch) => batch,
        Err(error) => panic!("cannot build the processor: {error}"),
    };

    let mut group = c.benchmark_group("batch-5000");
    group.throughput(Throughput::Bytes(bytes.len() as u64)).sample_size(30);
    group.bench_function("bare-parse", |b| {
        b.iter(|| serde_json::from_slice::<serde_json::Value>(black_box(&bytes)))
    });
    group.bench_function("typed-parse", |b| {
        b.iter(|| {
            serde_json::from_slice::<aws_lambda_events::event::sqs::SqsEvent>(black_box(&bytes))
        })
    });
    group.bench_function("engine-no-op", |b| {
        b.iter(|| {
            let event: SqsEvent = match serde_json::from_slice(black_box(&bytes)) {
                Ok(event) => event,
                Err(error) => panic!("the generated event does not parse: {error}"),
            };
            let deadline = tokio::time::Instant::now() + Duration::from_secs(900);
            let report = runtime.block_on(batch.process(&event.records, deadline));
            match report {
                Ok(report) => assert!(report.batch_item_failures.is_empty()),
                Err(error) => panic!("the engine failed the batch: {error}"),
            }
        })
    });
    group.finish();
}

/// What an envelope costs the engine: the same 5,000 work requests as the
/// bodies themselves, inside SNS notifications and inside EventBridge
/// events, from parsed records to a batch report (`engine-*`), and from the
/// event's bytes (`bytes-*`: the larger event SNS delivers is parsed too).
fn envelope_cost(c: &mut Criterion) {
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_time().build() {
        Ok(runtime) => runtime,
        Err(error) => panic!("cannot build the runtime: {error}"),
    };
    let plain = work_batch(5_000);
    let cases = [
        ("plain", None, plain.clone()),
        ("sns", Some(Envelope::Sns), wrapped(plain.clone(), "sns")),
        ("eventbridge", Some(Envelope::EventBridge), wrapped(plain, "eventbridge")),
    ];
    let mut group = c.benchmark_group("envelope-5000");
    group.throughput(Throughput::Elements(5_000)).sample_size(30);
    for (name, envelope, event) in cases {
        let mut builder = BatchProcessor::builder(NoOp).quarantine(NoOp).concurrency(32);
        if let Some(envelope) = envelope {
            builder = builder.envelope(envelope);
        }
        let batch = match builder.build() {
            Ok(batch) => batch,
            Err(error) => panic!("cannot build the processor: {error}"),
        };
        let bytes = event.to_string().into_bytes();
        let parsed: SqsEvent = match serde_json::from_slice(&bytes) {
            Ok(event) => event,
            Err(error) => panic!("the generated event does not parse: {error}"),
        };
        let run = |records: &[backpressure_batch::record::SqsRecord]| {
            let deadline = tokio::time::Instant::now() + Duration::from_secs(900);
            match runtime.block_on(batch.process(records, deadline)) {
                Ok(report) => assert!(report.batch_item_failures.is_empty(), "{name}"),
                Err(error) => panic!("the engine failed the batch: {error}"),
            }
        };
        if let Some(envelope) = envelope {
            // Where an envelope's time goes: opening it alone, every record once.
            group.bench_function(format!("open-{name}"), |b| {
                b.iter(|| {
                    for record in &parsed.records {
                        let body = record.body.as_deref().unwrap_or_default();
                        let _ = black_box(envelope.open(black_box(body)));
                    }
                })
            });
        }
        group.bench_function(format!("engine-{name}"), |b| {
            b.iter(|| run(black_box(&parsed.records)))
        });
        group.bench_function(format!("bytes-{name}"), |b| {
            b.iter(|| {
                let event: SqsEvent = match serde_json::from_slice(black_box(&bytes)) {
                    Ok(event) => event,
                    Err(error) => panic!("the generated event does not parse: {error}"),
                };
                run(&event.records)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, engine_overhead, envelope_cost);
criterion_main!(benches);
