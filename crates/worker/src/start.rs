//! The worker's start-up: the shared path (log subscriber, configuration or a
//! logged exit, one SDK configuration), the queue's ARN, the engine, signals.

use std::process::ExitCode;

use backpressure_batch::builder::BuildError;
use backpressure_batch::config::ConsumerConfig;
use backpressure_batch::delivery::DeliveryError;
use backpressure_batch::delivery::{BodyFormat, HttpDelivery, RawBody, RawDelivery, WorkRequest};
use backpressure_batch::idempotency::ClaimLease;
use backpressure_batch::sqs::SqsQuarantine;
use backpressure_batch::start::{ConsumerClients, Reach};
use backpressure_batch::worker::{Ended, Worker, WorkerError};
use backpressure_batch::{Body, Processor};
use backpressure_core::config::ConfigError;
use backpressure_core::config::variables::{Reader, WORKER_LOG_FORMAT};
use backpressure_core::error::error_chain;
use backpressure_startup as startup;
use tracing::{error, info};

use crate::config::WorkerConfig;
use crate::health::HealthConfig;
use crate::help;

/// Why the worker cannot start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// Every bad variable, each naming itself and its value.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Several(Vec<StartError>),
    /// A variable is missing or invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The downstream cannot be set up.
    #[error(transparent)]
    Delivery(#[from] DeliveryError),
    /// The engine's settings cannot work.
    #[error(transparent)]
    Build(#[from] BuildError),
}

/// What the command line asks for: the worker (no arguments), `healthcheck
/// [PID]`, `--help` or `--version`; anything else is a usage error (exit 2).
pub async fn command(args: &[String]) -> ExitCode {
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        [] => run().await,
        ["healthcheck"] => crate::health::check(None),
        ["healthcheck", pid] => crate::health::check(Some(pid)),
        ["--help" | "-h" | "help"] => {
            print!("{}", help::text());
            ExitCode::SUCCESS
        }
        ["--version" | "-V"] => {
            println!("sqs-worker {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!(
                "error: unexpected arguments {args:?}: sqs-worker takes none (it is configured by \
                 its environment), or `healthcheck [PID]`, `--help`, `--version`"
            );
            ExitCode::from(backpressure_startup::exit::USAGE)
        }
    }
}

/// The worker as it runs: HTTP delivery (`CONSUMER_CONCURRENCY` records at
/// once across every batch in work) of work requests or of raw bodies (`B`),
/// quarantining to SQS.
type DeliveryWorker<P, B> = Worker<P, SqsQuarantine, B>;

/// Everything the worker reads from its environment.
struct Loaded {
    engine: ConsumerConfig,
    config: WorkerConfig,
    health: HealthConfig,
    delivery: HttpDelivery,
    /// What the bodies are: which processor runs.
    format: BodyFormat,
}

/// Runs the worker until a signal has drained it; exit code 0 after a drain.
pub async fn run() -> ExitCode {
    // Not Lambda's switch (AWS_LAMBDA_LOG_FORMAT): the worker runs on ECS, text with timestamps.
    startup::logging::init_for_tool(std::io::stdout, "info", WORKER_LOG_FORMAT.name);
    let Some(loaded) = startup::read(load) else { return ExitCode::FAILURE };
    log_start(&loaded);
    let ended = if loaded.format == BodyFormat::Raw {
        run_on::<RawBody, RawDelivery>(loaded).await
    } else {
        run_on::<WorkRequest, HttpDelivery>(loaded).await
    };
    ended.unwrap_or(ExitCode::FAILURE)
}

/// The worker on bodies of type `B`; `None` when it could not start.
async fn run_on<B, P>(loaded: Loaded) -> Option<ExitCode>
where
    B: Body + 'static,
    P: Processor<B> + From<HttpDelivery> + 'static,
{
    let worker = connect_and_build::<B, P>(loaded).await?;
    Some(match worker.run().await {
        Ok(Ended::Drained) => ExitCode::SUCCESS,
        Ok(_) => ExitCode::FAILURE,
        Err(error) => {
            error!(error = %error, "cannot listen for SIGTERM");
            ExitCode::FAILURE
        }
    })
}

/// The configuration, or every bad variable at once.
fn load(env: &startup::Env) -> Result<Loaded, StartError> {
    // Before the errors: a misspelt variable is often why another is missing.
    startup::warn_of_unknown_variables(Reader::Worker, "sqs-worker", "sqs-worker --help");
    backpressure_batch::start::warn_of_idempotency_without_table(env);
    let mut errors: Vec<StartError> = Vec::new();
    let worker = WorkerConfig::from_vars(env)
        .map_err(|all| errors.extend(all.into_iter().map(StartError::from)));
    let health =
        HealthConfig::from_vars(env, std::process::id()).map_err(|e| errors.push(e.into()));
    let engine = ConsumerConfig::from_vars(env)
        .map_err(|e| errors.extend(e.into_each().into_iter().map(StartError::from)));
    let delivery = HttpDelivery::from_vars(env).map_err(|e| errors.push(e.into()));
    if let (Ok(worker), Ok(engine)) = (&worker, &engine)
        && engine.deadline_margin >= worker.message_timeout
    {
        errors.push(StartError::Config(ConfigError::Conflict(
            "DEADLINE_MARGIN_MS must be below MESSAGE_TIMEOUT_SECONDS: the margin is kept free \
             of each batch's time, and nothing would be left to work in",
        )));
    }
    match (worker, health, engine, delivery) {
        (Ok(config), Ok(health), Ok(engine), Ok(delivery)) if errors.is_empty() => {
            // HttpDelivery::from_vars has checked BODY_FORMAT: it reads here.
            let format = BodyFormat::from_vars(env).unwrap_or_default();
            Ok(Loaded { engine, config, health, delivery, format })
        }
        _ => Err(StartError::Several(errors)),
    }
}

fn log_start(Loaded { engine, config, health, .. }: &Loaded) {
    info!(
        version = env!("CARGO_PKG_VERSION"),
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
        "sqs-worker starting"
    );
}

/// The quarantine queue, the idempotency store and the work queue reached
/// (a task that cannot reach them stops now, not at its first message), and
/// the worker built; `None` after logging why not.
async fn connect_and_build<B, P>(loaded: Loaded) -> Option<DeliveryWorker<P, B>>
where
    B: Body + 'static,
    P: Processor<B> + From<HttpDelivery> + 'static,
{
    let Loaded { engine, config, health, delivery, .. } = loaded;
    let sdk = startup::sdk_config(engine.api_call_timeout).await;
    let clients = ConsumerClients::new(&sdk);
    let sqs = clients.sqs.get().clone();
    let version = startup::handler_version("sqs-worker", env!("CARGO_PKG_VERSION"));
    // The worker leases a claim for one visibility timeout and renews it on its heartbeat.
    let lease = ClaimLease::Renewed(config.visibility_timeout);
    let batch = engine
        .consumer(P::from(delivery), &clients, Reach::AtStart, version, lease)
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
