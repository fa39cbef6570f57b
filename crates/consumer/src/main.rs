use std::process::ExitCode;

use aws_config::timeout::TimeoutConfig;
use backpressure_core::config::Vars;
use backpressure_core::consumer::config::{ConsumerConfig, Downstream};
use backpressure_core::consumer::engine::{Engine, EngineSettings};
use backpressure_core::consumer::event::SqsEvent;
use backpressure_core::error::error_chain;
use batch_consumer::aws::{SqsQuarantine, SqsVisibility};
use batch_consumer::delivery::HttpDelivery;
use batch_consumer::handler::{Consumer, handle};
use lambda_runtime::{LambdaEvent, service_fn};

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    backpressure_core::logging::init();
    let vars = Vars::from_process_env();
    let settings = ConsumerConfig::from_vars(&vars)
        .and_then(|config| Ok((config, Downstream::from_vars(&vars)?)));
    let (config, downstream) = match settings {
        Ok(settings) => settings,
        Err(error) => {
            // Exiting during init makes Lambda report Runtime.ExitError with this log line.
            tracing::error!(error = %error_chain(&error), "invalid configuration");
            return ExitCode::FAILURE;
        }
    };
    let delivery = match HttpDelivery::new(&downstream) {
        Ok(delivery) => delivery,
        Err(error) => {
            tracing::error!(error = %error_chain(&error), "cannot set up the downstream client");
            return ExitCode::FAILURE;
        }
    };
    // Each call's own budget, retries included: a hung call fails on its own
    // instead of taking the whole invocation's time.
    let timeouts = TimeoutConfig::builder()
        .operation_timeout(config.api_call_timeout)
        .operation_attempt_timeout(config.api_call_timeout / 2)
        .build();
    let aws = aws_config::from_env().timeout_config(timeouts).load().await;
    let sqs = aws_sdk_sqs::Client::new(&aws);
    let handler_version = format!(
        "batch-consumer/{} ({})",
        env!("CARGO_PKG_VERSION"),
        std::env::var("AWS_LAMBDA_FUNCTION_VERSION").unwrap_or_else(|_| "local".to_owned())
    );
    let engine = Engine::new(
        delivery,
        SqsQuarantine::new(
            sqs.clone(),
            config.quarantine_queue.clone(),
            config.quarantine_max_message_bytes,
        ),
        EngineSettings {
            concurrency: config.concurrency,
            deadline_margin: config.deadline_margin,
            handler_version,
        },
    );
    let consumer = Consumer::new(engine, SqsVisibility::new(sqs), config.backoff, config.namespace);
    let consumer = &consumer;
    let result = lambda_runtime::run(service_fn(move |event: LambdaEvent<SqsEvent>| async move {
        handle(consumer, event).await
    }))
    .await;
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(error = %error, "the Lambda runtime stopped");
            ExitCode::FAILURE
        }
    }
}
