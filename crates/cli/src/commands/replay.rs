//! `replay`: a dry run, or the canary first (replayed, waited for, looked for
//! on the source queue), then the rest.

use std::collections::{BTreeMap, HashSet};
use std::ops::ControlFlow;
use std::time::Duration;

use indicatif::ProgressBar;

use crate::args::{ChangeArgs, ReplayArgs};
use crate::aws::connect::Clients;
use crate::aws::identity::operator;
use crate::aws::queue::Queue;
use crate::changing::audit::Audit;
use crate::changing::canary_wait;
use crate::changing::destination::Destinations;
use crate::changing::pace::Pacer;
use crate::changing::sweep::{Action, Setup, Sweep, Tally};
use crate::commands::change_report::{DRY_RUN_MOVES_NOTHING, finish, summary};
use crate::commands::consent::{Matching, confirm, how_many, matching_if_wanted, require_consent};
use crate::reading::filter::Filter;
use crate::reading::objects::Objects;
use crate::reading::scan::{mover_for, scan};
use crate::reading::scanned::Shortfall;
use crate::terminal::error::CliError;
use crate::terminal::exit_status::Finish;
use crate::terminal::interrupt;
use crate::terminal::progress::{bar, paced_bar};

/// Replays what `filter` matches on `source` to `--to`, or to each message's source queue.
pub(crate) async fn replay(
    source: &Queue,
    objects: &Objects,
    filter: &Filter,
    args: &ReplayArgs,
    change: &ChangeArgs,
    clients: &Clients,
) -> Result<Finish, CliError> {
    if !args.dry_run {
        require_consent(change.yes)?;
    }
    let pacer = Pacer::new(args.rate)?;
    let at_start = source.counts().await?;
    let destinations = Destinations::new(source, args.to.clone()).await;
    if args.dry_run {
        let setup = Setup {
            source,
            filter,
            action: Action::Replay { destinations: &destinations, dry_run: true },
            audit: None,
            operator: "dry-run",
            pacer: &pacer,
            mover: None,
            objects: None,
        };
        return dry_run(setup, args, at_start).await;
    }
    let canary_wait = match (args.canary, destinations.known_before_reading()) {
        (None, _) => (0, true),
        (Some(_), target) => {
            let known = match &target {
                Some(target) => {
                    let (wait, note) = canary_wait::read(target, source, &clients.lambda).await?;
                    if let Some(note) = note {
                        eprintln!("{note}");
                    }
                    Some(wait)
                }
                None => None,
            };
            canary_wait::decide(known, args.canary_wait, args.canary_unproven)?
        }
    };
    let mover = mover_for(source).await?;
    let operator = operator(&clients.sts).await?;
    let matching = matching_if_wanted(source, filter, change.yes).await?;
    confirm(change.yes, &plan(source, args, change, matching, &operator))?;
    let audit = Audit::open(&change.audit, &source.url)?;
    let to_replay = matching.map_or(at_start.0, |m| m.count);
    let progress =
        paced_bar(args.limit.map_or(to_replay, |l| to_replay.min(l as u64)), "replayed", args.rate);
    let setup = Setup {
        source,
        filter,
        action: Action::Replay { destinations: &destinations, dry_run: false },
        audit: Some(&audit),
        operator: &operator,
        pacer: &pacer,
        mover: mover.as_ref(),
        objects: Some(objects),
    };
    Replaying::new(setup, args, &audit, progress, canary_wait).run(at_start).await
}

/// Where the replayed messages go, for a person.
fn target(args: &ReplayArgs) -> &str {
    args.to.as_deref().unwrap_or("each message's source queue")
}

/// What the prompt says a replay will do.
fn plan(
    source: &Queue,
    args: &ReplayArgs,
    change: &ChangeArgs,
    matching: Option<Matching>,
    operator: &str,
) -> String {
    let rate =
        args.rate.map_or("as fast as SQS accepts".to_owned(), |r| format!("{r} message(s)/s"));
    format!(
        "Replay {} of {} to {}, {rate}{}, as {operator}; audit to {}.",
        how_many(matching, args.limit),
        source.url,
        target(args),
        args.canary.map(|n| format!(", canary of {n} first")).unwrap_or_default(),
        change.audit.display()
    )
}

/// Counts what a replay would send and delete; changes nothing. `at_start`:
/// the source's visible and in-flight messages.
async fn dry_run(
    setup: Setup<'_>,
    args: &ReplayArgs,
    at_start: (u64, u64),
) -> Result<Finish, CliError> {
    let source = setup.source;
    let progress = bar(at_start.0, "checked");
    let sweep = Sweep::new(setup, args.limit.unwrap_or(usize::MAX), progress.clone())?;
    let (tally, outcome) = sweep.run(1).await;
    progress.finish_and_clear();
    outcome?;
    eprintln!(
        "dry run: {} message(s) would be sent to {}; {} duplicate record(s) would be deleted \
         unsent; {} not matching; nothing was changed",
        tally.would_send,
        target(args),
        tally.duplicates,
        tally.not_matching
    );
    if source.moves_groups() {
        eprintln!("{DRY_RUN_MOVES_NOTHING}");
    }
    finish(source, at_start, &tally, true).await
}

/// A confirmed replay: what its sweeps work with, and what they did so far.
#[derive(Debug)]
struct Replaying<'a> {
    setup: Setup<'a>,
    args: &'a ReplayArgs,
    audit: &'a Audit,
    progress: ProgressBar,
    /// Matching messages still to replay (`--limit`).
    remaining: usize,
    /// Messages the canary took off the source queue.
    removed_by_canary: u64,
    total: Tally,
    /// Seconds the canary waits, and whether a check after them can tell.
    canary_wait: (u64, bool),
}

impl<'a> Replaying<'a> {
    fn new(
        setup: Setup<'a>,
        args: &'a ReplayArgs,
        audit: &'a Audit,
        progress: ProgressBar,
        canary_wait: (u64, bool),
    ) -> Self {
        let remaining = args.limit.unwrap_or(usize::MAX);
        Self {
            setup,
            args,
            audit,
            progress,
            remaining,
            removed_by_canary: 0,
            total: Tally::default(),
            canary_wait,
        }
    }

    /// The canary when one is asked for, then the rest. `at_start`: the
    /// source's visible and in-flight messages.
    async fn run(mut self, at_start: (u64, u64)) -> Result<Finish, CliError> {
        if let Some(size) = self.args.canary
            && let ControlFlow::Break(stopped) = self.canary(size).await?
        {
            return Ok(stopped);
        }
        self.rest().await?;
        self.say_done();
        let (visible, in_flight) = at_start;
        let left = (visible.saturating_sub(self.removed_by_canary), in_flight);
        finish(self.setup.source, left, &self.total, false).await
    }

    /// Replays `size` messages, waits `--canary-wait`, then reads the source
    /// for them: `Break` when any came back, or when the read could not see
    /// the whole queue. A signal ends it with what the canary did so far.
    async fn canary(&mut self, size: u64) -> Result<ControlFlow<Finish>, CliError> {
        let size = usize::try_from(size).unwrap_or(usize::MAX);
        let sweep = Sweep::new(self.setup, size.min(self.remaining), self.progress.clone())?
            .keeping_new_ids();
        let (tally, outcome) = sweep.run(1).await;
        self.total.add(&tally);
        self.remaining = self.remaining.saturating_sub(tally.replayed as usize);
        self.removed_by_canary = tally.replayed + tally.deleted_on_resume;
        let source = self.setup.source;
        if let Err(error) = outcome {
            return Err(self.stopped_in_canary(error, Stage::Sending, tally.replayed));
        }
        if tally.replayed == 0 {
            return Ok(ControlFlow::Continue(()));
        }
        let (wait, tells) = self.canary_wait;
        self.progress.suspend(|| {
            eprintln!(
                "canary: {} message(s) replayed; checking {} for them in {wait} s",
                tally.replayed, source.url
            );
        });
        tokio::select! {
            () = tokio::time::sleep(Duration::from_secs(wait)) => {}
            () = interrupt::wait() => {
                let error = CliError::interrupted(0, &Ok(0), source.lease);
                return Err(self.stopped_in_canary(error, Stage::Waiting, tally.replayed));
            }
        }
        let checked = came_back(&source.without_bodies(), &tally.new_message_ids).await;
        let (back, shortfall) = match checked {
            Ok(found) => found,
            Err(error) => {
                return Err(self.stopped_in_canary(error, Stage::Reading, tally.replayed));
            }
        };
        if back.is_empty() && shortfall.is_none() {
            // A signal during the read's last receive leaves the read whole:
            // the canary's answer stands, but the rest is not replayed.
            if interrupt::requested() {
                let error = CliError::interrupted(0, &Ok(0), source.lease);
                return Err(self.stopped_in_canary(error, Stage::Checked, tally.replayed));
            }
            self.progress.suspend(|| {
                if tells {
                    eprintln!("canary passed: none came back; replaying the rest");
                } else {
                    eprintln!(
                        "canary unproven: none came back within {wait} s, which proves nothing \
                         (--canary-unproven); replaying the rest"
                    );
                }
            });
            return Ok(ControlFlow::Continue(()));
        }
        self.progress.finish_and_clear();
        say_canary_stopped(&back, shortfall, tally.replayed, &source.url);
        summary(&self.total, self.audit, true);
        Ok(ControlFlow::Break(Finish::CanaryStopped))
    }

    /// Says where a signal (or a failure) stopped the canary, and what was
    /// done, before `error` is said; returns `error`.
    fn stopped_in_canary(&self, error: CliError, stage: Stage, replayed: u64) -> CliError {
        if error.is_interrupted() {
            let url = &self.setup.source.url;
            self.progress.suspend(|| eprintln!("{}", stage.interrupted(replayed, url)));
        }
        // What it did before the error is on the queue and in the audit: said all the same.
        self.say_done();
        error
    }

    /// Replays what the canary left, `--concurrency` sweeps at once.
    async fn rest(&mut self) -> Result<(), CliError> {
        if self.remaining == 0 {
            return Ok(());
        }
        let sweep = Sweep::new(self.setup, self.remaining, self.progress.clone())?;
        let (tally, outcome) = sweep.run(usize::from(self.args.concurrency)).await;
        self.total.add(&tally);
        if outcome.is_err() {
            // What it did before the error is on the queue and in the audit: said all the same.
            self.say_done();
        }
        outcome
    }

    fn say_done(&self) {
        self.progress.finish_and_clear();
        summary(&self.total, self.audit, true);
    }
}

/// Where in the canary a signal came.
#[derive(Debug, Clone, Copy)]
enum Stage {
    Sending,
    Waiting,
    Reading,
    /// After a whole read found none of them back.
    Checked,
}

impl Stage {
    /// What is true of the canary when a signal stopped it here, having
    /// replayed `replayed` messages from `url`.
    fn interrupted(self, replayed: u64, url: &str) -> String {
        let what = match self {
            Self::Sending => format!("while sending: {replayed} message(s) replayed, not checked"),
            Self::Waiting => {
                format!("during its wait: {replayed} message(s) replayed, not checked")
            }
            Self::Reading => {
                format!("while reading {url}: {replayed} message(s) replayed, not checked")
            }
            Self::Checked => format!(
                "after its check: none of the {replayed} replayed message(s) came back to {url}"
            ),
        };
        format!("canary interrupted {what}; nothing more was replayed")
    }
}

/// Why the canary stopped the replay: `back` counts the replayed messages
/// that came back to `url` by error code; empty, the read could not tell.
fn say_canary_stopped(
    back: &BTreeMap<String, u64>,
    shortfall: Option<Shortfall>,
    replayed: u64,
    url: &str,
) {
    if back.is_empty() {
        eprintln!(
            "canary not checked: {}. Stopped, nothing more was replayed: a canary passes only \
             when the whole queue was read.",
            shortfall.map(|s| s.explanation).unwrap_or_default()
        );
        return;
    }
    let codes: Vec<String> = back.iter().map(|(code, n)| format!("{code} ×{n}")).collect();
    eprintln!(
        "canary failed: {} of {replayed} replayed message(s) came back to {url} ({}); stopped, \
         nothing more was replayed. Fix the cause, then run the same command again.",
        back.values().sum::<u64>(),
        codes.join(", ")
    );
}

/// Error codes of the records (or ids of the raw messages) among `new_ids`
/// found on `queue`, counted, and what the read could not see: a message not
/// read may be one that came back.
async fn came_back(
    queue: &Queue,
    new_ids: &[String],
) -> Result<(BTreeMap<String, u64>, Option<Shortfall>), CliError> {
    let wanted: HashSet<&str> = new_ids.iter().map(String::as_str).collect();
    let mut back = BTreeMap::new();
    let mover = mover_for(queue).await?;
    let scanned = scan(queue, mover.as_ref(), |entry| {
        if wanted.contains(entry.original_message_id.as_str()) {
            *back.entry(entry.error_code.unwrap_or_else(|| "dead-lettered".into())).or_default() +=
                1;
        }
        ControlFlow::Continue(())
    })
    .await?;
    Ok((back, scanned.shortfall(&queue.url)))
}

#[cfg(test)]
mod tests {
    use super::Stage;

    /// Wherever a signal stops the canary, what is said is what it did: never
    /// that it passed, or that the rest is being replayed.
    #[test]
    fn a_signal_in_the_canary_says_what_was_done_and_no_more() {
        let url = "https://sqs.eu-west-1.amazonaws.com/123456789012/orders-quarantine";
        let said = [Stage::Sending, Stage::Waiting, Stage::Reading, Stage::Checked]
            .map(|stage| stage.interrupted(2, url));
        for line in &said {
            assert!(!line.contains("passed") && !line.contains("replaying the rest"), "{line}");
        }
        insta::assert_snapshot!(said.join("\n"));
    }
}
