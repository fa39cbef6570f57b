//! `run_worker`: a processor as an ECS service, configured by the variables
//! `template.yaml`'s task definition gives the worker: the shared start-up
//! (log subscriber, configuration or a logged exit, one SDK configuration),
//! the queues and the idempotency store reached, the runtime, the signals.

use std::error::Error;
use std::process::ExitCode;

use backpressure_batch::BuildError;
use backpressure_batch::worker::{Ended, Worker, WorkerError};
use backpressure_batch::{Body, Processor};
use backpressure_core::config::variables::{DEADLINE_MARGIN_MS, Reader, WORKER_LOG_FORMAT};
use backpressure_core::config::{ConfigError, margin_leaves_time};
use backpressure_core::error::error_chain;
use backpressure_startup as startup;
use tracing::{error, info};

use crate::config::ConsumerConfig;
use crate::healthcheck::HealthConfig;
use crate::start::{ConsumerClients, ConsumerQuarantine, Reach};
use crate::worker_config::WorkerConfig;

/// Why the worker cannot start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
    /// Every bad variable, each naming itself and its value.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Several(Vec<StartError>),
    /// A variable is missing or invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The processor refused its own settings.
    #[error(transparent)]
    Processor(Box<dyn Error + Send + Sync>),
    /// The engine's settings cannot work.
    #[error(transparent)]
    Build(#[from] BuildError),
}

/// Everything the worker reads from its environment.
struct Loaded<P> {
    engine: ConsumerConfig,
    config: WorkerConfig,
    health: HealthConfig,
    processor: P,
}

/// Runs `processor` (built from the environment by the closure, which reads
/// the processor's own variables) as an ECS worker until a signal has
/// drained it: exit code 0 after a drain, 1 when it cannot start or stopped
/// otherwise. `name` and `version` go into the logs and quarantine records.
/// Every variable it reads is in `docs/worker.md`; a bad one is logged, with
/// every other bad one, before anything is reached. The program's own
/// command line is answered first: `--help` (or `-h`) prints what it reads,
/// `--version` its name and version, `healthcheck [PID]` runs [`crate::healthcheck`].
/// Any other argument is left to the program.
pub async fn run_worker<B, P, E>(
    name: &str,
    version: &str,
    processor: impl FnOnce(&startup::Env) -> Result<P, E>,
) -> ExitCode
where
    B: Body + 'static,
    P: Processor<B> + 'static,
    E: Error + Send + Sync + 'static,
{
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["--help" | "-h"] => {
            print!("{}", crate::worker_help::text(name, version));
            return ExitCode::SUCCESS;
        }
        ["--version" | "-V"] => {
            println!("{name} {version}");
            return ExitCode::SUCCESS;
        }
        ["healthcheck"] => return crate::healthcheck(None),
        ["healthcheck", pid] => return crate::healthcheck(Some(pid)),
        _ => {}
    }
    // Not Lambda's switch (AWS_LAMBDA_LOG_FORMAT): the worker runs on ECS, text with timestamps.
    startup::logging::init_for_tool(std::io::stdout, "info", WORKER_LOG_FORMAT.name);
    // Before the errors: a misspelt variable is often why another is missing.
    startup::warn_of_unknown_variables(Reader::Worker, name, "docs/worker.md");
    let Some(loaded) = startup::read(|env| load(env, processor)) else {
        return ExitCode::FAILURE;
    };
    log_start(name, version, &loaded);
    let Some(worker) = connect_and_build(name, version, loaded).await else {
        return ExitCode::FAILURE;
    };
    match worker.run().await {
        Ok(Ended::Drained) => ExitCode::SUCCESS,
        Ok(_) => ExitCode::FAILURE,
        Err(error) => {
            error!(error = %error, "cannot listen for SIGTERM");
            ExitCode::FAILURE
        }
    }
}

/// The configuration, or every bad variable at once.
fn load<P, E>(
    env: &startup::Env,
    processor: impl FnOnce(&startup::Env) -> Result<P, E>,
) -> Result<Loaded<P>, StartError>
where
    E: Error + Send + Sync + 'static,
{
    crate::start::warn_of_idempotency_without_table(env);
    let mut errors: Vec<StartError> = Vec::new();
    let worker = WorkerConfig::from_vars(env)
        .map_err(|all| errors.extend(all.into_iter().map(StartError::from)));
    let health =
        HealthConfig::from_vars(env, std::process::id()).map_err(|e| errors.push(e.into()));
    let engine = ConsumerConfig::from_vars(env)
        .map_err(|e| errors.extend(e.into_each().into_iter().map(StartError::from)));
    let processor = processor(env).map_err(|e| errors.push(StartError::Processor(Box::new(e))));
    if let (Ok(worker), Ok(engine)) = (&worker, &engine)
        && let Err(why) = margin_leaves_time(engine.deadline_margin, worker.message_timeout)
    {
        let margin = engine.deadline_margin.as_millis().to_string();
        errors.push(StartError::Config(ConfigError::invalid(
            DEADLINE_MARGIN_MS.name,
            &margin,
            why,
        )));
    }
    match (worker, health, engine, processor) {
        (Ok(config), Ok(health), Ok(engine), Ok(processor)) if errors.is_empty() => {
            Ok(Loaded { engine, config, health, processor })
        }
        _ => Err(StartError::Several(errors)),
    }
}

fn log_start<P>(name: &str, version: &str, Loaded { engine, config, health, .. }: &Loaded<P>) {
    info!(
        version,
        queue = config.queue.url(),
        quarantine = engine.quarantine_queue.url(),
        pollers = config.pollers,
        max_in_flight = config.max_in_flight,
        concurrency = engine.concurrency,
        max_in_flight_per_group = engine.max_in_flight_per_group.unwrap_or(0),
        receive_wait_s = config.receive_wait.as_secs(),
        visibility_timeout_s = config.visibility_timeout.as_secs(),
        message_timeout_s = config.message_timeout.as_secs(),
        drain_s = config.drain.as_secs(),
        health_file = %health.file.display(),
        task_protection = config.agent_uri.is_some(),
        idempotency = engine.idempotency.as_ref().map_or("off".to_owned(), |i| i.store.describe()),
        quarantine_overflow_bucket = engine.quarantine_overflow_bucket.as_deref().unwrap_or("off"),
        envelope = engine.envelope.map_or("none", |envelope| envelope.name()),
        offloaded_payloads = engine.offloaded.map_or("off".to_owned(), |o| o.describe()),
        "{name} starting"
    );
}

/// The quarantine queue, the idempotency store and the work queue reached
/// (a task that cannot reach them stops now, not at its first message), and
/// the worker built; `None` after logging why not.
async fn connect_and_build<B, P>(
    name: &str,
    version: &str,
    loaded: Loaded<P>,
) -> Option<Worker<P, ConsumerQuarantine, B>>
where
    B: Body + 'static,
    P: Processor<B> + 'static,
{
    let Loaded { engine, config, health, processor } = loaded;
    let sdk = startup::sdk_config(engine.api_call_timeout).await;
    let clients = ConsumerClients::new(&sdk);
    let sqs = clients.sqs.clone();
    let version = startup::handler_version(name, version);
    // The worker leases each claim for one visibility timeout and renews it on its heartbeat.
    let batch = engine
        .consumer(processor, &clients, Reach::AtStart, version)
        .await
        .inspect_err(|error| error!(error = %error_chain(error), "cannot start"))
        .ok()?;
    let mut worker = Worker::builder(batch, sqs, config.queue.clone())
        .pollers(config.pollers)
        .max_in_flight(config.max_in_flight)
        .receive_wait(config.receive_wait)
        .visibility_timeout(config.visibility_timeout)
        .message_timeout(config.message_timeout)
        .drain(config.drain)
        .api_call_timeout(engine.api_call_timeout)
        .health_file(health.file);
    if let Some(uri) = &config.agent_uri {
        worker = worker.task_protection(uri, config.protection_idle);
    }
    match worker.build().await {
        Ok(worker) => Some(worker),
        Err(WorkerError::Queue { queue, source }) => {
            error!(error = %error_chain(&source), queue, "cannot read the work queue");
            None
        }
        Err(WorkerError::Build(error)) => {
            error!(error = %error_chain(&StartError::from(error)), "invalid configuration");
            None
        }
        Err(error) => {
            error!(error = %error_chain(&error), "invalid configuration");
            None
        }
    }
}
