//! `discard`: the matching records deleted for good, each on record in the
//! audit trail; or, as a dry run, only listed.

use std::ops::ControlFlow;

use crate::args::ChangeArgs;
use crate::aws::identity::operator;
use crate::aws::queue::Queue;
use crate::changing::audit::Audit;
use crate::changing::pace::Pacer;
use crate::changing::sweep::{Action, Setup, Sweep};
use crate::commands::change_report::{DRY_RUN_MOVES_NOTHING, finish, summary};
use crate::commands::consent::{confirm, how_many, matching_if_wanted, require_consent};
use crate::reading::filter::Filter;
use crate::reading::objects::Objects;
use crate::reading::scan::{mover_for, scan};
use crate::reading::scanned::Shortfall;
use crate::terminal::error::CliError;
use crate::terminal::exit_status::Finish;
use crate::terminal::printable::printable;
use crate::terminal::progress::bar;

/// Deletes what `filter` matches on `source`, at most `limit`, once the
/// operator confirmed (or gave `--yes`).
pub(crate) async fn discard(
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

/// What `discard` would delete, printed one line each; nothing is changed
/// and no audit file is written.
pub(crate) async fn discard_dry_run(
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
