use std::process::ExitCode;

use aws_config::timeout::TimeoutConfig;
use backlog_publisher::aws::{CloudWatchSink, EcsServices, SqsQueues};
use backlog_publisher::handler::handle;
use backlog_publisher::publisher::Publisher;
use backpressure_core::config::Vars;
use backpressure_core::error::error_chain;
use backpressure_core::publisher::PublisherConfig;
use lambda_runtime::{LambdaEvent, service_fn};
use serde_json::Value;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    backpressure_core::logging::init();
    let config = match PublisherConfig::from_vars(&Vars::from_process_env()) {
        Ok(config) => config,
        Err(error) => {
            // Exiting during init makes Lambda report Runtime.ExitError with this log line.
            tracing::error!(error = %error_chain(&error), "invalid configuration");
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
    let metrics = CloudWatchSink::new(
        aws_sdk_cloudwatch::Client::new(&aws),
        config.namespace.clone(),
        config.storage_resolution,
    );
    let publisher = Publisher::new(
        config,
        SqsQueues::new(aws_sdk_sqs::Client::new(&aws)),
        EcsServices::new(aws_sdk_ecs::Client::new(&aws)),
        metrics,
    );
    let publisher = &publisher;
    let result = lambda_runtime::run(service_fn(move |event: LambdaEvent<Value>| async move {
        handle(publisher, event).await
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
