//! `stats`, `list`, `show` and `export`: reading without consuming.

use std::fs::OpenOptions;
use std::io::{BufWriter, Write};
use std::ops::ControlFlow;
use std::path::Path;

use jiff::Timestamp;

use crate::aws::queue::Queue;
use crate::commands::stats::{Stats, age_bucket};
use crate::reading::entry::Entry;
use crate::reading::filter::Filter;
use crate::reading::scan::{mover_for, scan};
use crate::reading::scanned::{Scanned, Shortfall};
use crate::terminal::error::CliError;
use crate::terminal::exit_status::Finish;
use crate::terminal::printable::printable;

/// Counts of the matching messages, printed as tables or one JSON document;
/// `identity` is the reader's ARN, or why STS would not name it.
pub async fn stats(
    queue: &Queue,
    filter: &Filter,
    json: bool,
    identity: Result<String, String>,
) -> Result<Finish, CliError> {
    let now = Timestamp::now();
    let mut stats = Stats::default();
    let mover = mover_for(queue).await?;
    let scanned = scan(queue, mover.as_ref(), |entry| {
        if filter.matches(&entry) {
            stats.add(&entry, now);
        }
        ControlFlow::Continue(())
    })
    .await?;
    let shortfall = scanned.shortfall(&queue.url);
    let out = if json {
        let mut value = serde_json::to_value(&stats).unwrap_or_default();
        value["read"] = scanned.read.into();
        value["queueCounted"] = scanned.counted.into();
        value["inFlight"] = scanned.in_flight.into();
        value["moved"] = scanned.moved.into();
        value["lapsed"] = scanned.lapsed.into();
        value["complete"] = shortfall.is_none().into();
        value["unread"] = shortfall.as_ref().map_or(0, |s| s.unread).into();
        match identity {
            Ok(arn) => value["readAs"] = arn.into(),
            Err(why) => {
                value["readAs"] = serde_json::Value::Null;
                value["readAsError"] = why.into();
            }
        }
        format!("{value}\n")
    } else {
        let identity =
            identity.unwrap_or_else(|why| format!("an identity STS would not name ({why})"));
        format!(
            "{}{}\n{}Read as {identity}.\n",
            headline(&scanned, shortfall.is_some(), None),
            stats.render(),
            closing(queue, &scanned)
        )
    };
    print(&out)?;
    Ok(finish(shortfall))
}

/// `export --out`, checked before any AWS call: a new file, in a folder that exists.
pub fn check_out(path: &Path) -> Result<(), CliError> {
    if path == Path::new("-") {
        return Ok(());
    }
    if path.exists() {
        return Err(CliError::Exists(path.to_owned()));
    }
    let folder = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if folder.is_dir() {
        return Ok(());
    }
    let missing = format!("{} is not a folder that exists", folder.display());
    Err(CliError::Out {
        path: path.to_owned(),
        source: std::io::Error::new(std::io::ErrorKind::NotFound, missing),
    })
}

/// The matching messages, one block (or one JSON line) each.
pub async fn list(
    queue: &Queue,
    filter: &Filter,
    limit: Option<usize>,
    json: bool,
) -> Result<Finish, CliError> {
    let now = Timestamp::now();
    let (mut out, mut shown) = (String::new(), 0);
    let limit = limit.unwrap_or(usize::MAX);
    let mover = mover_for(queue).await?;
    let scanned = scan(queue, mover.as_ref(), |entry| {
        if shown >= limit {
            return ControlFlow::Break(());
        }
        if filter.matches(&entry) {
            shown += 1;
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
    }
    print(&out)?;
    Ok(finish(shortfall))
}

/// One message in full, as pretty JSON.
pub async fn show(queue: &Queue, id: &str) -> Result<Finish, CliError> {
    let mut found = None;
    let mover = mover_for(queue).await?;
    let scanned = scan(queue, mover.as_ref(), |entry| {
        if entry.original_message_id == id || entry.queue_message_id == id {
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

/// Every matching message to a new JSON Lines file, written and synced
/// before the command reports success; nothing is removed from the queue.
/// The lines go to `FILE.partial` first: `FILE` appears only complete, and a
/// failed export leaves nothing that could pass for the evidence. An export
/// that could not read every message the queue counts is kept as
/// `FILE.incomplete`, never as `FILE`.
/// `-` writes to stdout instead, with nothing else on it.
pub async fn export(queue: &Queue, filter: &Filter, path: &Path) -> Result<Finish, CliError> {
    if path == Path::new("-") {
        let mut stdout = BufWriter::new(std::io::stdout().lock());
        let (written, scanned) = write_lines(queue, filter, &mut stdout, path).await?;
        stdout.flush().map_err(|e| CliError::file(path, e))?;
        eprint!("{} written to stdout. {}", written.describe(), footer(queue, &scanned));
        return Ok(written.finish(finish(scanned.shortfall(&queue.url))));
    }
    if path.exists() {
        return Err(CliError::Exists(path.to_owned()));
    }
    let with_suffix = |suffix: &str| {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        std::path::PathBuf::from(name)
    };
    let partial = with_suffix(".partial");
    // Created before any read: a folder that is not there is the user's to fix, named as given.
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&partial)
        .map_err(|source| CliError::Out { path: path.to_owned(), source })?;
    let outcome =
        write_export(queue, filter, file, &partial).await.and_then(|(written, scanned)| {
            let shortfall = scanned.shortfall(&queue.url);
            let name =
                if shortfall.is_some() { with_suffix(".incomplete") } else { path.to_owned() };
            if shortfall.is_some() {
                // An earlier short export of the same name is no evidence: this one replaces it.
                let _ = std::fs::remove_file(&name);
            }
            // A hard link never replaces a file that appeared meanwhile.
            std::fs::hard_link(&partial, &name).map_err(|e| CliError::file(&name, e))?;
            Ok((written, scanned, shortfall, name))
        });
    let _ = std::fs::remove_file(&partial);
    let (written, scanned, shortfall, name) = outcome?;
    eprint!("{} written to {}. {}", written.describe(), name.display(), footer(queue, &scanned));
    Ok(written.finish(finish(shortfall)))
}

/// What an export wrote: lines, and how many of them lack the body kept in S3.
#[derive(Debug, Default)]
struct Written {
    lines: usize,
    unreadable: usize,
}

impl Written {
    fn describe(&self) -> String {
        match self.unreadable {
            0 => format!("{} message(s)", self.lines),
            n => format!(
                "{} message(s), {n} of them without their body (kept in S3, and missing or \
                 altered: see each line's bodyProblem),",
                self.lines
            ),
        }
    }

    /// A missing body is a failure to export it, whatever the read's finish.
    fn finish(&self, read: Finish) -> Finish {
        match (self.unreadable, read) {
            (0, read) => read,
            (n, Finish::Done) => Finish::Unreadable(n as u64),
            (_, read) => read,
        }
    }
}

async fn write_export(
    queue: &Queue,
    filter: &Filter,
    file: std::fs::File,
    path: &Path,
) -> Result<(Written, Scanned), CliError> {
    let mut writer = BufWriter::new(file);
    let (written, scanned) = write_lines(queue, filter, &mut writer, path).await?;
    let file = writer.into_inner().map_err(|e| CliError::file(path, e.into_error()))?;
    file.sync_all().map_err(|e| CliError::file(path, e))?;
    Ok((written, scanned))
}

/// Every matching message as one JSON line to `writer` (`path` names it in errors).
async fn write_lines(
    queue: &Queue,
    filter: &Filter,
    writer: &mut impl Write,
    path: &Path,
) -> Result<(Written, Scanned), CliError> {
    let (mut written, mut failed) = (Written::default(), None);
    let mover = mover_for(queue).await?;
    let scanned = scan(queue, mover.as_ref(), |entry| {
        if filter.matches(&entry) {
            let line = entry.to_json().to_string();
            if let Err(error) = writeln!(writer, "{line}") {
                failed = Some(error);
                return ControlFlow::Break(());
            }
            written.lines += 1;
            written.unreadable += usize::from(entry.body_problem.is_some());
        }
        ControlFlow::Continue(())
    })
    .await?;
    if let Some(error) = failed {
        return Err(CliError::file(path, error));
    }
    Ok((written, scanned))
}

fn block(entry: &Entry, now: Timestamp) -> String {
    let field = |value: &Option<String>| printable(value.as_deref().unwrap_or("-"), 80);
    format!(
        "{id}  {code}  tenant={tenant} operation={operation} group={group} age={age}\n  \
         detail: {detail}\n  body: {body}\n",
        id = printable(&entry.original_message_id, 80),
        code = field(&entry.error_code),
        tenant = field(&entry.tenant_id),
        operation = field(&entry.operation),
        group = field(&entry.group_id),
        age = age_bucket(entry.at, now),
        detail = printable(entry.error_detail.as_deref().unwrap_or("-"), 300),
        body = match (&entry.body, &entry.body_object) {
            (Some(body), _) => printable(body, 300),
            (None, Some(object)) =>
                format!("({} bytes in {})", object.bytes, printable(&object.uri(), 200)),
            (None, None) => "-".to_owned(),
        },
    )
}

/// Prints what a read missed, and the finish it means.
fn finish(shortfall: Option<Shortfall>) -> Finish {
    if let Some(shortfall) = &shortfall {
        eprintln!("incomplete: {}.", shortfall.explanation);
    }
    shortfall.as_ref().map_or(Finish::Done, Shortfall::finish)
}

/// The first line a person reads: whether what follows covers every message
/// the queue counted, or stopped at `--limit` with more to come.
fn headline(scanned: &Scanned, incomplete: bool, stopped_at: Option<usize>) -> String {
    let (read, counted) = (scanned.read, scanned.counted);
    if let Some(limit) = stopped_at {
        format!(
            "Stopped at --limit {limit}, with more messages matching: {read} of the {counted} \
             message(s) the queue counted were read.\n"
        )
    } else if incomplete {
        format!(
            "INCOMPLETE: {read} of the {counted} message(s) the queue counted were read; what \
             follows covers only those (the last line says why).\n"
        )
    } else {
        format!("Complete: {read} message(s) read, every one the queue counted ({counted}).\n")
    }
}

fn footer(queue: &Queue, scanned: &Scanned) -> String {
    let text = format!(
        "Read {} of the {} message(s) {} counted{}",
        scanned.read,
        scanned.counted,
        queue.url,
        released(queue, scanned)
    );
    text + ".\n"
}

/// The last line of `stats` and `list`, whose first (`headline`) gave the counts.
fn closing(queue: &Queue, scanned: &Scanned) -> String {
    format!("Read from {}{}.\n", queue.url, released(queue, scanned))
}

/// What became of the messages a read held: moved, and visible again.
fn released(queue: &Queue, scanned: &Scanned) -> String {
    let moved = if scanned.moved > 0 {
        format!(", {} moved to the end of their group", scanned.moved)
    } else {
        String::new()
    };
    let mut text = format!("{moved}; all visible again");
    if scanned.not_released > 0 {
        text = format!(
            "{text} except {}, which SQS would not release (visible after {} s)",
            scanned.not_released, queue.lease
        );
    }
    text
}

fn print(text: &str) -> Result<(), CliError> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(|e| CliError::file(Path::new("<stdout>"), e))
}
