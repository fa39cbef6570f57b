//! The retry backoff of the consumer a queue's event source mapping invokes, when that
//! consumer is built on this project's engine: it holds a retried message for the backoff,
//! not the queue's visibility timeout, so a failure can take longer to come back.

use backpressure_core::config::variables::{
    QUARANTINE_QUEUE_URL, RETRY_BASE_SECONDS, RETRY_MAX_SECONDS, Unset, Variable,
};
use backpressure_core::error::error_chain;

/// Who reads a queue, as its event source mappings say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reader {
    /// A function on the engine, which holds a retried message for its backoff.
    Engine(ConsumerBackoff),
    /// Functions not on the engine (or with backoff off): each retry after the visibility timeout.
    Other,
    /// No mapping: an ECS service, or nothing.
    Unmapped,
}

/// `RETRY_BASE_SECONDS` and `RETRY_MAX_SECONDS` of a consumer on the engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ConsumerBackoff {
    pub(crate) function: String,
    pub(crate) base: u64,
    pub(crate) max: u64,
}

/// The engine's default, for a variable the function leaves unset.
fn default_of(variable: &Variable) -> u64 {
    match variable.unset {
        Unset::Whole(value) => value,
        _ => 0,
    }
}

impl ConsumerBackoff {
    /// The engine's own defaults, for a consumer not named.
    pub(crate) fn engine_default(consumer: &str) -> Self {
        Self {
            function: consumer.to_owned(),
            base: default_of(&RETRY_BASE_SECONDS),
            max: default_of(&RETRY_MAX_SECONDS),
        }
    }
}

/// Who reads `queue_arn`: the first function mapped to it that runs on the engine (its
/// environment names `QUARANTINE_QUEUE_URL`) with its backoff, another function, or no
/// mapping at all. A failed read is its call and the service's message, for a note.
pub(crate) async fn read(
    lambda: &aws_sdk_lambda::Client,
    queue_arn: &str,
) -> Result<Reader, String> {
    let mappings = lambda
        .list_event_source_mappings()
        .event_source_arn(queue_arn)
        .send()
        .await
        .map_err(|e| format!("lambda:ListEventSourceMappings: {}", error_chain(&e)))?;
    for function in mappings.event_source_mappings().iter().filter_map(|m| m.function_arn()) {
        let configuration = lambda
            .get_function_configuration()
            .function_name(function)
            .send()
            .await
            .map_err(|e| format!("lambda:GetFunctionConfiguration: {}", error_chain(&e)))?;
        let variables = configuration.environment().and_then(|e| e.variables());
        let Some(variables) = variables.filter(|v| v.contains_key(QUARANTINE_QUEUE_URL.name))
        else {
            continue;
        };
        let whole = |variable: &Variable| {
            let set = variables.get(variable.name).and_then(|value| value.trim().parse().ok());
            set.unwrap_or_else(|| default_of(variable))
        };
        let name = configuration.function_name().unwrap_or(function).to_owned();
        let base = whole(&RETRY_BASE_SECONDS);
        if base == 0 {
            return Ok(Reader::Other); // backoff off: the visibility timeout holds each retry
        }
        let max = whole(&RETRY_MAX_SECONDS);
        return Ok(Reader::Engine(ConsumerBackoff { function: name, base, max }));
    }
    if mappings.event_source_mappings().is_empty() {
        Ok(Reader::Unmapped)
    } else {
        Ok(Reader::Other)
    }
}
