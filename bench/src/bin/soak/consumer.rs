//! The consumer's soak.

use std::collections::HashMap;
use std::time::Instant;

use e2e_tests::downstream::Downstream;
use e2e_tests::fault_proxy::{Fault, FaultProxy, Rule};
use e2e_tests::fixtures::{Aws, BoxError, binary, sqs_record, unique};
use e2e_tests::runtime_host::LambdaHost;
use serde_json::{Value, json};

use crate::report::Report;
use crate::{CALL_TIMEOUT_MS, INVOCATION_TIMEOUT};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Done,
    Quarantined,
    Retried,
}

/// The consumer on batches of ten (six deliverable, one not JSON, one the
/// downstream rejects, one it fails, one it throttles), with faults on the
/// quarantine and backoff calls.
pub(crate) async fn soak_consumer(aws: &Aws, invocations: usize) -> Result<Report, BoxError> {
    let quarantine_url = aws.create_queue(&unique("soak-quarantine")).await?;
    let source_url = aws.create_queue(&unique("soak-source")).await?;
    let arn = aws.queue_arn(&source_url).await?;
    let downstream = Downstream::start().await?;
    let proxy = FaultProxy::start(&std::env::var("AWS_ENDPOINT_URL_SQS")?).await?;
    let url = downstream.url();
    let host = LambdaHost::start(
        &binary("batch-consumer")?,
        &[
            ("DOWNSTREAM_URL", url.as_str()),
            ("QUARANTINE_QUEUE_URL", quarantine_url.as_str()),
            ("API_CALL_TIMEOUT_MS", CALL_TIMEOUT_MS),
            ("AWS_ENDPOINT_URL_SQS", proxy.url()),
        ],
    )
    .await?;
    let mut report = Report::new("batch-consumer", invocations);
    let mut expected: HashMap<String, Class> = HashMap::new();
    let mut retried: HashMap<String, usize> = HashMap::new();
    // Drained every 100 invocations: moto slows down as a queue grows.
    let mut quarantined: HashMap<String, usize> = HashMap::new();
    let started = Instant::now();
    for i in 1..=invocations {
        proxy.clear();
        let (poison_quarantined, rejected_quarantined) = inject_faults(&proxy, i);
        if i % 10 >= 7 || i % 100 == 99 {
            report.faults_injected += 1;
        }
        let promised = Promised { poison_quarantined, rejected_quarantined };
        let records = batch_of_ten(i, &arn, promised, &mut expected);
        let outcome = host.invoke(&json!({ "Records": records }), INVOCATION_TIMEOUT).await;
        match outcome.batch_item_failures() {
            Some(failures) => {
                for id in failures {
                    *retried.entry(id).or_default() += 1;
                }
            }
            None => {
                let other = outcome;
                // The whole batch comes back: counted as retried, but it is not what was promised.
                eprintln!("soak: consumer invocation {i}: {other:?}");
                report.misreported += 10;
            }
        }
        report.sample(&host, i);
        if i % 100 == 0 {
            for id in aws.drain_quarantined(&quarantine_url).await? {
                *quarantined.entry(id).or_default() += 1;
            }
        }
    }
    report.finish(&host, started);
    for id in aws.drain_quarantined(&quarantine_url).await? {
        *quarantined.entry(id).or_default() += 1;
    }

    let mut delivered: HashMap<String, usize> = HashMap::new();
    for request in downstream.received() {
        *delivered.entry(request.idempotency_key.unwrap_or_default()).or_default() += 1;
    }
    check_outcomes(&mut report, &expected, [&retried, &quarantined, &delivered]);
    Ok(report)
}

/// The faults of invocation `i` (entry 0 of the quarantine write is the
/// poison record, entry 1 the rejected one), and whether each of those two
/// quarantine writes is still promised to land.
fn inject_faults(proxy: &FaultProxy, i: usize) -> (bool, bool) {
    match i % 10 {
        _ if i % 100 == 99 => {
            proxy.inject(Rule::new("SendMessageBatch", Fault::Hang));
            (false, false)
        }
        7 => {
            proxy.inject(Rule::new("SendMessageBatch", Fault::FailEntries(vec![0])));
            (false, true)
        }
        8 => {
            proxy.inject(Rule::new("SendMessageBatch", Fault::Deny));
            (false, false)
        }
        9 => {
            proxy.inject(Rule::new("ChangeMessageVisibilityBatch", Fault::Throttle));
            (true, true)
        }
        _ => (true, true),
    }
}

/// Whether this invocation's quarantine writes land.
#[derive(Clone, Copy)]
struct Promised {
    poison_quarantined: bool,
    rejected_quarantined: bool,
}

/// Invocation `i`'s ten records, each id's promised class noted in `expected`.
fn batch_of_ten(
    i: usize,
    arn: &str,
    promised: Promised,
    expected: &mut HashMap<String, Class>,
) -> Vec<Value> {
    let Promised { poison_quarantined, rejected_quarantined } = promised;
    (0..10)
        .map(|j| {
            let id = format!("m{i}-{j}");
            let (body, class) = match j {
                5 => (
                    "not json".to_owned(),
                    if poison_quarantined { Class::Quarantined } else { Class::Retried },
                ),
                6 => (
                    work("invoice.reject", &id),
                    if rejected_quarantined { Class::Quarantined } else { Class::Retried },
                ),
                7 => (work("invoice.fail", &id), Class::Retried),
                8 => (work("invoice.throttle", &id), Class::Retried),
                _ => (work("invoice.create", &id), Class::Done),
            };
            expected.insert(id.clone(), class);
            sqs_record(&id, json!(body), arn)
        })
        .collect()
}

/// Every id: exactly one outcome, the one promised. `seen` counts, per id,
/// its retries, its quarantine records and its deliveries downstream.
fn check_outcomes(
    report: &mut Report,
    expected: &HashMap<String, Class>,
    seen: [&HashMap<String, usize>; 3],
) {
    // Every id: exactly one outcome, the one promised.
    let [retried, quarantined, delivered] = seen;
    for (id, class) in expected {
        report.counted += 1;
        let (r, q, d) = (
            retried.get(id).copied().unwrap_or(0),
            quarantined.get(id).copied().unwrap_or(0),
            delivered.get(id).copied().unwrap_or(0),
        );
        let observed = match (r, q, d) {
            (1, 0, _) => Some(Class::Retried),
            (0, 1, _) => Some(Class::Quarantined),
            (0, 0, 1) => Some(Class::Done),
            (0, 0, 0) => None,
            _ => {
                report.misreported += 1;
                eprintln!("soak: {id}: retried {r}, quarantined {q}, delivered {d}");
                continue;
            }
        };
        match observed {
            None => {
                report.lost += 1;
                eprintln!("soak: {id} has no outcome");
            }
            Some(observed) if observed != *class => {
                report.misreported += 1;
                eprintln!("soak: {id} expected {class:?}, observed {observed:?}");
            }
            Some(_) => {}
        }
    }
}

fn work(operation: &str, key: &str) -> String {
    json!({"schemaVersion": "1", "operation": operation, "tenantId": "t", "idempotencyKey": key})
        .to_string()
}
