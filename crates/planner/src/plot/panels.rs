//! The three rows drawn for one run: its panel, its metric's strip and its
//! wait strip, each on the run's own [`Scales`], under one clock.

use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::scale::Scales;
use super::{
    ARRIVALS, BACKLOG, DESIRED, Drawn, Frame, LATE, METRIC, Panel, RUNNING, SLO, WAIT, Words, boxed,
};
use crate::sim::policy::{Consumer, Policy};
use crate::stats::{Minute, Outcome};

/// At most this many late marks in a strip: more merge into a band.
const MAX_MARKS: usize = 150;
/// Room for the left axis's labels and description, the same in every row so the clocks align.
const LEFT_AXIS: u32 = 72;
const RIGHT_AXIS: u32 = 44;
/// The bottom of the wait's log scale, seconds.
const WAIT_FLOOR: f64 = 1.0;

/// The metric's unit, as its strip's axis names it: what target tracking
/// compared with the target.
fn metric_unit(consumer: Consumer) -> &'static str {
    match consumer {
        Consumer::Ecs(Policy::Load) => "load, %",
        Consumer::Ecs(Policy::QueueDepth) => "messages",
        // The alarm reads the Sum of the minute's six samples.
        Consumer::Ecs(Policy::SumStatistic) => "Σ6 msgs/task",
        Consumer::Ecs(_) => "msgs/task",
        Consumer::Lambda => "",
    }
}

/// `minute` on the trace's clock: `MM-DD HH:MM` UTC for a CSV, `HH:MM` (after
/// the first day, `dN HH:MM`) from a built-in trace's midnight.
pub(super) fn clock(minute: f64, frame: Frame) -> String {
    let seconds = (minute.max(0.0) * 60.0) as i64;
    match frame.start.and_then(|start| jiff::Timestamp::from_second(start + seconds).ok()) {
        Some(at) => at.strftime("%m-%d %H:%M").to_string(),
        None => {
            let (day, rest) = (seconds / 86_400, seconds % 86_400);
            let time = format!("{:02}:{:02}", rest / 3_600, rest % 3_600 / 60);
            if day == 0 { time } else { format!("d{day} {time}") }
        }
    }
}

/// Ticks on round times of the clock (a CSV that starts at 09:10 is ticked
/// at 10:00, 11:00, …): every 10 minutes to every week, at most a dozen.
pub(super) fn ticks(minutes: f64, frame: Frame) -> Vec<f64> {
    const STEPS: [i64; 12] = [10, 15, 30, 60, 120, 180, 240, 360, 720, 1_440, 2_880, 10_080];
    let step = STEPS.into_iter().find(|&s| minutes / s as f64 <= 12.0).unwrap_or(10_080);
    // Minutes of the clock at minute 0 past its last round time (UTC for a CSV).
    let past = frame.start.map_or(0, |start| start.div_euclid(60).rem_euclid(step));
    let first = (step - past) % step;
    (0..).map(|k| (first + k * step) as f64).take_while(|&m| m <= minutes).collect()
}

/// Whether a tick's label, centred on it, fits inside the plot: one too
/// close to the right edge would be cut (`12-01 11:`), so only its line is drawn.
pub(super) fn labelled(tick: f64, minutes: f64, frame: Frame, plot_pixels: u32) -> bool {
    // DejaVu Sans at 12 px: about 7 px a character; half the label lies right of the tick.
    let half_label = clock(tick, frame).chars().count() as f64 * 7.0 / 2.0;
    (minutes - tick) / minutes.max(1.0) * f64::from(plot_pixels) >= half_label
}

fn whole(value: &f64) -> String {
    format!("{value:.0}")
}

/// A metric's ticks: a backlog per task under 10 is read in tenths.
fn metric_label(top: f64) -> impl Fn(&f64) -> String {
    move |value| if top < 10.0 { format!("{value:.1}") } else { whole(value) }
}

/// A series of one value per minute.
fn line(outcome: &Outcome, value: fn(&Minute) -> f64) -> Vec<(f64, f64)> {
    outcome.minutes.iter().enumerate().map(|(i, m)| (i as f64, value(m))).collect()
}

/// A dashed horizontal line at `y`, two minutes on and two off.
fn dashes(minutes: f64, y: f64, color: RGBColor) -> impl Iterator<Item = PathElement<(f64, f64)>> {
    (0..(minutes as usize).div_ceil(4))
        .map(move |k| PathElement::new([(k as f64 * 4.0, y), (k as f64 * 4.0 + 2.0, y)], color))
}

pub(super) type Chart<'a, DB, Y = RangedCoordf64> =
    ChartContext<'a, DB, Cartesian2d<RangedCoordf64, Y>>;

/// A strip under the panel: its own y range (linear or log), the clock below it.
fn strip<'a, DB: DrawingBackend, Y: AsRangedCoord<Value = f64>>(
    area: &'a DrawingArea<DB, Shift>,
    minutes: f64,
    y: Y,
    unit: &str,
    label: &dyn Fn(&f64) -> String,
) -> Result<Chart<'a, DB, Y::CoordDescType>, Box<dyn std::error::Error + Send + Sync>>
where
    DB::ErrorType: 'static,
    Y::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let mut chart = ChartBuilder::on(area)
        .margin_left(6)
        .margin_right(6 + RIGHT_AXIS)
        .margin_bottom(4)
        .x_label_area_size(20)
        .y_label_area_size(LEFT_AXIS)
        .build_cartesian_2d(0.0..minutes, y)
        .map_err(boxed)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_label_formatter(label)
        .y_labels(4)
        .y_desc(unit)
        .axis_desc_style(("sans-serif", 13))
        .light_line_style(WHITE)
        .draw()
        .map_err(boxed)?;
    Ok(chart)
}

/// Arrivals and the visible backlog (left axis, messages) and the tasks
/// (right axis), captioned with what the run is and what it cost.
pub(super) fn panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    panel: &Panel<'_>,
    scales: Scales,
    frame: Frame,
    words: Words,
) -> Drawn
where
    DB::ErrorType: 'static,
{
    let outcome = panel.outcome;
    let caption = format!(
        "{} — {:.0} {}, {} late, {}",
        panel.label,
        outcome.task_minutes(),
        words.cost,
        outcome.slo_misses(),
        (words.peak)(outcome.peak_desired())
    );
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 15))
        .margin(6)
        .x_label_area_size(24)
        .y_label_area_size(LEFT_AXIS)
        .right_y_label_area_size(RIGHT_AXIS)
        .build_cartesian_2d(0.0..scales.minutes, 0.0..scales.messages)
        .map_err(boxed)?
        .set_secondary_coord(0.0..scales.minutes, 0.0..scales.tasks);
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        // Messages are whole: no more ticks than there are counts, or a range of 2 reads 0 0 1 1 2.
        .y_labels((scales.messages as usize + 1).min(10))
        .y_label_formatter(&whole)
        .y_desc("messages")
        .axis_desc_style(("sans-serif", 13))
        .light_line_style(WHITE)
        .draw()
        .map_err(boxed)?;
    clock_axis(&mut chart, (0.0, scales.messages), frame, scales.minutes)?;
    // Tasks are whole: one tick per task up to ten, else whole steps.
    let task_ticks = (scales.tasks as usize + 1).min(11);
    chart
        .configure_secondary_axes()
        .y_labels(task_ticks)
        .y_label_formatter(&whole)
        .y_desc(words.axis)
        .axis_desc_style(("sans-serif", 13))
        .draw()
        .map_err(boxed)?;
    chart
        .draw_series(LineSeries::new(line(outcome, |m| m.arrivals as f64), ARRIVALS))
        .map_err(boxed)?;
    chart
        .draw_series(LineSeries::new(line(outcome, |m| m.visible as f64), BACKLOG))
        .map_err(boxed)?;
    chart
        .draw_secondary_series(LineSeries::new(line(outcome, |m| m.desired as f64), DESIRED))
        .map_err(boxed)?;
    chart
        .draw_secondary_series(LineSeries::new(line(outcome, |m| m.running as f64), RUNNING))
        .map_err(boxed)?;
    Ok(())
}

/// The published metric, a dot a minute (none where nothing was published),
/// and its target as a dashed line, on an axis in the metric's own unit.
pub(super) fn metric_strip<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    panel: &Panel<'_>,
    scales: Scales,
    frame: Frame,
) -> Drawn
where
    DB::ErrorType: 'static,
{
    let unit = panel.unit.unwrap_or_else(|| metric_unit(panel.outcome.consumer));
    let label = metric_label(scales.metric);
    let mut chart = strip(area, scales.minutes, 0.0..scales.metric, unit, &label)?;
    clock_axis(&mut chart, (0.0, scales.metric), frame, scales.minutes)?;
    if let Some(target) = panel.target {
        chart.draw_series(dashes(scales.minutes, target, METRIC)).map_err(boxed)?;
    }
    let points = panel
        .outcome
        .minutes
        .iter()
        .enumerate()
        .filter_map(|(i, m)| m.metric.map(|v| (i as f64, v)));
    chart.draw_series(points.map(|point| Circle::new(point, 2, METRIC.filled()))).map_err(boxed)?;
    Ok(())
}

/// The head-of-queue wait per minute, the SLO as a line, and a mark on each
/// minute whose head had waited past it. On a log scale: a few seconds, the
/// SLO and hours past it all read on one strip (no wait, or under a second,
/// is drawn at its floor of 1 s).
pub(super) fn wait_strip<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    outcome: &Outcome,
    scales: Scales,
    frame: Frame,
) -> Drawn
where
    DB::ErrorType: 'static,
{
    let slo = frame.slo_seconds as f64;
    let range = (WAIT_FLOOR..scales.wait).log_scale();
    let mut chart = strip(area, scales.minutes, range, "wait, s (log)", &whole)?;
    clock_axis(&mut chart, (WAIT_FLOOR, scales.wait), frame, scales.minutes)?;
    let waits = line(outcome, |m| m.head_wait.unwrap_or(0).max(1) as f64);
    chart.draw_series(LineSeries::new(waits.iter().copied(), WAIT)).map_err(boxed)?;
    chart.draw_series(dashes(scales.minutes, slo, SLO)).map_err(boxed)?;
    let late: Vec<&(f64, f64)> = waits.iter().filter(|(_, wait)| *wait >= slo).collect();
    let every = late.len().div_ceil(MAX_MARKS).max(1);
    let late = late.into_iter().step_by(every);
    chart
        .draw_series(late.map(|&(minute, wait)| Cross::new((minute, wait), 3, LATE)))
        .map_err(boxed)?;
    Ok(())
}

/// The x axis on round times of the clock: a light line and a label at each
/// tick (plotters' own ticks fall on round numbers of minutes, not of hours).
fn clock_axis<DB: DrawingBackend, Y: Ranged<ValueType = f64>>(
    chart: &mut Chart<'_, DB, Y>,
    (bottom, top): (f64, f64),
    frame: Frame,
    minutes: f64,
) -> Drawn
where
    DB::ErrorType: 'static,
{
    let ticks = ticks(minutes, frame);
    let grid = RGBColor(225, 225, 225);
    chart
        .draw_series(ticks.iter().map(|&t| PathElement::new([(t, bottom), (t, top)], grid)))
        .map_err(boxed)?;
    let style =
        TextStyle::from(("sans-serif", 12).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
    let width = chart.plotting_area().dim_in_pixel().0;
    let labels = ticks.iter().filter(|&&t| labelled(t, minutes, frame, width)).map(|&t| {
        EmptyElement::at((t, bottom)) + Text::new(clock(t, frame), (0, 6), style.clone())
    });
    chart.draw_series(labels).map_err(boxed)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(start: Option<i64>) -> Frame {
        Frame { start, slo_seconds: 300 }
    }

    #[test]
    fn a_trace_starting_off_the_hour_is_ticked_on_round_times() {
        // 2026-11-30T09:10:00Z, ten hours: hourly ticks at 10:00 … 19:00.
        let at_0910 = frame(Some(1_796_029_800 + 600));
        let labels: Vec<String> =
            ticks(600.0, at_0910).into_iter().map(|t| clock(t, at_0910)).collect();
        assert_eq!(labels.first().map(String::as_str), Some("11-30 10:00"));
        assert!(labels.iter().all(|l| l.ends_with(":00")), "{labels:?}");
        let midnight = frame(None);
        assert_eq!(ticks(600.0, midnight)[..2], [0.0, 60.0], "a built-in trace from 00:00");
    }

    #[test]
    fn a_label_that_would_be_cut_at_the_right_edge_is_left_off() {
        let at_0910 = frame(Some(1_796_029_800 + 600));
        // Ten hours from 09:10 end at 19:10: the 19:00 tick is 10 minutes, 18 px, from the
        // edge of a 1,080-pixel plot, where half its 11-character label needs 39.
        let ticks = ticks(600.0, at_0910);
        let last = *ticks.last().unwrap();
        assert_eq!(clock(last, at_0910), "11-30 19:00");
        assert!(!labelled(last, 600.0, at_0910, 1_080));
        assert!(labelled(ticks[0], 600.0, at_0910, 1_080));
    }
}
