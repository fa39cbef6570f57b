//! Each event source mapping against its queue and its function.

use super::{
    BATCH_ABOVE_PAYLOAD, BATCH_WITHOUT_WINDOW, ITEM_FAILURES_IGNORED,
    MAXIMUM_CONCURRENCY_ABOVE_RESERVED, NO_MAXIMUM_CONCURRENCY, POLLERS_OUT_OF_RANGE,
    VISIBILITY_BELOW_SIX_TIMEOUTS, VISIBILITY_BELOW_TIMEOUT, set_attribute,
};
use crate::deployment::{Deployment, Function, Mapping, Queue};
use crate::finding::Finding;

/// An invocation's payload: 6 MB.
const PAYLOAD_BYTES: u64 = 6 * 1024 * 1024;
/// SQS's longest visibility timeout: 12 hours.
const MAX_VISIBILITY_S: u32 = 43_200;

pub(super) fn check(deployment: &Deployment, findings: &mut Vec<Finding>) {
    for mapping in &deployment.mappings {
        let Some(queue) = deployment.queue(&mapping.queue_arn).filter(|queue| !queue.missing)
        else {
            continue;
        };
        if let Some(function) = deployment.function(&mapping.function_arn) {
            visibility(queue, mapping, function, findings);
            if function.reports_item_failures && !mapping.reports_item_failures {
                findings.push(
                    Finding::new(
                        &ITEM_FAILURES_IGNORED,
                        &queue.arn,
                        format!(
                            "{} answers with batchItemFailures, but the mapping does not report \
                             them: Lambda takes the answer as a success and deletes the failed \
                             messages with the rest",
                            function.name
                        ),
                        format!(
                            "aws lambda update-event-source-mapping --uuid {} \
                             --function-response-types ReportBatchItemFailures",
                            mapping.uuid
                        ),
                    )
                    .on(format!("mapping {}", mapping.uuid)),
                );
            }
        }
        scaling(queue, mapping, findings);
        batch_window(queue, mapping, findings);
        if mapping.batch_size > 10
            && u64::from(mapping.batch_size) * u64::from(queue.max_message_bytes) > PAYLOAD_BYTES
        {
            findings.push(
                Finding::new(
                    &BATCH_ABOVE_PAYLOAD,
                    &queue.arn,
                    format!(
                        "BatchSize {} × MaximumMessageSize {} bytes is above an invocation's 6 MB: \
                         large messages arrive in smaller batches than the mapping says",
                        mapping.batch_size, queue.max_message_bytes
                    ),
                    format!(
                        "aws lambda update-event-source-mapping --uuid {} --batch-size {}",
                        mapping.uuid,
                        // Each record's envelope (ids, attributes) takes room beside its body.
                        (PAYLOAD_BYTES / u64::from(queue.max_message_bytes.max(1)))
                            .saturating_sub(1)
                            .max(1)
                    ),
                )
                .on(format!("mapping {}", mapping.uuid)),
            );
        }
    }
    for function in &deployment.functions {
        reserved(deployment, function, findings);
    }
}

/// Lambda refuses these when the mapping is made or changed, so a live deployment never has them;
/// a template does until its deploy fails.
fn batch_window(queue: &Queue, mapping: &Mapping, findings: &mut Vec<Finding>) {
    if mapping.batch_size <= 10 || (!queue.fifo && mapping.window_s >= 1) {
        return;
    }
    let (measured, fix) = if queue.fifo {
        (
            format!(
                "BatchSize {} on a FIFO queue, whose mappings take at most 10: Lambda refuses the \
                 mapping",
                mapping.batch_size
            ),
            format!(
                "aws lambda update-event-source-mapping --uuid {} --batch-size 10",
                mapping.uuid
            ),
        )
    } else {
        (
            format!(
                "BatchSize {} with no batching window: Lambda refuses a batch above 10 unless \
                 MaximumBatchingWindowInSeconds is at least 1",
                mapping.batch_size
            ),
            format!(
                "aws lambda update-event-source-mapping --uuid {} \
                 --maximum-batching-window-in-seconds 1",
                mapping.uuid
            ),
        )
    };
    findings.push(
        Finding::new(&BATCH_WITHOUT_WINDOW, &queue.arn, measured, fix)
            .on(format!("mapping {}", mapping.uuid)),
    );
}

fn visibility(queue: &Queue, mapping: &Mapping, function: &Function, findings: &mut Vec<Finding>) {
    let (timeout, window, visibility) =
        (function.timeout_s, mapping.window_s, queue.visibility_timeout_s);
    let advised = (6 * timeout + window).min(MAX_VISIBILITY_S);
    let rule = if visibility < timeout + window {
        &VISIBILITY_BELOW_TIMEOUT
    } else if visibility < advised {
        &VISIBILITY_BELOW_SIX_TIMEOUTS
    } else {
        return;
    };
    findings.push(
        Finding::new(
            rule,
            &queue.arn,
            if rule.id == VISIBILITY_BELOW_TIMEOUT.id {
                format!(
                    "visibility timeout {visibility} s is below {} timeout {timeout} s + batching \
                     window {window} s = {} s: a batch still running is delivered again (AWS \
                     advises 6 × {timeout} + {window} = {advised} s)",
                    function.name,
                    timeout + window
                )
            } else {
                format!(
                    "visibility timeout {visibility} s, {} timeout {timeout} s, batching window \
                     {window} s: 6 × {timeout} + {window} = {advised} s",
                    function.name
                )
            },
            set_attribute(&queue.url, "VisibilityTimeout", &advised.to_string()),
        )
        .on(format!("mapping {}", mapping.uuid)),
    );
}

fn scaling(queue: &Queue, mapping: &Mapping, findings: &mut Vec<Finding>) {
    let update = format!("aws lambda update-event-source-mapping --uuid {}", mapping.uuid);
    match (mapping.pollers, mapping.maximum_concurrency) {
        (None, None) if mapping.enabled => findings.push(
            Finding::new(
                &NO_MAXIMUM_CONCURRENCY,
                &queue.arn,
                "no MaximumConcurrency: the queue's backlog sets how many batches run at once \
                 (up to 1,250), not what the function's downstream takes"
                    .into(),
                format!(
                    "{update} --scaling-config MaximumConcurrency=N (what the downstream takes)"
                ),
            )
            .on(format!("mapping {}", mapping.uuid)),
        ),
        (Some(pollers), concurrency) => {
            let mut wrong = Vec::new();
            if !(2..=200).contains(&pollers.minimum) {
                wrong.push(format!("MinimumPollers {} outside 2–200", pollers.minimum));
            }
            if pollers.maximum < pollers.minimum || pollers.maximum > 10_000 {
                wrong.push(format!(
                    "MaximumPollers {} outside {}–10,000",
                    pollers.maximum, pollers.minimum
                ));
            }
            if let Some(concurrency) = concurrency {
                wrong.push(format!("MaximumConcurrency {concurrency} beside provisioned mode"));
            }
            if !wrong.is_empty() {
                findings.push(
                    Finding::new(
                        &POLLERS_OUT_OF_RANGE,
                        &queue.arn,
                        wrong.join("; "),
                        format!(
                            "{update} --provisioned-poller-config MinimumPollers=2,MaximumPollers=200"
                        ),
                    )
                    .on(format!("mapping {}", mapping.uuid)),
                );
            }
        }
        _ => {}
    }
}

/// A function's reserved concurrency against every enabled SQS mapping's cap.
fn reserved(deployment: &Deployment, function: &Function, findings: &mut Vec<Finding>) {
    let Some(reserved) = function.reserved_concurrency else { return };
    let mappings: Vec<&Mapping> = deployment
        .mappings
        .iter()
        .filter(|m| m.enabled && deployment.function(&m.function_arn) == Some(function))
        .collect();
    let Some(first) = mappings.first() else { return };
    let caps: Vec<u32> = mappings.iter().filter_map(|m| m.maximum_concurrency).collect();
    let total: u32 = caps.iter().sum();
    let uncapped = caps.len() < mappings.len();
    if reserved > 0 && !uncapped && total <= reserved {
        return;
    }
    // An uncapped mapping is no-maximum-concurrency's finding, unless nothing can run at all.
    if reserved > 0 && uncapped {
        return;
    }
    let measured = if reserved == 0 {
        format!("{} has reserved concurrency 0: every batch is throttled", function.name)
    } else {
        format!(
            "{} has reserved concurrency {reserved}, its mappings' MaximumConcurrency add up to \
             {total}: batches beyond {reserved} are throttled back to the queue, each a receive \
             towards maxReceiveCount",
            function.name
        )
    };
    findings.push(
        Finding::new(&MAXIMUM_CONCURRENCY_ABOVE_RESERVED, &first.queue_arn, measured, {
            format!(
                "aws lambda put-function-concurrency --function-name {} \
                 --reserved-concurrent-executions {}",
                function.name,
                total.max(2)
            )
        })
        .on(format!("function {}", function.name)),
    );
}
