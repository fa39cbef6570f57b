//! One SVG per trace: a legend above the data, then per policy a panel of
//! arrivals, backlog and the published metric (left axis, messages) and
//! tasks (right axis), and under it the wait of the message at the head of
//! the queue against the SLO, late minutes marked. Every panel of a picture
//! shares its row's scales, and the x axis is the trace's own clock.

use std::error::Error;
use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::policy::Consumer;
use crate::stats::{Minute, Outcome};

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
    /// The caption's name for the highest desired count (for the Lambda, the
    /// mapping's limit, not invocations that ran).
    peak: &'static str,
}

impl Words {
    fn of(outcomes: &[Outcome]) -> Self {
        if outcomes.iter().any(|o| o.consumer == Consumer::Lambda) {
            Self {
                desired: "concurrency limit",
                running: "invocations running",
                axis: "invocations",
                cost: "billed invocation-min",
                metric: false,
                peak: "concurrency limit",
            }
        } else {
            Self {
                desired: "desired tasks",
                running: "running tasks",
                axis: "tasks",
                cost: "task-min",
                metric: true,
                peak: "tasks",
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

/// What every panel of one picture shares: the clock, the SLO, the scales.
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

/// The line that names a picture written, SVG and PNG.
pub fn announce(w: &mut impl std::io::Write, path: &Path) -> std::io::Result<()> {
    writeln!(w, "picture: {} (and {})\n", path.display(), path.with_extension("png").display())
}

type Drawn = Result<(), Box<dyn Error + Send + Sync>>;

const PANEL_HEIGHT: u32 = 230;
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
/// At most this many late marks in a strip: more merge into a band.
const MAX_MARKS: usize = 150;

/// The shared scales of a picture's rows.
#[derive(Debug, Clone, Copy)]
struct Scales {
    minutes: f64,
    messages: f64,
    tasks: f64,
    wait: f64,
}

/// Writes `path` (an SVG) and the same picture as a PNG beside it: one panel
/// and one wait strip per outcome, titled with its cost and misses.
pub fn write(
    path: &Path,
    title: &str,
    outcomes: &[Outcome],
    frame: Frame,
) -> Result<(), PlotError> {
    let failed = |path: &Path| {
        let path = path.to_owned();
        move |source| PlotError { path, source }
    };
    fonts().map_err(failed(path))?;
    let size = (WIDTH, height(outcomes));
    draw(SVGBackend::new(path, size).into_drawing_area(), title, outcomes, frame)
        .map_err(failed(path))?;
    let png = path.with_extension("png");
    draw(BitMapBackend::new(&png, size).into_drawing_area(), title, outcomes, frame)
        .map_err(failed(&png))
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

fn height(outcomes: &[Outcome]) -> u32 {
    (PANEL_HEIGHT + WAIT_HEIGHT) * outcomes.len() as u32 + LEGEND_HEIGHT + 40
}

fn scales(outcomes: &[Outcome], frame: Frame) -> Scales {
    let all = || outcomes.iter().flat_map(|o| o.minutes.iter());
    let messages = all()
        .flat_map(|m| [m.arrivals as f64, m.visible as f64, m.metric.unwrap_or(0.0)])
        .fold(1.0_f64, f64::max);
    let tasks = all().map(|m| m.running.max(m.desired)).max().unwrap_or(0) as f64;
    let wait = all().filter_map(|m| m.head_wait).max().unwrap_or(0).max(frame.slo_seconds) as f64;
    Scales {
        minutes: outcomes.iter().map(|o| o.minutes.len()).max().unwrap_or(1).max(1) as f64,
        messages: (messages * 1.1).ceil(),
        tasks: tasks.max(1.0) + 1.0,
        wait: (wait * 1.15).ceil(),
    }
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    outcomes: &[Outcome],
    frame: Frame,
) -> Drawn
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let root = root.titled(title, ("sans-serif", 22))?;
    let (legend_area, rest) = root.split_vertically(LEGEND_HEIGHT);
    let words = Words::of(outcomes);
    legend(&legend_area, frame, words)?;
    let scales = scales(outcomes, frame);
    let rows = rest.split_evenly((outcomes.len().max(1), 1));
    for (area, outcome) in rows.iter().zip(outcomes) {
        let (top, bottom) = area.split_vertically(PANEL_HEIGHT);
        panel(&top, outcome, scales, frame, words)?;
        wait_strip(&bottom, outcome, scales, frame)?;
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
        ("arrivals / min", ARRIVALS),
        ("visible backlog", BACKLOG),
        ("published metric", METRIC),
        (words.desired, DESIRED),
        (words.running, RUNNING),
        ("head-of-queue wait", WAIT),
        (slo.as_str(), SLO),
        ("late", LATE),
    ]
    .into_iter()
    .filter(|(name, _)| words.metric || *name != "published metric");
    let style = ("sans-serif", 14).into_font();
    let mut x = 40;
    for (name, color) in entries {
        if name == "late" {
            area.draw(&Cross::new((x + 9, 15), 4, LATE.stroke_width(2)))?;
        } else {
            area.draw(&PathElement::new([(x, 15), (x + 18, 15)], color.stroke_width(3)))?;
        }
        area.draw(&Text::new(name.to_owned(), (x + 24, 8), style.clone()))?;
        let (width, _) = area.estimate_text_size(name, &TextStyle::from(style.clone()))?;
        x += 24 + width as i32 + 22;
    }
    Ok(())
}

/// `minute` on the trace's clock: `MM-DD HH:MM` UTC for a CSV, `HH:MM` (after
/// the first day, `dN HH:MM`) from a built-in trace's midnight.
fn clock(minute: f64, frame: Frame) -> String {
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

/// Ticks on round times of the clock: every 10 minutes to every week, at most a dozen.
fn ticks(minutes: f64) -> Vec<f64> {
    const STEPS: [u32; 12] = [10, 15, 30, 60, 120, 180, 240, 360, 720, 1_440, 2_880, 10_080];
    let step = STEPS.into_iter().find(|&s| minutes / f64::from(s) <= 12.0).unwrap_or(10_080);
    (0..).map(|k| f64::from(k * step)).take_while(|&m| m <= minutes).collect()
}

fn whole(value: &f64) -> String {
    format!("{value:.0}")
}

fn panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    outcome: &Outcome,
    scales: Scales,
    frame: Frame,
    words: Words,
) -> Drawn
where
    DB::ErrorType: 'static,
{
    let caption = format!(
        "{} — {:.0} {}, {} late, peak {} {}",
        outcome.consumer.label(),
        outcome.task_minutes(),
        words.cost,
        outcome.slo_misses(),
        outcome.peak_desired(),
        words.peak
    );
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 15))
        .margin(6)
        .x_label_area_size(24)
        .y_label_area_size(64)
        .right_y_label_area_size(44)
        .build_cartesian_2d(0.0..scales.minutes, 0.0..scales.messages)
        .map_err(boxed)?
        .set_secondary_coord(0.0..scales.minutes, 0.0..scales.tasks);
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_label_formatter(&whole)
        .y_desc("messages")
        .light_line_style(WHITE)
        .draw()
        .map_err(boxed)?;
    clock_axis(&mut chart, scales.messages, frame, scales)?;
    // Tasks are whole: one tick per task up to ten, else whole steps.
    let task_ticks = (scales.tasks as usize + 1).min(11);
    chart
        .configure_secondary_axes()
        .y_labels(task_ticks)
        .y_label_formatter(&whole)
        .y_desc(words.axis)
        .draw()
        .map_err(boxed)?;
    let line = |value: fn(&Minute) -> f64| {
        outcome
            .minutes
            .iter()
            .enumerate()
            .map(move |(i, m)| (i as f64, value(m)))
            .collect::<Vec<_>>()
    };
    chart.draw_series(LineSeries::new(line(|m| m.arrivals as f64), ARRIVALS)).map_err(boxed)?;
    chart.draw_series(LineSeries::new(line(|m| m.visible as f64), BACKLOG)).map_err(boxed)?;
    let metric =
        outcome.minutes.iter().enumerate().filter_map(|(i, m)| m.metric.map(|v| (i as f64, v)));
    chart.draw_series(metric.map(|point| Circle::new(point, 2, METRIC.filled()))).map_err(boxed)?;
    chart
        .draw_secondary_series(LineSeries::new(line(|m| m.desired as f64), DESIRED))
        .map_err(boxed)?;
    chart
        .draw_secondary_series(LineSeries::new(line(|m| m.running as f64), RUNNING))
        .map_err(boxed)?;
    Ok(())
}

/// The head-of-queue wait per minute, the SLO as a line, and a mark on each
/// minute whose head had waited past it.
fn wait_strip<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    outcome: &Outcome,
    scales: Scales,
    frame: Frame,
) -> Drawn
where
    DB::ErrorType: 'static,
{
    let slo = frame.slo_seconds as f64;
    let mut chart = ChartBuilder::on(area)
        .margin_left(6)
        .margin_right(50)
        .margin_bottom(6)
        .x_label_area_size(20)
        .y_label_area_size(64)
        .build_cartesian_2d(0.0..scales.minutes, 0.0..scales.wait)
        .map_err(boxed)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_label_formatter(&whole)
        .y_labels(4)
        .y_desc("wait, s")
        .light_line_style(WHITE)
        .draw()
        .map_err(boxed)?;
    clock_axis(&mut chart, scales.wait, frame, scales)?;
    let waits: Vec<(f64, f64)> = outcome
        .minutes
        .iter()
        .enumerate()
        .map(|(i, m)| (i as f64, m.head_wait.unwrap_or(0) as f64))
        .collect();
    chart.draw_series(LineSeries::new(waits.iter().copied(), WAIT)).map_err(boxed)?;
    let dashes = (0..(scales.minutes as usize).div_ceil(4))
        .map(|k| PathElement::new([(k as f64 * 4.0, slo), (k as f64 * 4.0 + 2.0, slo)], SLO));
    chart.draw_series(dashes).map_err(boxed)?;
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
fn clock_axis<DB: DrawingBackend>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    top: f64,
    frame: Frame,
    scales: Scales,
) -> Drawn
where
    DB::ErrorType: 'static,
{
    let ticks = ticks(scales.minutes);
    let grid = RGBColor(225, 225, 225);
    chart
        .draw_series(ticks.iter().map(|&t| PathElement::new([(t, 0.0), (t, top)], grid)))
        .map_err(boxed)?;
    let style =
        TextStyle::from(("sans-serif", 12).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
    let labels = ticks
        .iter()
        .map(|&t| EmptyElement::at((t, 0.0)) + Text::new(clock(t, frame), (0, 6), style.clone()));
    chart.draw_series(labels).map_err(boxed)?;
    Ok(())
}

fn boxed<E: Error + Send + Sync + 'static>(error: E) -> Box<dyn Error + Send + Sync> {
    Box::new(error)
}
