//! `serve`: a processor as an SQS-triggered Lambda function, configured by
//! the variables `template.yaml` gives the consumer function.

use std::error::Error;
use std::process::ExitCode;
use std::sync::Arc;

use backpressure_batch::{Body, Processor};
use backpressure_core::config::ConfigError;
use backpressure_core::config::variables::Reader;
use backpressure_core::error::error_chain;
use backpressure_startup as startup;
use lambda_runtime::service_fn;
use tracing::{error, info};

use crate::config::ConsumerConfig;
use crate::start::{ConsumerClients, Reach};

/// The Tokio runtime for [`serve`]: one thread while Lambda sends one
/// invocation at a time; a thread per vCPU when Lambda Managed Instances
/// send several at once (`AWS_LAMBDA_MAX_CONCURRENCY` above 1).
pub fn tokio_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    let concurrent = std::env::var("AWS_LAMBDA_MAX_CONCURRENCY")
        .ok()
        .and_then(|value| value.trim().parse::<u32>().ok())
        .is_some_and(|at_once| at_once > 1);
    let mut builder = if concurrent {
        tokio::runtime::Builder::new_multi_thread()
    } else {
        tokio::runtime::Builder::new_current_thread()
    };
    builder.enable_all().build()
}

/// A configuration the engine or the processor refused.
#[derive(Debug, thiserror::Error)]
enum ServeError<E> {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Processor(E),
    #[error("{0}; {1}")]
    Both(ConfigError, #[source] E),
}

/// The Lambda start-up for an SQS batch processor: [`startup::init`] with a
/// [`ConsumerConfig`] (quarantine queue, concurrency, deadline margin,
/// backoff, metrics) plus whatever `processor` reads, the consumer built by
/// [`ConsumerConfig::consumer`] with clients built on first use, then
/// `lambda_runtime` until it stops. `name` and `version` go into quarantine records.
///
/// Lambda Managed Instances send `AWS_LAMBDA_MAX_CONCURRENCY` invocations at
/// once; each is then served on its own task with its own deadline, trace,
/// batch summary and idempotency claims, while the processor, the clients,
/// `CONSUMER_CONCURRENCY`, `DOWNSTREAM_MAX_RPS` and the per-group cap are the
/// process's, shared on purpose so the downstream's load does not grow with
/// the invocations. Run it on [`tokio_runtime`] to use every vCPU.
pub async fn serve<B, P, E>(
    name: &str,
    version: &str,
    processor: impl FnOnce(&startup::Env) -> Result<P, E>,
) -> ExitCode
where
    B: Body + 'static,
    P: Processor<B> + 'static,
    E: Error + Send + Sync + 'static,
{
    if !startup::in_lambda(name) {
        return ExitCode::from(startup::exit::USAGE);
    }
    let load = |vars: &startup::Env| -> Result<_, ServeError<E>> {
        startup::warn_of_unknown_variables(Reader::Consumer, name, "docs/consumer.md");
        crate::start::warn_of_idempotency_without_table(vars);
        // The engine's errors and the processor's together, so one start says them all.
        match (ConsumerConfig::from_vars(vars), processor(vars)) {
            (Ok(config), Ok(processor)) => Ok((config, processor)),
            (Err(config), Ok(_)) => Err(ServeError::Config(config)),
            (Ok(_), Err(processor)) => Err(ServeError::Processor(processor)),
            (Err(config), Err(processor)) => Err(ServeError::Both(config, processor)),
        }
    };
    let Some((config, processor)) = startup::init(load) else { return ExitCode::FAILURE };
    info!(
        version,
        quarantine = config.quarantine_queue.url(),
        idempotency = config.idempotency.as_ref().map_or("off".to_owned(), |i| i.store.describe()),
        envelope = config.envelope.map_or("none", |envelope| envelope.name()),
        offloaded_payloads = config.offloaded.map_or("off".to_owned(), |o| o.describe()),
        "{name} starting"
    );
    let clients = ConsumerClients::new(&startup::sdk_config(config.api_call_timeout).await);
    let version = startup::handler_version(name, version);
    match config.consumer(processor, &clients, Reach::OnFirstUse, version).await {
        Ok(builder) => match builder.build() {
            Ok(batch) => {
                let batch = Arc::new(batch);
                // One invocation at a time, unless Lambda Managed Instances set
                // AWS_LAMBDA_MAX_CONCURRENCY: then that many at once, sharing
                // the processor, its clients and its limits.
                let handler = service_fn(move |event| {
                    let batch = Arc::clone(&batch);
                    async move { batch.handle(event).await }
                });
                startup::exit(lambda_runtime::run_concurrent(handler).await)
            }
            Err(error) => {
                error!(error = %error_chain(&error), "invalid configuration");
                ExitCode::FAILURE
            }
        },
        Err(error) => {
            error!(error = %error_chain(&error), "cannot start");
            ExitCode::FAILURE
        }
    }
}
