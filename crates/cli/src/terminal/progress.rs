//! What a person sees while a command works: the progress bars every long
//! read and change draws on a terminal, and rates written for a person.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressState, ProgressStyle};

/// A progress bar on stderr when it is a terminal (hidden otherwise, so
/// nothing is drawn into a pipe): done so far of `total`, rate, time left.
pub(crate) fn bar(total: u64, verb: &str) -> ProgressBar {
    paced_bar(total, verb, None)
}

/// [`bar`] for work paced at `rate` messages a second (`--rate`): the rate
/// shown is never above it, and the time left follows from it, so a fast
/// first batch does not promise what the pace will not deliver.
pub(crate) fn paced_bar(total: u64, verb: &str, rate: Option<f64>) -> ProgressBar {
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
    crate::terminal::logging::attach(&bar);
    bar
}

/// A rate for a person: at most one decimal, none when it is whole.
pub(crate) fn one_decimal(rate: f64) -> String {
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
