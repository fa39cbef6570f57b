//! sqs-backpressure: wires the AWS configuration and logging, runs one command.
//! Exit codes: 0 done; 1 an error, or messages left on the queue after
//! failures; 2 a usage error; 3 a canary message came back; 4 messages in
//! flight were not seen (run again after their visibility timeout).

use std::process::ExitCode;
use std::time::Duration;

use aws_config::timeout::TimeoutConfig;

use clap::Parser;
use sqs_backpressure::args::Cli;
use sqs_backpressure::finish::Finish;
use sqs_backpressure::{Clients, logging, run};

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    logging::init();
    let mut loader = aws_config::from_env();
    if let Some(profile) = &cli.aws.profile {
        loader = loader.profile_name(profile);
    }
    if let Some(region) = &cli.aws.region {
        loader = loader.region(aws_config::Region::new(region.clone()));
    }
    if let Some(endpoint) = &cli.aws.endpoint_url {
        loader = loader.endpoint_url(endpoint);
    }
    let call = Duration::from_secs(cli.aws.call_timeout);
    let timeouts = TimeoutConfig::builder()
        .operation_timeout(call)
        .operation_attempt_timeout(call / 2)
        .build();
    let config = loader.timeout_config(timeouts).load().await;
    let clients =
        Clients { sqs: aws_sdk_sqs::Client::new(&config), sts: aws_sdk_sts::Client::new(&config) };
    match run(cli, &clients).await {
        Ok(Finish::Failures(count)) => {
            eprintln!(
                "{count} message(s) could not be handled and are still on the queue (see the audit file)"
            );
            ExitCode::FAILURE
        }
        Ok(finish) => ExitCode::from(finish.exit_code()),
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}
