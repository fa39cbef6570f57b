//! `sqs-backpressure`: the operator's command line for quarantine and
//! dead-letter queues — inspect, export, replay and discard, filtered,
//! rate-limited, audited and safe to interrupt. See `docs/operator-cli.md`.

pub mod args;
pub mod audit;
pub mod change;
pub mod destination;
pub mod entry;
pub mod error;
pub mod filter;
pub mod finish;
pub mod inspect;
pub mod logging;
pub mod origin;
pub mod outgoing;
pub mod pace;
pub mod queue;
pub mod rotate;
pub mod scan;
pub mod stats;
pub mod sweep;
pub mod text;

use args::{Cli, Command, QueueArgs};
use error::CliError;
use filter::Filter;
use finish::Finish;
use queue::Queue;

/// The clients a command needs, built once.
#[derive(Debug, Clone)]
pub struct Clients {
    pub sqs: aws_sdk_sqs::Client,
    pub sts: aws_sdk_sts::Client,
}

/// Runs one command.
pub async fn run(cli: Cli, clients: &Clients) -> Result<Finish, CliError> {
    let call = std::time::Duration::from_secs(cli.aws.call_timeout);
    let queue = |args: &QueueArgs| Queue {
        client: clients.sqs.clone(),
        poll_client: queue::with_timeouts(
            &clients.sqs,
            call,
            std::time::Duration::from_secs(args.wait_seconds.unsigned_abs().into()),
        ),
        url: args.queue_url.clone(),
        lease: args.visibility_timeout,
        wait: args.wait_seconds,
        raw: args.raw,
        rotate: args.rotate_groups,
    };
    let now = jiff::Timestamp::now();
    match cli.command {
        Command::Stats { queue: q, filters, json } => {
            inspect::stats(&queue(&q), &Filter::new(filters, now)?, json).await
        }
        Command::List { queue: q, filters, limit, json } => {
            inspect::list(&queue(&q), &Filter::new(filters, now)?, limit, json).await
        }
        Command::Show { queue: q, message_id } => inspect::show(&queue(&q), &message_id).await,
        Command::Export { queue: q, filters, out } => {
            inspect::export(&queue(&q), &Filter::new(filters, now)?, &out).await
        }
        Command::Replay { queue: q, filters, replay, change } => {
            let filter = Filter::new(filters, now)?;
            change::replay(&queue(&q), &filter, &replay, &change, &clients.sts).await
        }
        Command::Discard { queue: q, filters, limit, change } => {
            let filter = Filter::new(filters, now)?;
            change::discard(&queue(&q), &filter, limit, &change, &clients.sts).await
        }
    }
}
