//! `export`: every matching record to a new JSON Lines file (or stdout),
//! bodies and attributes byte for byte; nothing is removed from the queue.

use std::fs::OpenOptions;
use std::io::{BufWriter, Write};
use std::ops::ControlFlow;
use std::path::Path;

use crate::aws::queue::Queue;
use crate::commands::read_report::{finish, released};
use crate::reading::filter::Filter;
use crate::reading::scan::{mover_for, scan};
use crate::reading::scanned::Scanned;
use crate::terminal::error::CliError;
use crate::terminal::exit_status::Finish;

/// `export --out`, checked before any AWS call: a new file, in a folder that exists.
pub(crate) fn check_out(path: &Path) -> Result<(), CliError> {
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

/// Every matching message to a new JSON Lines file, written and synced
/// before the command reports success; nothing is removed from the queue.
/// The lines go to `FILE.partial` first: `FILE` appears only complete, and a
/// failed export leaves nothing that could pass for the evidence. An export
/// that could not read every message the queue counts is kept as
/// `FILE.incomplete`, never as `FILE`.
/// `-` writes to stdout instead, with nothing else on it.
pub(crate) async fn export(
    queue: &Queue,
    filter: &Filter,
    path: &Path,
) -> Result<Finish, CliError> {
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
