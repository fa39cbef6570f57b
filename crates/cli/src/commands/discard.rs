//! `discard`, and what it shares with `replay`: the operator's identity, the
//! count a prompt says, how the run ends, its summary.

use std::ops::ControlFlow;

use crate::args::ChangeArgs;
use crate::aws::queue::Queue;
use crate::changing::audit::Audit;
use crate::changing::pace::Pacer;
use crate::changing::sweep::{Action, Setup, Sweep, Tally};
use crate::commands::consent::{Matching, confirm, count_matching, require_consent, wants_count};
use crate::reading::filter::Filter;
use crate::reading::objects::Objects;
use crate::reading::scan::{mover_for, scan};
use crate::reading::scanned::{Scanned, Shortfall};
use crate::terminal::error::CliError;
use crate::terminal::exit_status::Finish;
use crate::terminal::printable::printable;
use crate::terminal::progress::bar;

/// Who is making the change, for the audit trail.
pub async fn operator(sts: &aws_sdk_sts::Client) -> Result<String, CliError> {
    let identity = sts
        .get_caller_identity()
        .send()
        .await
        .map_err(|e| CliError::Identity(Box::new(e.into())))?;
    Ok(identity.arn().unwrap_or("unknown").to_owned())
}

pub async fn discard(
    source: &Queue,
    objects: &Objects,
    filter: &Filter,
    limit: Option<usize>,
    change: &ChangeArgs,
    sts: &aws_sdk_sts::Client,
) -> Result<Finish, CliError> {
    require_consent(change.yes)?;
    let (visible, in_flight) = source.counts().await?;
    let operator = operator(sts).await?;
    let matching = matching_if_wanted(source, filter, change.yes).await?;
    let how_many = how_many(matching, limit);
    confirm(
        change.yes,
        &format!(
            "Delete {how_many} of {} for good, as {operator}; audit to {}. Export them first \
             (sqs-backpressure export).",
            source.url,
            change.audit.display()
        ),
    )?;
    let audit = Audit::open(&change.audit, &source.url)?;
    let pacer = Pacer::new(None)?;
    let mover = mover_for(source).await?;
    let total = matching.map_or(visible, |m| m.count);
    let progress = bar(limit.map_or(total, |l| total.min(l as u64)), "discarded");
    let setup = Setup {
        source,
        filter,
        action: Action::Discard,
        audit: Some(&audit),
        operator: &operator,
        pacer: &pacer,
        mover: mover.as_ref(),
        objects: Some(objects),
    };
    let sweep = Sweep::new(setup, limit.unwrap_or(usize::MAX), progress.clone())?;
    let (tally, outcome) = sweep.run(4).await;
    progress.finish_and_clear();
    summary(&tally, &audit, false);
    outcome?;
    finish(source, (visible, in_flight), &tally, false).await
}

/// The messages of `source` that `filter` matches, counted when there is a
/// prompt or a progress bar to say it ([`wants_count`]).
pub async fn matching_if_wanted(
    source: &Queue,
    filter: &Filter,
    yes: bool,
) -> Result<Option<Matching>, CliError> {
    if wants_count(yes) {
        Ok(Some(count_matching(&source.without_bodies(), filter).await?))
    } else {
        Ok(None)
    }
}

/// What a prompt says of the messages it acts on.
pub fn how_many(matching: Option<Matching>, limit: Option<usize>) -> String {
    match (matching, limit) {
        (Some(m), Some(limit)) => {
            format!("{} of the {} matching message(s)", m.count.min(limit as u64), m.describe())
        }
        (Some(m), None) => format!("{} matching message(s)", m.describe()),
        (None, Some(limit)) => format!("up to {limit} matching message(s)"),
        (None, None) => "every matching message".to_owned(),
    }
}

/// Said by a dry run given `--rotate-groups`, which it cannot honour.
pub const DRY_RUN_MOVES_NOTHING: &str = "a dry run moves nothing, so --rotate-groups does not apply to \
     it: on a FIFO queue it sees each group's first messages only; the replay or discard itself \
     moves them";

/// What `discard` would delete, printed one line each; nothing is changed
/// and no audit file is written.
pub async fn discard_dry_run(
    source: &Queue,
    filter: &Filter,
    limit: Option<usize>,
) -> Result<Finish, CliError> {
    let limit = limit.unwrap_or(usize::MAX);
    let (mut would, mut not_matching) = (0, 0);
    let scanned = scan(source, None, |entry| {
        if !filter.matches(&entry) {
            not_matching += 1;
        } else if would < limit {
            would += 1;
            println!(
                "would delete {id} ({code}, {bytes} bytes)",
                id = printable(&entry.original_message_id, 80),
                code = printable(entry.error_code.as_deref().unwrap_or("raw message"), 80),
                bytes = entry
                    .body_object
                    .as_ref()
                    .map_or_else(|| entry.body.as_deref().map_or(0, str::len), |o| o.bytes),
            );
        }
        ControlFlow::Continue(())
    })
    .await?;
    eprintln!(
        "dry run: {would} message(s) of {} would be deleted; {not_matching} not matching; nothing \
         was changed",
        source.url
    );
    if source.moves_groups() {
        eprintln!("{DRY_RUN_MOVES_NOTHING}");
    }
    let shortfall = scanned.shortfall(&source.url);
    if let Some(shortfall) = &shortfall {
        eprintln!("incomplete: {}.", shortfall.explanation);
    }
    Ok(shortfall.as_ref().map_or(Finish::Done, Shortfall::finish))
}

/// How a sweep of `source` ends that started with `at_start` (visible, in
/// flight) messages: failures first, then messages in flight, then messages
/// it could not reach. Exit 0 means every message the queue counted, in
/// flight at the start included, was read.
pub async fn finish(
    source: &Queue,
    at_start: (u64, u64),
    tally: &Tally,
    dry_run: bool,
) -> Result<Finish, CliError> {
    let (counted, in_flight_at_start) = at_start;
    // Every shortfall is said, whichever decides the exit code: a run with
    // failures may also have left messages it never reached.
    let (_, in_flight, timeout) = source.counts_and_timeout().await?;
    let read: u64 = tally.seen.values().map(|&n| n as u64).sum();
    let unseen_from_start = if tally.limited {
        0
    } else {
        (counted + in_flight_at_start).saturating_sub(read).min(in_flight_at_start)
    };
    let mut incomplete = None;
    let shortfall = if in_flight > 0 {
        eprintln!(
            "{in_flight} message(s) of {} are in flight (held by a consumer, or by an interrupted \
             run) and were not seen: run the same command again once they are visible, {}",
            source.url,
            source.when_visible(timeout)
        );
        incomplete = Some(in_flight);
        None
    } else if unseen_from_start > 0 {
        eprintln!(
            "{unseen_from_start} of the {in_flight_at_start} message(s) of {} that were in flight \
             when this run started (held by a consumer, or by an interrupted run) were not seen: \
             they may be visible now; run the same command again (they are visible again {})",
            source.url,
            source.when_visible(timeout)
        );
        incomplete = Some(unseen_from_start);
        None
    } else {
        unread(source, counted, read, tally)
    };
    if let Some(shortfall) = &shortfall {
        eprintln!("incomplete: {}.", shortfall.explanation);
    }
    Ok(if tally.failed > 0 {
        Finish::Failures { count: tally.failed, dry_run }
    } else if let Some(unseen) = incomplete {
        Finish::Incomplete(unseen)
    } else {
        shortfall.as_ref().map_or(Finish::Done, Shortfall::finish)
    })
}

/// What the sweeps that left `tally`, having read `read` of the `counted`
/// messages of `source`, missed, said as a scan says it.
fn unread(source: &Queue, counted: u64, read: u64, tally: &Tally) -> Option<Shortfall> {
    let scanned = Scanned {
        read: read as usize,
        counted,
        groups: tally.seen.clone(),
        moved: tally.moved as usize,
        stuck: tally.stuck.clone(),
        stopped_early: tally.limited,
        lapsed: tally.lapsed,
        lease: source.lease,
        ..Scanned::default()
    };
    scanned.shortfall(&source.url)
}

/// The last line of a change: its counts and its audit file.
pub fn summary(tally: &Tally, audit: &Audit, replay: bool) {
    let done = if replay {
        format!(
            "replayed={} deleted_on_resume={} duplicates={}",
            tally.replayed, tally.deleted_on_resume, tally.duplicates
        )
    } else {
        format!("discarded={}", tally.discarded)
    };
    eprintln!(
        "{done} failed={} not_matching={} moved={} audit={}",
        tally.failed,
        tally.not_matching,
        tally.moved,
        audit.path().display()
    );
    if tally.sent_not_on_record > 0 {
        eprintln!(
            "sent_not_on_record={}: SQS accepted them, but their audit lines could not be \
             written, so they are still on this queue and a rerun sends them again",
            tally.sent_not_on_record
        );
    }
}
