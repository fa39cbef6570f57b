//! The command line, as `clap` parses it.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use clap_complete::Shell;

use crate::terminal::exit_status::EXIT_CODES;

mod doctor;
mod filters;
pub(crate) mod times;

pub(crate) use doctor::DOCTOR_EXIT_CODES;
pub use doctor::DoctorArgs;
pub use filters::FilterArgs;

/// Inspect, export, replay and discard quarantined and dead-lettered SQS
/// messages: filtered, rate-limited, audited and safe to interrupt.
#[derive(Debug, Parser)]
#[command(name = "sqs-backpressure", version, about, long_about = None, after_help = EXIT_CODES)]
pub struct Cli {
    /// More on stderr: -v the command's progress notes (and, for one that moves or deletes
    /// messages, each message's audit line), -vv everything this tool logs (RUST_LOG, when
    /// set, decides instead).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    #[command(flatten)]
    pub early: EarlyAwsArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// The AWS flags given before the subcommand (`sqs-backpressure --region R
/// stats …`), taken as the `aws` CLI takes them; hidden, since each command
/// that calls AWS lists them itself, and `audit`, `completions` and `man` take none.
#[derive(Debug, Clone, Default, Args)]
pub struct EarlyAwsArgs {
    #[arg(long, hide = true)]
    profile: Option<String>,
    #[arg(long, hide = true)]
    region: Option<String>,
    #[arg(long, hide = true)]
    endpoint_url: Option<String>,
    #[arg(long, hide = true, allow_negative_numbers = true, value_parser = seconds_up_to_300)]
    call_timeout: Option<u64>,
}

/// The AWS settings the `aws` CLI takes; unset, the standard chain decides
/// (`AWS_PROFILE`, `AWS_REGION`, `AWS_ENDPOINT_URL`, config files, roles).
#[derive(Debug, Clone, Args)]
pub struct AwsArgs {
    /// A named profile from the shared AWS config files.
    #[arg(long)]
    pub profile: Option<String>,
    /// The region of the queues.
    #[arg(long)]
    pub region: Option<String>,
    /// Send every AWS call to this endpoint instead (an emulator, a VPC endpoint).
    #[arg(long)]
    pub endpoint_url: Option<String>,
    /// Seconds each AWS call may take, retries included (a receive gets its wait on top):
    /// a hung call fails the command instead of hanging it [default: 20]
    #[arg(long, allow_negative_numbers = true, value_parser = seconds_up_to_300)]
    pub call_timeout: Option<u64>,
}

impl AwsArgs {
    /// These flags, each one not given after the subcommand taken from before it.
    pub fn or_early(&self, early: &EarlyAwsArgs) -> Self {
        Self {
            profile: self.profile.clone().or_else(|| early.profile.clone()),
            region: self.region.clone().or_else(|| early.region.clone()),
            endpoint_url: self.endpoint_url.clone().or_else(|| early.endpoint_url.clone()),
            call_timeout: self.call_timeout.or(early.call_timeout),
        }
    }

    /// `--call-timeout`, 20 s when not given.
    pub fn call_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.call_timeout.unwrap_or(20))
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Counts by error code, tenant, source queue, operation and age; reads without consuming.
    Stats {
        #[command(flatten)]
        queue: QueueArgs,
        #[command(flatten)]
        filters: FilterArgs,
        /// One JSON document instead of tables.
        #[arg(long)]
        json: bool,
    },
    /// The matching records with their error detail and original body; reads without consuming.
    List {
        #[command(flatten)]
        queue: QueueArgs,
        #[command(flatten)]
        filters: FilterArgs,
        /// At most this many records (1 or more).
        #[arg(long, allow_negative_numbers = true, value_parser = at_least_one)]
        limit: Option<usize>,
        /// One JSON line per record.
        #[arg(long)]
        json: bool,
    },
    /// One record in full: its original message id, or its own id on the queue.
    Show {
        #[command(flatten)]
        queue: QueueArgs,
        /// The original message id, the message's own id on this queue, or its envelope's
        /// (SNS's `MessageId`, EventBridge's `id`).
        #[arg(long)]
        message_id: String,
    },
    /// Every matching record to a JSON Lines file, bodies and attributes byte for byte; removes nothing.
    Export {
        #[command(flatten)]
        queue: QueueArgs,
        #[command(flatten)]
        filters: FilterArgs,
        /// The file to write (it must not exist yet), or `-` for stdout.
        #[arg(long)]
        out: PathBuf,
    },
    /// Send the original messages back to their source queue, then delete them here.
    Replay {
        #[command(flatten)]
        queue: QueueArgs,
        #[command(flatten)]
        filters: FilterArgs,
        #[command(flatten)]
        replay: ReplayArgs,
        #[command(flatten)]
        change: ChangeArgs,
    },
    /// Delete the matching records (export them first).
    Discard {
        #[command(flatten)]
        queue: QueueArgs,
        #[command(flatten)]
        filters: FilterArgs,
        /// At most this many records (1 or more).
        #[arg(long, allow_negative_numbers = true, value_parser = at_least_one)]
        limit: Option<usize>,
        /// Print what would be deleted; delete nothing and write no audit file.
        #[arg(long)]
        dry_run: bool,
        #[command(flatten)]
        change: ChangeArgs,
    },
    /// What an audit trail records, across every run that appended to it: per queue, messages
    /// moved, discarded and failed, by error code, who, first and last time. Reads only the file.
    Audit {
        /// The audit file (`--audit` of replay and discard).
        file: PathBuf,
        /// One JSON document instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Check what is deployed around queues against AWS's documented rules: their dead-letter
    /// queues, the event source mappings and functions and the ECS services that read them (and
    /// the backlog-publishers that scale those), their alarms. Read-only.
    // doctor receives no message: the shared help's note on a receive's wait is not its own.
    #[command(
        after_help = DOCTOR_EXIT_CODES,
        mut_arg("call_timeout", |arg| arg.help(
            "Seconds each AWS call may take, retries included: a hung call fails the read \
             instead of hanging it [default: 20]"
        ))
    )]
    Doctor {
        #[command(flatten)]
        doctor: DoctorArgs,
    },
    /// A completion script for the shell, on stdout (`source <(sqs-backpressure completions bash)`).
    Completions { shell: Shell },
    /// The manual page, as roff on stdout (`sqs-backpressure man | man -l -`); with a
    /// subcommand, that subcommand's page (`sqs-backpressure man replay`).
    Man {
        #[arg(value_parser = PAGES)]
        subcommand: Option<String>,
    },
}

/// The subcommands that have a manual page of their own (`sqs-backpressure-NAME(1)`).
pub const PAGES: [&str; 10] = [
    "stats",
    "list",
    "show",
    "export",
    "replay",
    "discard",
    "audit",
    "doctor",
    "completions",
    "man",
];

impl Command {
    /// The queue the subcommand works on; `None` for those that call no AWS API.
    pub fn queue(&self) -> Option<&QueueArgs> {
        match self {
            Self::Stats { queue, .. }
            | Self::List { queue, .. }
            | Self::Show { queue, .. }
            | Self::Export { queue, .. }
            | Self::Replay { queue, .. }
            | Self::Discard { queue, .. } => Some(queue),
            Self::Audit { .. }
            | Self::Doctor { .. }
            | Self::Completions { .. }
            | Self::Man { .. } => None,
        }
    }

    /// `doctor`'s flags, when it is the subcommand.
    pub fn doctor(&self) -> Option<&DoctorArgs> {
        match self {
            Self::Doctor { doctor } => Some(doctor),
            _ => None,
        }
    }

    /// The filters of the subcommands that take them.
    pub fn filters(&self) -> Option<&FilterArgs> {
        match self {
            Self::Stats { filters, .. }
            | Self::List { filters, .. }
            | Self::Export { filters, .. }
            | Self::Replay { filters, .. }
            | Self::Discard { filters, .. } => Some(filters),
            Self::Show { .. }
            | Self::Audit { .. }
            | Self::Doctor { .. }
            | Self::Completions { .. }
            | Self::Man { .. } => None,
        }
    }
}

/// The queue to work on and how long records are held while being read.
#[derive(Debug, Clone, Args)]
pub struct QueueArgs {
    /// The quarantine queue or dead-letter queue: its URL, ARN or name.
    #[arg(long)]
    pub queue_url: String,
    /// Only the commands that call AWS take these.
    #[command(flatten)]
    pub aws: AwsArgs,
    /// Treat every message as a raw message even when it looks like a quarantine record.
    #[arg(long)]
    pub raw: bool,
    /// Seconds a message stays invisible to others while this command holds it
    /// (1–43200); everything held is made visible again before the command ends.
    #[arg(long, allow_negative_numbers = true, default_value_t = 120, value_parser = clap::value_parser!(i32).range(1..=43_200))]
    pub visibility_timeout: i32,
    /// On a FIFO queue, read past each message group's first ten messages: every message
    /// read is moved to the end of its own group (sent again, then deleted here; order
    /// kept, its first id and times kept in the `sqs-backpressure-origin` attribute).
    /// Without it, a FIFO read that could not see a whole group says so and exits 5.
    #[arg(long)]
    pub rotate_groups: bool,
    /// Seconds each receive waits for messages (1–20); one empty receive ends a scan.
    #[arg(long, allow_negative_numbers = true, default_value_t = 2, value_parser = clap::value_parser!(i32).range(1..=20))]
    pub wait_seconds: i32,
}

#[derive(Debug, Clone, Args)]
pub struct ReplayArgs {
    /// Send here instead of each record's source queue: a queue URL, ARN or name.
    #[arg(long)]
    pub to: Option<String>,
    /// At most this many messages (1 or more).
    #[arg(long, allow_negative_numbers = true, value_parser = at_least_one)]
    pub limit: Option<usize>,
    /// Messages per second, fractions included (0.2 is one every 5 s); unset, as fast as SQS takes them.
    #[arg(long, allow_negative_numbers = true, value_parser = positive_rate)]
    pub rate: Option<f64>,
    /// Replay this many first, wait `--canary-wait`, then read this whole queue for them:
    /// stop if any came back, or if the read could not see every message.
    #[arg(long, allow_negative_numbers = true, value_parser = canary_size)]
    pub canary: Option<u64>,
    /// Seconds to wait after the canary before checking (60, or 90s, 5m, 1h30m). Replaying a
    /// dead-letter queue: at least its queue's maxReceiveCount times its visibility timeout and
    /// 20 s, which is the default; a shorter wait is refused. Otherwise 60 by default.
    #[arg(long, allow_hyphen_values = true, value_parser = wait_seconds)]
    pub canary_wait: Option<u64>,
    /// Replay after the canary's wait even though it cannot tell whether the canary failed
    /// (a wait shorter than a failure takes to come back, or a queue whose failures go elsewhere).
    #[arg(long, requires = "canary")]
    pub canary_unproven: bool,
    /// Print what would be sent; send and delete nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Concurrent receive-send-delete loops (1–32).
    #[arg(long, allow_negative_numbers = true, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=32))]
    pub concurrency: u16,
}

/// What every command that changes a queue takes.
#[derive(Debug, Clone, Args)]
pub struct ChangeArgs {
    /// Do not ask for confirmation.
    #[arg(long)]
    pub yes: bool,
    /// The audit trail, one JSON line per message; a rerun with the same file resumes.
    #[arg(long, default_value = "sqs-backpressure-audit.jsonl")]
    pub audit: PathBuf,
}

/// `--rate`: a finite number of messages per second above 0, at least one a day.
fn positive_rate(value: &str) -> Result<f64, String> {
    let rate: f64 = value.parse().map_err(|_| format!("{value:?} is not a number"))?;
    if rate.is_finite() && rate >= 1.0 / 86_400.0 {
        Ok(rate)
    } else {
        Err(format!(
            "{value} is not a rate: give messages per second above 0 (0.2 is one every 5 s)"
        ))
    }
}

/// `--canary`: a count of messages, 1 or more.
fn canary_size(value: &str) -> Result<u64, String> {
    match value.parse::<i128>() {
        Ok(n) if n >= 1 => u64::try_from(n).map_err(|_| format!("{value} is too many")),
        Ok(_) => Err(format!("{value} is not a count of messages: give 1 or more")),
        Err(_) => Err(format!("{value:?} is not a whole number of 1 or more")),
    }
}

/// `--canary-wait`: whole seconds (`60`), or a duration as `--since` takes an
/// age (`90s`, `5m`, `1h30m`), up to a day.
fn wait_seconds(value: &str) -> Result<u64, String> {
    let seconds = match value.parse::<i128>() {
        Ok(seconds) => Some(seconds),
        Err(_) => value
            .parse::<jiff::SignedDuration>()
            .ok()
            .filter(|wait| wait.subsec_nanos() == 0)
            .map(|wait| i128::from(wait.as_secs())),
    };
    match seconds {
        Some(seconds @ 0..=86_400) => Ok(seconds as u64),
        Some(_) => Err(format!("{value} is not from 0 to 86400 seconds (a day)")),
        None => Err(format!(
            "{value:?} is not a wait: give whole seconds (60) or a duration (90s, 5m, 1h30m)"
        )),
    }
}

/// `--call-timeout`: whole seconds from 1 to 300.
fn seconds_up_to_300(value: &str) -> Result<u64, String> {
    match value.parse::<i128>() {
        Ok(n @ 1..=300) => Ok(n as u64),
        Ok(_) => Err(format!("{value} is not from 1 to 300 seconds")),
        Err(_) => Err(format!("{value:?} is not a whole number of seconds from 1 to 300")),
    }
}

/// `--limit`: a count of 1 or more (0 would do nothing, silently).
fn at_least_one(value: &str) -> Result<usize, String> {
    match value.parse::<usize>() {
        Ok(0) => Err("0 would act on nothing: give 1 or more, or leave --limit out".to_owned()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("{value:?} is not a whole number of 1 or more")),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_canary_wait_is_seconds_or_a_duration() {
        for (given, seconds) in [("60", 60), ("0", 0), ("2s", 2), ("5m", 300), ("1h30m", 5_400)] {
            assert_eq!(super::wait_seconds(given), Ok(seconds), "{given}");
        }
        for refused in ["soon", "-5s", "1.5s", "2d", "86401"] {
            assert!(super::wait_seconds(refused).is_err(), "{refused}");
        }
    }
}
