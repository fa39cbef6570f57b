//! The pictures, each an SVG with the same picture as a PNG beside it. A
//! picture of several runs comes twice: an overview of them all at one
//! glance (`overview.rs`), and the detail written here: a legend
//! above the data, then per run a panel of arrivals and the visible backlog
//! (left axis, messages) with the tasks (right axis), a strip of the
//! published metric against its target in the metric's own unit, and a strip
//! of the wait of the message at the head of the queue against the SLO, late
//! minutes marked. Every panel and strip has its own y scale (`scale.rs`
//! says why); the x axis is the trace's own clock, the same in every panel.

use std::error::Error;
use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::sim::policy::Consumer;
use crate::stats::Outcome;

mod overview;
mod panels;
mod scale;

pub use overview::{SIZE as OVERVIEW_SIZE, write as write_overview};

/// What the capacity axis counts: ECS tasks, or the Lambda consumer's
/// concurrent invocations under the mapping's concurrency limit.
#[derive(Debug, Clone, Copy)]
struct Words {
    desired: &'static str,
    running: &'static str,
    axis: &'static str,
    cost: &'static str,
    /// A scaling policy's published metric is drawn (the Lambda consumer has none).
    metric: bool,
    /// The caption's words for the highest desired count (for the Lambda, the
    /// mapping's limit, not invocations that ran).
    peak: fn(u64) -> String,
}

impl Words {
    fn of(panels: &[Panel<'_>]) -> Self {
        if panels.iter().any(|p| p.outcome.consumer == Consumer::Lambda) {
            Self {
                desired: "concurrency limit",
                running: "invocations running",
                axis: "invocations",
                cost: "billed invocation-min",
                metric: false,
                peak: |n| format!("concurrency limit up to {n}"),
            }
        } else {
            Self {
                desired: "desired tasks",
                running: "running tasks",
                axis: "tasks",
                cost: "task-min",
                metric: true,
                peak: |n| format!("peak {n} task{}", if n == 1 { "" } else { "s" }),
            }
        }
    }
}

/// A picture that could not be written.
#[derive(Debug, thiserror::Error)]
#[error("drawing {path}: {source}")]
pub struct PlotError {
    path: PathBuf,
    #[source]
    source: Box<dyn Error + Send + Sync>,
}

/// What every panel of one picture shares: the clock and the SLO.
#[derive(Debug, Clone, Copy)]
pub struct Frame {
    /// When minute 0 was, seconds since the epoch; `None`: a midnight.
    pub start: Option<i64>,
    /// The latency SLO, seconds.
    pub slo_seconds: u64,
}

impl Frame {
    /// The clock and SLO of `scenario`'s trace.
    pub fn of(scenario: &crate::sim::Scenario) -> Self {
        Self { start: scenario.trace.start, slo_seconds: scenario.slo.latency_seconds }
    }
}

/// One run to draw and what it is.
#[derive(Debug, Clone)]
pub struct Panel<'a> {
    /// The caption's name for the run: the policy, with its setting where
    /// the picture's runs do not share one.
    pub label: String,
    /// The run.
    pub outcome: &'a Outcome,
    /// The target its published metric was tracked against, drawn on the
    /// metric's strip (`None` for the Lambda consumer, which publishes none).
    pub target: Option<f64>,
    /// The metric's unit when it is not its policy's: a service's CPU.
    pub unit: Option<&'static str>,
}

impl<'a> Panel<'a> {
    /// `outcome` named by its policy alone.
    pub fn of(outcome: &'a Outcome, target: Option<f64>) -> Self {
        Self { label: outcome.consumer.label().to_owned(), outcome, target, unit: None }
    }
}

/// The line that names a picture written, SVG and PNG.
pub fn announce(w: &mut impl std::io::Write, path: &Path) -> std::io::Result<()> {
    writeln!(w, "picture: {} (and {})\n", path.display(), path.with_extension("png").display())
}

/// Where the detail of the overview at `path` goes: `<name>-detail.svg` beside it.
pub fn detail_path(path: &Path) -> PathBuf {
    let stem = path.file_stem().map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    path.with_file_name(format!("{stem}-detail.svg"))
}

/// The lines that name an overview and its detail, SVG and PNG each.
pub fn announce_overview(
    w: &mut impl std::io::Write,
    overview: &Path,
    detail: &Path,
) -> std::io::Result<()> {
    writeln!(
        w,
        "picture: {} (and {})",
        overview.display(),
        overview.with_extension("png").display()
    )?;
    writeln!(
        w,
        "each run in detail: {} (and {})\n",
        detail.display(),
        detail.with_extension("png").display()
    )
}

type Drawn = Result<(), Box<dyn Error + Send + Sync>>;

const PANEL_HEIGHT: u32 = 220;
const METRIC_HEIGHT: u32 = 110;
const WAIT_HEIGHT: u32 = 110;
const LEGEND_HEIGHT: u32 = 30;
const WIDTH: u32 = 1_100;
const ARRIVALS: RGBColor = RGBColor(150, 150, 150);
const BACKLOG: RGBColor = RGBColor(31, 119, 180);
const METRIC: RGBColor = RGBColor(255, 127, 14);
const RUNNING: RGBColor = RGBColor(44, 160, 44);
const DESIRED: RGBColor = RGBColor(214, 39, 40);
const WAIT: RGBColor = RGBColor(148, 103, 189);
const LATE: RGBColor = RGBColor(190, 0, 90);
const SLO: RGBColor = BLACK;

/// Writes `path` (an SVG) and the same picture as a PNG beside it: per run a
/// panel, its metric's strip (ECS) and its wait strip, captioned with its cost
/// and misses.
pub fn write(
    path: &Path,
    title: &str,
    panels: &[Panel<'_>],
    frame: Frame,
) -> Result<(), PlotError> {
    svg_and_png(
        path,
        (WIDTH, height(panels)),
        |area| draw(area, title, panels, frame),
        |area| draw(area, title, panels, frame),
    )
}

/// One picture drawn twice: `path` (an SVG) and a PNG beside it, each error
/// naming the file it was for.
fn svg_and_png(
    path: &Path,
    size: (u32, u32),
    svg: impl FnOnce(DrawingArea<SVGBackend<'_>, Shift>) -> Drawn,
    png: impl FnOnce(DrawingArea<BitMapBackend<'_>, Shift>) -> Drawn,
) -> Result<(), PlotError> {
    let failed = |path: &Path| {
        let path = path.to_owned();
        move |source| PlotError { path, source }
    };
    fonts().map_err(failed(path))?;
    svg(SVGBackend::new(path, size).into_drawing_area()).map_err(failed(path))?;
    let png_path = path.with_extension("png");
    png(BitMapBackend::new(&png_path, size).into_drawing_area()).map_err(failed(&png_path))
}

/// DejaVu Sans for every text, registered once: the pictures need no system font.
fn fonts() -> Drawn {
    static REGISTERED: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    let registered = REGISTERED.get_or_init(|| {
        plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular())
            .map_err(|_| "the embedded DejaVu Sans could not be read".to_owned())
    });
    registered.clone().map_err(Into::into)
}

/// The height of one run's rows: the panel, the metric's strip when there is
/// a metric, the wait strip.
fn row_height(words: Words) -> u32 {
    PANEL_HEIGHT + if words.metric { METRIC_HEIGHT } else { 0 } + WAIT_HEIGHT
}

fn height(panels: &[Panel<'_>]) -> u32 {
    row_height(Words::of(panels)) * panels.len() as u32 + LEGEND_HEIGHT + 40
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
    let (legend_area, rest) = root.split_vertically(LEGEND_HEIGHT);
    let words = Words::of(panels);
    legend(&legend_area, frame, words)?;
    let runs: Vec<_> = panels.iter().map(|p| (p.outcome, p.target)).collect();
    let scales = scale::of_picture(&runs, frame.slo_seconds);
    let rows = rest.split_evenly((panels.len().max(1), 1));
    for ((area, panel), scales) in rows.iter().zip(panels).zip(scales) {
        let (top, rest) = area.split_vertically(PANEL_HEIGHT);
        panels::panel(&top, panel, scales, frame, words)?;
        let wait = if words.metric {
            let (metric, wait) = rest.split_vertically(METRIC_HEIGHT);
            panels::metric_strip(&metric, panel, scales, frame)?;
            wait
        } else {
            rest
        };
        panels::wait_strip(&wait, panel.outcome, scales, frame)?;
    }
    root.present()?;
    Ok(())
}

/// The series' names and colours, once, above every panel: never over the data.
fn legend<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, frame: Frame, words: Words) -> Drawn
where
    DB::ErrorType: 'static,
{
    let slo = format!("SLO {} s", frame.slo_seconds);
    let entries = [
        ("arrivals / min", ARRIVALS, Mark::Line),
        ("visible backlog", BACKLOG, Mark::Line),
        (words.desired, DESIRED, Mark::Line),
        (words.running, RUNNING, Mark::Line),
        ("published metric", METRIC, Mark::Dot),
        ("its target", METRIC, Mark::Dashes),
        ("head-of-queue wait", WAIT, Mark::Line),
        (slo.as_str(), SLO, Mark::Dashes),
        ("late", LATE, Mark::Cross),
    ]
    .into_iter()
    .filter(|(name, _, _)| words.metric || !matches!(*name, "published metric" | "its target"));
    let style = ("sans-serif", 14).into_font();
    let mut x = 24;
    for (name, color, mark) in entries {
        match mark {
            Mark::Line => {
                area.draw(&PathElement::new([(x, 15), (x + 18, 15)], color.stroke_width(3)))?
            }
            Mark::Dashes => {
                for dash in [x, x + 12] {
                    area.draw(&PathElement::new([(dash, 15), (dash + 6, 15)], color))?;
                }
            }
            Mark::Dot => area.draw(&Circle::new((x + 9, 15), 3, color.filled()))?,
            Mark::Cross => area.draw(&Cross::new((x + 9, 15), 4, color.stroke_width(2)))?,
        }
        area.draw(&Text::new(name.to_owned(), (x + 24, 8), style.clone()))?;
        let (width, _) = area.estimate_text_size(name, &TextStyle::from(style.clone()))?;
        x += 24 + width as i32 + 16;
    }
    Ok(())
}

/// How a legend entry is drawn: as its series is.
#[derive(Debug, Clone, Copy)]
enum Mark {
    Line,
    Dashes,
    Dot,
    Cross,
}

fn boxed<E: Error + Send + Sync + 'static>(error: E) -> Box<dyn Error + Send + Sync> {
    Box::new(error)
}
