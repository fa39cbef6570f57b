//! One SVG per trace: a panel per policy with arrivals, backlog and the
//! published metric (left axis, messages) and tasks (right axis).

use std::error::Error;
use std::path::{Path, PathBuf};

use plotters::prelude::*;

use crate::stats::Outcome;

/// A picture that could not be written.
#[derive(Debug, thiserror::Error)]
#[error("drawing {path}: {source}")]
pub struct PlotError {
    path: PathBuf,
    #[source]
    source: Box<dyn Error + Send + Sync>,
}

const PANEL_HEIGHT: u32 = 230;
const WIDTH: u32 = 1_100;
const ARRIVALS: RGBColor = RGBColor(150, 150, 150);
const BACKLOG: RGBColor = RGBColor(31, 119, 180);
const METRIC: RGBColor = RGBColor(255, 127, 14);
const RUNNING: RGBColor = RGBColor(44, 160, 44);
const DESIRED: RGBColor = RGBColor(214, 39, 40);

/// Writes `path`: one panel per outcome, titled with its cost and misses.
pub fn write(path: &Path, title: &str, outcomes: &[Outcome]) -> Result<(), PlotError> {
    draw(path, title, outcomes).map_err(|source| PlotError { path: path.to_owned(), source })
}

fn draw(
    path: &Path,
    title: &str,
    outcomes: &[Outcome],
) -> Result<(), Box<dyn Error + Send + Sync>> {
    let height = PANEL_HEIGHT * outcomes.len() as u32 + 40;
    let root = SVGBackend::new(path, (WIDTH, height)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(title, ("sans-serif", 22))?;
    let panels = root.split_evenly((outcomes.len(), 1));
    for (area, outcome) in panels.iter().zip(outcomes) {
        panel(area, outcome)?;
    }
    root.present()?;
    Ok(())
}

fn panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    outcome: &Outcome,
) -> Result<(), Box<dyn Error + Send + Sync>>
where
    DB::ErrorType: 'static,
{
    let minutes = outcome.minutes.len().max(1) as f64;
    let messages = outcome
        .minutes
        .iter()
        .flat_map(|m| [m.arrivals as f64, m.visible as f64, m.metric.unwrap_or(0.0)])
        .fold(1.0_f64, f64::max)
        * 1.1;
    let tasks =
        outcome.minutes.iter().map(|m| m.running.max(m.desired)).max().unwrap_or(0) as f64 + 1.0;
    let caption = format!(
        "{} — {:.0} task-min, {} late, peak {} tasks",
        outcome.policy.label(),
        outcome.task_minutes(),
        outcome.slo_misses(),
        outcome.peak_desired()
    );
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 15))
        .margin(6)
        .x_label_area_size(24)
        .y_label_area_size(64)
        .right_y_label_area_size(44)
        .build_cartesian_2d(0.0..minutes, 0.0..messages)
        .map_err(boxed)?
        .set_secondary_coord(0.0..minutes, 0.0..tasks);
    chart
        .configure_mesh()
        .x_desc("minute")
        .y_desc("messages")
        .light_line_style(WHITE)
        .draw()
        .map_err(boxed)?;
    chart.configure_secondary_axes().y_desc("tasks").draw().map_err(boxed)?;

    let line = |value: fn(&crate::stats::Minute) -> f64| {
        outcome
            .minutes
            .iter()
            .enumerate()
            .map(move |(i, m)| (i as f64, value(m)))
            .collect::<Vec<_>>()
    };
    chart
        .draw_series(LineSeries::new(line(|m| m.arrivals as f64), ARRIVALS))
        .map_err(boxed)?
        .label("arrivals / min")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 16, y)], ARRIVALS));
    chart
        .draw_series(LineSeries::new(line(|m| m.visible as f64), BACKLOG.stroke_width(2)))
        .map_err(boxed)?
        .label("visible backlog")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 16, y)], BACKLOG));
    let metric =
        outcome.minutes.iter().enumerate().filter_map(|(i, m)| m.metric.map(|v| (i as f64, v)));
    chart
        .draw_series(metric.map(|point| Circle::new(point, 2, METRIC.filled())))
        .map_err(boxed)?
        .label("published metric")
        .legend(|(x, y)| Circle::new((x + 8, y), 3, METRIC.filled()));
    chart
        .draw_secondary_series(LineSeries::new(line(|m| m.desired as f64), DESIRED))
        .map_err(boxed)?
        .label("desired tasks")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 16, y)], DESIRED));
    chart
        .draw_secondary_series(LineSeries::new(line(|m| m.running as f64), RUNNING.stroke_width(2)))
        .map_err(boxed)?
        .label("running tasks")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 16, y)], RUNNING));
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(boxed)?;
    Ok(())
}

fn boxed<E: Error + Send + Sync + 'static>(error: E) -> Box<dyn Error + Send + Sync> {
    Box::new(error)
}
