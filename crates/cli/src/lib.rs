//! `sqs-backpressure`: the operator's command line for quarantine and
//! dead-letter queues — inspect, export, replay and discard, filtered,
//! rate-limited, audited and safe to interrupt. See `docs/operator-cli.md`.

pub mod args;
mod aws;
mod changing;
mod commands;
mod reading;
mod terminal;

// What main.rs runs with; lease and spill for bench-holding, which measures the stores.
pub use aws::connect::{Clients, connect};
pub use reading::{lease, spill};
pub use terminal::exit_status::Finish;
pub use terminal::{interrupt, logging};

use args::{Cli, Command, DoctorArgs, EarlyAwsArgs, QueueArgs};
use aws::queue::Queue;
use commands::consent::require_consent;
use reading::fields::Fields;
use reading::filter::Filter;
use reading::objects::{Bodies, Objects};
use terminal::error::CliError;

/// Runs one command.
pub async fn run(cli: Cli, clients: &Clients) -> Result<Finish, CliError> {
    let Some(queue_args) = cli.command.queue() else {
        return run_local(cli.command);
    };
    let call = queue_args.aws.or_early(&cli.early).call_timeout();
    consent_before_any_call(&cli.command)?;
    let url = aws::connect::queue_url(&clients.sqs, "--queue-url", &queue_args.queue_url).await?;
    let queue = |args: &QueueArgs, fields: &Fields| Queue {
        client: clients.sqs.clone(),
        poll_client: aws::queue::with_timeouts(
            &clients.sqs,
            call,
            std::time::Duration::from_secs(args.wait_seconds.unsigned_abs().into()),
        ),
        url: url.clone(),
        lease: args.visibility_timeout,
        wait: args.wait_seconds,
        raw: args.raw,
        fields: fields.clone(),
        rotate: args.rotate_groups,
        bodies: None,
    };
    let objects = Objects { s3: clients.s3.clone() };
    // The bodies a command shows, exports or replays, read from S3 as each is received.
    let with_bodies = |queue: Queue, filter: &Filter| Queue {
        bodies: Some(Bodies { objects: objects.clone(), filter: filter.clone() }),
        ..queue
    };
    let now = jiff::Timestamp::now();
    match cli.command {
        Command::Stats { queue: q, filters, json } => {
            let filter = Filter::new(filters, now)?;
            // Who read it: a queue looks empty to an identity of the wrong account.
            let identity = aws::identity::operator(&clients.sts).await.map_err(|e| e.to_string());
            commands::stats::stats(&queue(&q, filter.fields()), &filter, json, identity).await
        }
        Command::List { queue: q, filters, limit, json } => {
            let filter = Filter::new(filters, now)?;
            commands::list::list(&queue(&q, filter.fields()), &filter, limit, json).await
        }
        Command::Show { queue: q, message_id } => {
            let filter = Filter::message_id(&message_id);
            let queue = with_bodies(queue(&q, filter.fields()), &filter);
            commands::list::show(&queue, &message_id).await
        }
        Command::Export { queue: q, filters, out } => {
            let filter = Filter::new(filters, now)?;
            let queue = with_bodies(queue(&q, filter.fields()), &filter);
            commands::export::export(&queue, &filter, &out).await
        }
        Command::Replay { queue: q, filters, mut replay, change } => {
            let filter = Filter::new(filters, now)?;
            if let Some(to) = &replay.to {
                replay.to = Some(aws::connect::queue_url(&clients.sqs, "--to", to).await?);
            }
            let queue = with_bodies(queue(&q, filter.fields()), &filter);
            commands::replay::replay(&queue, &objects, &filter, &replay, &change, clients).await
        }
        Command::Discard { queue: q, filters, limit, dry_run: true, .. } => {
            let filter = Filter::new(filters, now)?;
            commands::discard::discard_dry_run(&queue(&q, filter.fields()), &filter, limit).await
        }
        Command::Discard { queue: q, filters, limit, change, .. } => {
            let filter = Filter::new(filters, now)?;
            let queue = queue(&q, filter.fields());
            commands::discard::discard(&queue, &objects, &filter, limit, &change, &clients.sts)
                .await
        }
        Command::Audit { .. }
        | Command::Doctor { .. }
        | Command::Completions { .. }
        | Command::Man { .. } => run_local(cli.command),
    }
}

/// A command that changes a queue, with nobody to ask and no `--yes`: said
/// before any call.
fn consent_before_any_call(command: &Command) -> Result<(), CliError> {
    match command {
        Command::Replay { replay, change, .. } if !replay.dry_run => require_consent(change.yes),
        Command::Discard { dry_run: false, change, .. } => require_consent(change.yes),
        _ => Ok(()),
    }
}

/// `doctor`: the SDK configured from its flags (and those before it), then the check.
pub async fn run_doctor(doctor: &DoctorArgs, early: &EarlyAwsArgs) -> Result<Finish, CliError> {
    if let Some(template) = &doctor.template {
        return commands::doctor::offline(template, doctor.parameters.as_deref(), doctor.json);
    }
    let first = doctor.queues.first().map_or("", String::as_str);
    let config = aws::connect::sdk_config(&doctor.aws.or_early(early), first).await?;
    commands::doctor::doctor(doctor, &config).await
}

/// What can be checked on this machine before any AWS call (the filters'
/// times, a file to write), so that a usage error is said before credentials
/// or the network are.
pub fn check_before_calls(command: &Command) -> Result<(), CliError> {
    if let Some(filters) = command.filters() {
        Filter::new(filters.clone(), jiff::Timestamp::now())?;
    }
    match command {
        Command::Export { out, .. } => commands::export::check_out(out),
        _ => Ok(()),
    }
}

/// Runs a command that calls no AWS API.
pub fn run_local(command: Command) -> Result<Finish, CliError> {
    use clap::CommandFactory;

    // Rendered whole first: clap_complete panics on a write that fails (a closed pipe).
    let mut text: Vec<u8> = Vec::new();
    let rendered = match command {
        Command::Audit { file, json } => {
            let trails = commands::audit_summary::summarize(&file)?;
            text = if json {
                format!("{}\n", serde_json::to_string(&trails).unwrap_or_default()).into_bytes()
            } else {
                commands::audit_summary::render(&file, &trails).into_bytes()
            };
            Ok(())
        }
        Command::Completions { shell } => {
            clap_complete::generate(
                shell,
                &mut args::Cli::command(),
                "sqs-backpressure",
                &mut text,
            );
            Ok(())
        }
        Command::Man { subcommand } => commands::manual::render(subcommand.as_deref(), &mut text),
        _ => Ok(()),
    };
    rendered.map_err(|e| CliError::file(std::path::Path::new("<stdout>"), e))?;
    let written = std::io::Write::write_all(&mut std::io::stdout().lock(), &text);
    written.map_err(|e| CliError::file(std::path::Path::new("<stdout>"), e))?;
    Ok(Finish::Done)
}
