//! `list` and `show`: the matching records, one block (or one JSON line)
//! each, and one record in full; reading without consuming.

use std::ops::ControlFlow;

use jiff::Timestamp;

use crate::aws::queue::Queue;
use crate::commands::read_report::{closing, finish, headline, print};
use crate::commands::stats::age_bucket;
use crate::reading::entry::Entry;
use crate::reading::filter::Filter;
use crate::reading::scan::{mover_for, scan};
use crate::terminal::error::CliError;
use crate::terminal::exit_status::Finish;
use crate::terminal::printable::printable;

/// The matching messages, one block (or one JSON line) each.
pub(crate) async fn list(
    queue: &Queue,
    filter: &Filter,
    limit: Option<usize>,
    json: bool,
) -> Result<Finish, CliError> {
    let now = Timestamp::now();
    let (mut out, mut shown, mut untenanted) = (String::new(), 0, 0);
    let limit = limit.unwrap_or(usize::MAX);
    let mover = mover_for(queue).await?;
    let scanned = scan(queue, mover.as_ref(), |entry| {
        if shown >= limit {
            return ControlFlow::Break(());
        }
        if filter.matches(&entry) {
            shown += 1;
            untenanted += usize::from(entry.tenant_id.is_none());
            if json {
                out.push_str(&entry.to_json().to_string());
                out.push('\n');
            } else {
                out.push_str(&block(&entry, now));
            }
        }
        ControlFlow::Continue(())
    })
    .await?;
    let shortfall = scanned.shortfall(&queue.url);
    // The scan breaks on the first match past the limit, so a stop there means more matched.
    let stopped_at = (scanned.stopped_early && shown >= limit).then_some(limit);
    if json {
        if let Some(limit) = stopped_at {
            eprintln!("stopped at --limit {limit}: more messages match");
        }
    } else {
        let head = headline(&scanned, shortfall.is_some(), stopped_at);
        out = format!("{head}{out}{shown} shown. {}", closing(queue, &scanned));
        if untenanted > 0 {
            out.push_str(&no_tenant(untenanted, queue));
        }
    }
    print(&out)?;
    Ok(finish(shortfall))
}

/// Where the tenant of the messages shown with none would have come from.
fn no_tenant(untenanted: usize, queue: &Queue) -> String {
    match &queue.fields.tenant {
        Some(selector) => format!(
            "{untenanted} shown with no tenant: none at {selector} (--tenant-from) in them.\n"
        ),
        None => format!(
            "{untenanted} shown with no tenant: a quarantine record's tenant is the tenantId its \
             consumer wrote (its TENANT_FROM, or the body type's tenant_id), and other messages \
             name none; --tenant-from /json/pointer (or attribute:NAME) reads one from each \
             message instead.\n"
        ),
    }
}

/// One message in full, as pretty JSON.
pub(crate) async fn show(queue: &Queue, id: &str) -> Result<Finish, CliError> {
    let mut found = None;
    let mover = mover_for(queue).await?;
    let scanned = scan(queue, mover.as_ref(), |entry| {
        let envelope_id = entry.inside.as_ref().and_then(|inside| inside.envelope_id.as_deref());
        if entry.original_message_id == id
            || entry.queue_message_id == id
            || envelope_id == Some(id)
        {
            found = Some(entry);
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    })
    .await?;
    let Some(entry) = found else {
        return match scanned.shortfall(&queue.url) {
            // Not found in what could be read: it may be among what could not.
            Some(shortfall) => {
                eprintln!("no message with id {id} among those read; {}", shortfall.explanation);
                Ok(shortfall.finish())
            }
            None => Err(CliError::NotFound(id.to_owned(), queue.url.clone())),
        };
    };
    let text = serde_json::to_string_pretty(&entry.to_json()).unwrap_or_default();
    print(&format!("{text}\n"))?;
    if let Some(problem) = &entry.body_problem {
        eprintln!("the body kept in S3 could not be had: {problem}");
        return Ok(Finish::Unreadable(1));
    }
    Ok(Finish::Done)
}

fn block(entry: &Entry, now: Timestamp) -> String {
    let field = |value: &Option<String>| printable(value.as_deref().unwrap_or("-"), 80);
    // Inside an envelope (given or detected, and said), the message as published is what an
    // operator reads; `show` and `export` keep the body as delivered beside it.
    let (what, text) = match (&entry.inside, &entry.body, &entry.body_object) {
        (Some(inside), _, _) => ("message", printable(&inside.payload, 300)),
        (None, Some(body), _) => ("body", printable(body, 300)),
        (None, None, Some(object)) => {
            ("body", format!("({} bytes in {})", object.bytes, printable(&object.uri(), 200)))
        }
        (None, None, None) => ("body", "-".to_owned()),
    };
    let envelope = entry.envelope.map(|e| format!(" envelope={e}")).unwrap_or_default();
    format!(
        "{id}  {code}  tenant={tenant} operation={operation} group={group} age={age}{envelope}\n  \
         detail: {detail}\n  {what}: {text}\n",
        id = printable(&entry.original_message_id, 80),
        code = field(&entry.error_code),
        tenant = field(&entry.tenant_id),
        operation = field(&entry.operation),
        group = field(&entry.group_id),
        age = age_bucket(entry.at, now),
        detail = printable(entry.error_detail.as_deref().unwrap_or("-"), 300),
    )
}
