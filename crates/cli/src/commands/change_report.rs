//! How a change ends: its last line (counts and audit file), what it could
//! not reach, and the exit status that follows.

use crate::aws::queue::Queue;
use crate::changing::audit::Audit;
use crate::changing::sweep::Tally;
use crate::reading::scanned::{Scanned, Shortfall};
use crate::terminal::error::CliError;
use crate::terminal::exit_status::Finish;

/// Said by a dry run given `--rotate-groups`, which it cannot honour.
pub(crate) const DRY_RUN_MOVES_NOTHING: &str = "a dry run moves nothing, so --rotate-groups does not apply to \
     it: on a FIFO queue it sees each group's first messages only; the replay or discard itself \
     moves them";

/// How a sweep of `source` ends that started with `at_start` (visible, in
/// flight) messages: failures first, then messages in flight, then messages
/// it could not reach. Exit 0 means every message the queue counted, in
/// flight at the start included, was read.
pub(crate) async fn finish(
    source: &Queue,
    at_start: (u64, u64),
    tally: &Tally,
    dry_run: bool,
) -> Result<Finish, CliError> {
    let (counted, in_flight_at_start) = at_start;
    // Every shortfall is said, whichever decides the exit code: a run with
    // failures may also have left messages it never reached.
    let state = source.state().await?;
    let (in_flight, timeout) = (state.in_flight, state.timeout);
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
pub(crate) fn summary(tally: &Tally, audit: &Audit, replay: bool) {
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
