//! The event source mappings that read the queues, and their functions.

use std::collections::BTreeSet;

use aws_sdk_lambda::Client;
use aws_sdk_lambda::types::{EventSourceMappingConfiguration, FunctionResponseType};

use super::{Limiters, Scope, slot, unreadable};
use crate::deployment::{Deployment, Function, Mapping, Pollers};

/// The variable every function built on this project's engine reads: such a function answers
/// with `batchItemFailures`.
const OURS: &str = "QUARANTINE_QUEUE_URL";

/// The mappings reading `arns`: one listing of every mapping for `--all`, one a queue otherwise.
pub(super) async fn read_mappings(
    client: &Client,
    limiters: &Limiters,
    scope: &Scope,
    arns: &BTreeSet<String>,
    deployment: &mut Deployment,
) {
    let sources: Vec<Option<&String>> = match scope {
        Scope::All => vec![None],
        Scope::Queues(_) => arns.iter().map(Some).collect(),
    };
    for source in sources {
        let asked = client.list_event_source_mappings().set_event_source_arn(source.cloned());
        let mut pages = asked.into_paginator().send();
        loop {
            slot(&limiters.lambda).await;
            match pages.next().await {
                None => break,
                Some(Ok(page)) => deployment.mappings.extend(
                    page.event_source_mappings()
                        .iter()
                        .filter_map(mapping_of)
                        .filter(|mapping| arns.contains(&mapping.queue_arn)),
                ),
                Some(Err(error)) => {
                    let on = source.map_or("*", String::as_str);
                    let read = unreadable("lambda:ListEventSourceMappings", on, &error);
                    deployment.unreadable.push(read);
                    break;
                }
            }
        }
    }
}

fn mapping_of(found: &EventSourceMappingConfiguration) -> Option<Mapping> {
    let queue_arn = found.event_source_arn().filter(|arn| arn.starts_with("arn:aws"))?;
    if !queue_arn.contains(":sqs:") {
        return None;
    }
    let number = |value: Option<i32>| value.and_then(|v| u32::try_from(v).ok());
    let mut mapping = Mapping::new(
        found.uuid().unwrap_or_default(),
        queue_arn,
        found.function_arn().unwrap_or_default(),
    );
    mapping.enabled = !matches!(found.state(), Some("Disabled" | "Disabling"));
    mapping.batch_size = number(found.batch_size()).unwrap_or(10);
    mapping.window_s = number(found.maximum_batching_window_in_seconds()).unwrap_or(0);
    mapping.reports_item_failures =
        found.function_response_types().contains(&FunctionResponseType::ReportBatchItemFailures);
    mapping.maximum_concurrency =
        found.scaling_config().and_then(|scaling| number(scaling.maximum_concurrency()));
    mapping.pollers = found.provisioned_poller_config().map(|pollers| Pollers {
        minimum: number(pollers.minimum_pollers()).unwrap_or(2),
        maximum: number(pollers.maximum_pollers()).unwrap_or(200),
    });
    Some(mapping)
}

/// Each mapping's function, once: its timeout, its reserved concurrency, whether it is ours.
pub(super) async fn read_functions(
    client: &Client,
    limiters: &Limiters,
    deployment: &mut Deployment,
) {
    let arns: BTreeSet<String> =
        deployment.mappings.iter().map(|mapping| mapping.function_arn.clone()).collect();
    for arn in arns {
        slot(&limiters.lambda).await;
        let configuration =
            match client.get_function_configuration().function_name(&arn).send().await {
                Ok(configuration) => configuration,
                Err(error) => {
                    let read = unreadable("lambda:GetFunctionConfiguration", &arn, &error);
                    deployment.unreadable.push(read);
                    continue;
                }
            };
        let name = configuration.function_name().unwrap_or(&arn);
        let timeout = configuration.timeout().and_then(|t| u32::try_from(t).ok()).unwrap_or(3);
        let mut function = Function::new(&arn, name, timeout);
        // Only the variables' names are read: their values may be secrets.
        function.reports_item_failures = configuration
            .environment()
            .and_then(|environment| environment.variables())
            .is_some_and(|variables| variables.contains_key(OURS));
        slot(&limiters.lambda).await;
        match client.get_function_concurrency().function_name(&arn).send().await {
            Ok(concurrency) => {
                function.reserved_concurrency = concurrency
                    .reserved_concurrent_executions()
                    .and_then(|reserved| u32::try_from(reserved).ok());
            }
            Err(error) => {
                let read = unreadable("lambda:GetFunctionConcurrency", &arn, &error);
                deployment.unreadable.push(read);
            }
        }
        deployment.functions.push(function);
    }
}
