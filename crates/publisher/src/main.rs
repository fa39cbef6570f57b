//! backlog-publisher: backlog per task to CloudWatch, once a minute.

use std::process::ExitCode;

use aws_sdk_cloudwatch::Client as CloudWatch;
use backlog_publisher::PublisherConfig;
use backlog_publisher::aws::{CloudWatchSink, EcsServices, SqsQueues};
use backlog_publisher::{handler::handle, publisher::Publisher};
use backpressure_core::config::variables::Reader;
use backpressure_startup::{self as startup, LazyClient};

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    if !startup::in_lambda("backlog-publisher") {
        return ExitCode::from(backpressure_startup::exit::USAGE);
    }
    let Some(config) = startup::init(PublisherConfig::from_vars) else { return ExitCode::FAILURE };
    startup::warn_of_unknown_variables(Reader::Publisher, "backlog-publisher", "docs/publisher.md");
    let aws = startup::sdk_config(config.api_call_timeout).await;
    // Built by the first invocation: the init calls none of them.
    let sqs = SqsQueues::new(LazyClient::new(&aws, aws_sdk_sqs::Client::new));
    let ecs = EcsServices::new(LazyClient::new(&aws, aws_sdk_ecs::Client::new));
    let (namespace, resolution) = (config.namespace.clone(), config.storage_resolution);
    let metrics =
        CloudWatchSink::new(LazyClient::new(&aws, CloudWatch::new), namespace, resolution);
    let publisher = &Publisher::new(config, sqs, ecs, metrics);
    let handler = lambda_runtime::service_fn(|event| handle(publisher, event));
    startup::exit(lambda_runtime::run(handler).await)
}
