//! The overview: every run of a picture at one glance, in a fixed 1200 × 800
//! however many runs it has. The trace's arrivals on top, then one strip per
//! run of its tasks (running as an area, desired as a line) with its late
//! minutes shaded, all on one tasks scale and one clock, labelled once at the
//! bottom. Tasks share a scale here, unlike in the detail picture, because
//! they are bounded by `MaxTasks`: one scale lets heights compare by eye.
//! Each run's backlog, metric and wait are the detail picture's ([`super::write`]).

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::panels::{clock, labelled, ticks};
use super::{ARRIVALS, DESIRED, Drawn, Frame, LATE, Panel, PlotError, RUNNING, Words, boxed};
use crate::stats::Outcome;

/// The overview's size in pixels, whatever the number of runs.
pub const SIZE: (u32, u32) = (1_200, 800);
const LEGEND: u32 = 28;
const ARRIVALS_STRIP: u32 = 90;
/// Under the last strip: the clock's labels.
const CLOCK: u32 = 26;
/// A run's strip is never drawn lower than this: past it, fewer runs a picture.
const MIN_RUN: u32 = 40;
/// The labels' column: as wide as the widest label, within these bounds.
const LABEL_WIDTH: (u32, u32) = (180, 440);
const Y_AXIS: u32 = 40;
const GRID: RGBColor = RGBColor(225, 225, 225);

/// The heights of the rows under the title, pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Rows {
    legend: u32,
    arrivals: u32,
    /// Each run's strip (the last adds [`CLOCK`] for the labels).
    run: u32,
    clock: u32,
}

/// How `height` pixels are shared by `runs` strips under the legend and the arrivals.
fn rows(runs: usize, height: u32) -> Rows {
    let runs = u32::try_from(runs.max(1)).unwrap_or(u32::MAX);
    let left = height.saturating_sub(LEGEND + ARRIVALS_STRIP + CLOCK);
    Rows { legend: LEGEND, arrivals: ARRIVALS_STRIP, run: (left / runs).max(MIN_RUN), clock: CLOCK }
}

/// Writes `path` (an SVG) and the same picture as a PNG beside it.
pub fn write(
    path: &Path,
    title: &str,
    panels: &[Panel<'_>],
    frame: Frame,
) -> Result<(), PlotError> {
    super::svg_and_png(
        path,
        SIZE,
        |area| draw(area, title, panels, frame),
        |area| draw(area, title, panels, frame),
    )
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    panels: &[Panel<'_>],
    frame: Frame,
) -> Drawn
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let root = root.titled(title, ("sans-serif", 22))?;
    let words = Words::of(panels);
    let rows = rows(panels.len(), root.dim_in_pixel().1);
    let mut breaks = vec![rows.legend, rows.legend + rows.arrivals];
    for k in 1..panels.len() {
        breaks.push(rows.legend + rows.arrivals + rows.run * k as u32);
    }
    let areas = root.split_by_breakpoints::<u32, u32, _, _>([], breaks);
    let (legend_area, strips) = areas.split_first().ok_or("no room for the legend")?;
    legend(legend_area, frame, words)?;
    let minutes = panels.iter().map(|p| p.outcome.minutes.len()).max().unwrap_or(1).max(1) as f64;
    let labels = panels.iter().flat_map(|p| [p.label.clone(), summary(p.outcome, words)]);
    let width = label_width(legend_area, labels.chain(["arrivals / min".to_owned()]))?;
    let tasks = panels
        .iter()
        .flat_map(|p| p.outcome.minutes.iter().map(|m| m.running.max(m.desired)))
        .max()
        .unwrap_or(0) as f64
        + 1.0;
    let (arrivals_area, runs) = strips.split_first().ok_or("no room for the arrivals")?;
    let strip = Strip { minutes, width, frame, clock: panels.is_empty() };
    if let Some(first) = panels.first() {
        arrivals(arrivals_area, first.outcome, strip)?;
    }
    for (k, (area, panel)) in runs.iter().zip(panels).enumerate() {
        let strip = Strip { clock: k + 1 == panels.len(), ..strip };
        run(area, panel, tasks, strip, words)?;
    }
    root.present()?;
    Ok(())
}

/// What every strip shares: the clock, the labels' column, and whether it
/// is the last (the one that labels the clock).
#[derive(Debug, Clone, Copy)]
struct Strip {
    minutes: f64,
    width: u32,
    frame: Frame,
    clock: bool,
}

/// The second line of a run's label: what it cost and how late it was.
fn summary(outcome: &Outcome, words: Words) -> String {
    format!(
        "{:.0} {}, {} late, {}",
        outcome.task_minutes(),
        words.cost,
        outcome.slo_misses(),
        (words.peak)(outcome.peak_desired())
    )
}

fn label_style() -> TextStyle<'static> {
    TextStyle::from(("sans-serif", 14).into_font())
}

/// The labels' column: the widest label and a margin, within [`LABEL_WIDTH`].
fn label_width<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    labels: impl Iterator<Item = String>,
) -> Result<u32, Box<dyn std::error::Error + Send + Sync>>
where
    DB::ErrorType: 'static,
{
    let mut widest = 0;
    for label in labels {
        widest = widest.max(area.estimate_text_size(&label, &label_style())?.0);
    }
    Ok((widest + 16).clamp(LABEL_WIDTH.0, LABEL_WIDTH.1))
}

/// A strip's chart right of its label, on the shared clock; the last strip
/// keeps room under it for the clock's labels.
fn chart<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    strip: Strip,
    top: f64,
) -> Result<super::panels::Chart<'a, DB>, Box<dyn std::error::Error + Send + Sync>>
where
    DB::ErrorType: 'static,
{
    let mut chart = ChartBuilder::on(area)
        .margin_left(strip.width)
        .margin_right(16)
        .margin_top(4)
        .x_label_area_size(if strip.clock { CLOCK } else { 0 })
        .y_label_area_size(Y_AXIS)
        .build_cartesian_2d(0.0..strip.minutes, 0.0..top)
        .map_err(boxed)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_labels(3)
        .y_label_formatter(&|v| format!("{v:.0}"))
        .light_line_style(WHITE)
        .draw()
        .map_err(boxed)?;
    let ticks = ticks(strip.minutes, strip.frame);
    let grid = ticks.iter().map(|&t| PathElement::new([(t, 0.0), (t, top)], GRID));
    chart.draw_series(grid).map_err(boxed)?;
    if strip.clock {
        let style =
            TextStyle::from(("sans-serif", 12).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
        let width = chart.plotting_area().dim_in_pixel().0;
        let fits = |&&t: &&f64| labelled(t, strip.minutes, strip.frame, width);
        let labels = ticks.iter().filter(fits).map(|&t| {
            EmptyElement::at((t, 0.0)) + Text::new(clock(t, strip.frame), (0, 6), style.clone())
        });
        chart.draw_series(labels).map_err(boxed)?;
    }
    Ok(chart)
}

/// The label at a strip's left, one or two lines.
fn label<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, lines: &[&str]) -> Drawn
where
    DB::ErrorType: 'static,
{
    for (k, line) in lines.iter().enumerate() {
        let style = if k == 0 { label_style() } else { ("sans-serif", 13).into_font().into() };
        area.draw(&Text::new((*line).to_owned(), (8, 8 + 18 * k as i32), style))?;
    }
    Ok(())
}

/// The trace's arrivals per minute: the same for every run of a picture.
fn arrivals<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    outcome: &Outcome,
    strip: Strip,
) -> Drawn
where
    DB::ErrorType: 'static,
{
    label(area, &["arrivals / min"])?;
    let top = outcome.minutes.iter().map(|m| m.arrivals).max().unwrap_or(0).max(1) as f64 * 1.1;
    let mut chart = chart(area, strip, top.ceil())?;
    let points = outcome.minutes.iter().enumerate().map(|(i, m)| (i as f64, m.arrivals as f64));
    chart.draw_series(LineSeries::new(points, ARRIVALS.stroke_width(2))).map_err(boxed)?;
    Ok(())
}

/// One run: its late minutes shaded, its running tasks as an area and its
/// desired tasks as a line, on the picture's one tasks scale.
fn run<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    panel: &Panel<'_>,
    tasks: f64,
    strip: Strip,
    words: Words,
) -> Drawn
where
    DB::ErrorType: 'static,
{
    let outcome = panel.outcome;
    label(area, &[&panel.label, &summary(outcome, words)])?;
    let mut chart = chart(area, strip, tasks)?;
    let late = late_spans(outcome, strip.frame.slo_seconds);
    let shade = LATE.mix(0.25).filled();
    chart
        .draw_series(
            late.into_iter().map(|(from, to)| Rectangle::new([(from, 0.0), (to, tasks)], shade)),
        )
        .map_err(boxed)?;
    let steps = |value: fn(&crate::stats::Minute) -> u64| {
        outcome.minutes.iter().enumerate().flat_map(move |(i, m)| {
            [(i as f64, value(m) as f64), (i as f64 + 1.0, value(m) as f64)]
        })
    };
    let last = outcome.minutes.len() as f64;
    let area_points: Vec<(f64, f64)> =
        [(0.0, 0.0)].into_iter().chain(steps(|m| m.running)).chain([(last, 0.0)]).collect();
    chart.draw_series([Polygon::new(area_points, RUNNING.mix(0.45).filled())]).map_err(boxed)?;
    chart
        .draw_series(LineSeries::new(steps(|m| m.desired), DESIRED.stroke_width(2)))
        .map_err(boxed)?;
    Ok(())
}

/// The minutes whose head of the queue had waited past the SLO, as spans of
/// whole minutes: one shape per late stretch, however long the trace.
fn late_spans(outcome: &Outcome, slo_seconds: u64) -> Vec<(f64, f64)> {
    let mut spans: Vec<(f64, f64)> = Vec::new();
    for (i, minute) in outcome.minutes.iter().enumerate() {
        if minute.head_wait.is_none_or(|w| w < slo_seconds) {
            continue;
        }
        let (from, to) = (i as f64, i as f64 + 1.0);
        match spans.last_mut() {
            Some(span) if span.1 == from => span.1 = to,
            _ => spans.push((from, to)),
        }
    }
    spans
}

/// The series' names and colours, once, above the strips.
fn legend<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, frame: Frame, words: Words) -> Drawn
where
    DB::ErrorType: 'static,
{
    let late = format!("late: the head of the queue had waited ≥ the SLO, {} s", frame.slo_seconds);
    let entries = [
        ("arrivals / min", ARRIVALS.stroke_width(3)),
        (words.running, RUNNING.mix(0.45).filled()),
        (words.desired, DESIRED.stroke_width(3)),
        (late.as_str(), LATE.mix(0.25).filled()),
    ];
    let style = ("sans-serif", 14).into_font();
    let mut x = 24;
    for (name, mark) in entries {
        if mark.filled {
            area.draw(&Rectangle::new([(x, 8), (x + 18, 22)], mark))?;
        } else {
            area.draw(&PathElement::new([(x, 15), (x + 18, 15)], mark))?;
        }
        area.draw(&Text::new(name.to_owned(), (x + 24, 8), style.clone()))?;
        let (width, _) = area.estimate_text_size(name, &TextStyle::from(style.clone()))?;
        x += 24 + width as i32 + 16;
    }
    let note = format!("{} on one scale in every strip", words.axis);
    area.draw(&Text::new(note, (x, 8), style.color(&RGBColor(90, 90, 90))))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Minute;

    #[test]
    fn every_run_gets_a_strip_of_the_same_height_and_the_strips_fill_the_picture() {
        // Under a 22-pixel title, what `titled` leaves of the 800.
        let height = SIZE.1 - 40;
        for runs in 1..=8 {
            let r = rows(runs, height);
            let used = r.legend + r.arrivals + r.run * runs as u32 + r.clock;
            assert!(used <= height, "{runs} runs need {used} of {height} pixels");
            assert!(
                height - used < runs as u32,
                "{runs} runs leave {} pixels unused",
                height - used
            );
            assert!(r.run >= MIN_RUN, "{runs} runs: strips of {} pixels", r.run);
        }
    }

    #[test]
    fn late_minutes_merge_into_one_span_per_late_stretch() {
        let minute = |wait| Minute {
            arrivals: 0,
            visible: 0,
            running: 0,
            desired: 0,
            metric: None,
            head_wait: Some(wait),
        };
        let waits = [0, 400, 500, 10, 300, 301, 299];
        let outcome = Outcome::nothing(
            crate::sim::policy::Consumer::Lambda,
            waits.into_iter().map(minute).collect(),
        );
        assert_eq!(late_spans(&outcome, 300), vec![(1.0, 3.0), (4.0, 6.0)]);
    }
}
