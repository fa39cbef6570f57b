//! Before a change: who asks (a terminal, or `--yes`), how many messages
//! match (counted by a read, so the prompt and the progress bar say it), the
//! prompt itself, and the bars every long read and change draws on a terminal.

use std::io::{BufRead, IsTerminal, Write};
use std::ops::ControlFlow;

use std::time::Duration;

use indicatif::{ProgressBar, ProgressState, ProgressStyle};

use crate::error::CliError;
use crate::filter::Filter;
use crate::queue::Queue;
use crate::scan::scan;

/// Without `--yes`, a change needs a terminal to ask on: checked before any call.
pub fn require_consent(yes: bool) -> Result<(), CliError> {
    if yes || std::io::stdin().is_terminal() { Ok(()) } else { Err(CliError::NoTerminal) }
}

/// Whether a count of the matching messages is worth a read: there is a
/// prompt to put it in, or a bar to draw it on.
pub fn wants_count(yes: bool) -> bool {
    !yes || std::io::stderr().is_terminal()
}

/// How many messages match, as a read saw them: `complete` is false when the
/// read could not see the whole queue (the count is then a lower bound).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Matching {
    pub count: u64,
    pub complete: bool,
}

impl Matching {
    /// `N` or `at least N`.
    pub fn describe(self) -> String {
        if self.complete { self.count.to_string() } else { format!("at least {}", self.count) }
    }
}

/// Reads the queue (without moving anything) and counts what `filter` matches.
pub async fn count_matching(queue: &Queue, filter: &Filter) -> Result<Matching, CliError> {
    let mut count = 0;
    let scanned = scan(queue, None, |entry| {
        count += u64::from(filter.matches(&entry));
        ControlFlow::Continue(())
    })
    .await?;
    Ok(Matching { count, complete: scanned.shortfall(&queue.url).is_none() })
}

/// Prints `plan`, then asks on the terminal unless `yes`.
pub fn confirm(yes: bool, plan: &str) -> Result<(), CliError> {
    eprintln!("{plan}");
    if yes {
        return Ok(());
    }
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return Err(CliError::NoTerminal);
    }
    eprint!("Type yes to go on: ");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    stdin.lock().read_line(&mut answer).map_err(|e| CliError::file("<stdin>".as_ref(), e))?;
    if answer.trim().eq_ignore_ascii_case("yes") { Ok(()) } else { Err(CliError::NotConfirmed) }
}

/// A progress bar on stderr when it is a terminal (hidden otherwise, so
/// nothing is drawn into a pipe): done so far of `total`, rate, time left.
pub fn bar(total: u64, verb: &str) -> ProgressBar {
    paced_bar(total, verb, None)
}

/// [`bar`] for work paced at `rate` messages a second (`--rate`): the rate
/// shown is never above it, and the time left follows from it, so a fast
/// first batch does not promise what the pace will not deliver.
pub fn paced_bar(total: u64, verb: &str, rate: Option<f64>) -> ProgressBar {
    let bar = if std::io::stderr().is_terminal() {
        ProgressBar::new(total)
    } else {
        ProgressBar::hidden()
    };
    let pace = move |state: &ProgressState| {
        let measured = state.per_sec();
        match rate {
            Some(rate) if !measured.is_finite() || measured > rate => rate,
            _ => measured,
        }
    };
    if let Ok(style) = ProgressStyle::with_template(&format!(
        "{{bar:40}} {{pos}}/{{len}} {verb} ({{rate}}, {{left}} left)"
    )) {
        let style = style
            .with_key("rate", move |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = w.write_fmt(format_args!("{}/s", one_decimal(pace(state))));
            })
            .with_key("left", move |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                let remaining = state.len().unwrap_or(0).saturating_sub(state.pos());
                let per_sec = pace(state);
                let seconds =
                    if per_sec > 0.0 { (remaining as f64 / per_sec).ceil() as u64 } else { 0 };
                let left = indicatif::HumanDuration(Duration::from_secs(seconds));
                let _ = w.write_fmt(format_args!("{left}"));
            });
        bar.set_style(style);
    }
    crate::logging::attach(&bar);
    bar
}

/// A rate for a person: at most one decimal, none when it is whole.
pub fn one_decimal(rate: f64) -> String {
    let rounded = (rate * 10.0).round() / 10.0;
    if rounded.fract() == 0.0 { format!("{rounded:.0}") } else { format!("{rounded:.1}") }
}

#[cfg(test)]
mod tests {
    use super::one_decimal;

    #[test]
    fn rates_have_at_most_one_decimal() {
        assert_eq!(one_decimal(10.7508), "10.8");
        assert_eq!(one_decimal(0.5), "0.5");
        assert_eq!(one_decimal(3.0), "3");
        assert_eq!(one_decimal(0.04), "0");
    }
}
