//! The y ranges of one run's panel and strips. Each run is fitted alone: a
//! policy that never drains reaches 50,000 messages and hours of waiting, and
//! on a scale shared with it the runs that work are flat lines at zero. The
//! published metric gets a range of its own for the same reason: a percent, a
//! backlog per task and a queue depth are not messages on one axis.

use crate::stats::Outcome;

/// Headroom above a run's highest value, so a peak is not drawn on the frame.
const HEADROOM: f64 = 1.1;
/// More above the highest metric: its strip is short.
const STRIP_HEADROOM: f64 = 1.15;
/// Above the highest wait, on its log scale: a fifth of a decade.
const WAIT_HEADROOM: f64 = 1.5;

/// The y ranges of one run (each from 0) and the picture's x range.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Scales {
    /// Minutes on the x axis: the longest run of the picture, so clocks align.
    pub minutes: f64,
    /// Arrivals per minute and the visible backlog (left axis of the panel).
    pub messages: f64,
    /// Running and desired tasks (right axis of the panel).
    pub tasks: f64,
    /// The published metric and its target, in the metric's own unit.
    pub metric: f64,
    /// The head-of-queue wait, seconds, the top of a log scale from 1 s;
    /// never below the SLO, whose line is drawn.
    pub wait: f64,
}

/// The ranges of each run of a picture, in order: `runs` are the runs with
/// their metric's target. They share only the clock, the longest run's.
pub(super) fn of_picture(runs: &[(&Outcome, Option<f64>)], slo_seconds: u64) -> Vec<Scales> {
    let minutes = runs.iter().map(|(o, _)| o.minutes.len()).max().unwrap_or(1).max(1) as f64;
    runs.iter().map(|&(outcome, target)| of_run(outcome, target, minutes, slo_seconds)).collect()
}

/// `outcome`'s own ranges; `target` is its metric's, drawn as a line, so the
/// range holds it too.
fn of_run(outcome: &Outcome, target: Option<f64>, minutes: f64, slo_seconds: u64) -> Scales {
    let each = || outcome.minutes.iter();
    let messages = each().map(|m| m.arrivals.max(m.visible)).max().unwrap_or(0) as f64;
    let tasks = each().map(|m| m.running.max(m.desired)).max().unwrap_or(0) as f64;
    let metric = each()
        .filter_map(|m| m.metric)
        .chain(target)
        .filter(|v| v.is_finite())
        .fold(0.0_f64, f64::max);
    let wait = each().filter_map(|m| m.head_wait).max().unwrap_or(0).max(slo_seconds) as f64;
    Scales {
        minutes,
        messages: (messages.max(1.0) * HEADROOM).ceil(),
        // One task above the peak: the desired line is not hidden under the frame.
        tasks: tasks.max(1.0) + 1.0,
        metric: (metric * STRIP_HEADROOM).max(1.0),
        wait: (wait.max(2.0) * WAIT_HEADROOM).ceil(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::policy::{Consumer, Policy};
    use crate::stats::Minute;

    fn run(minute: Minute) -> Outcome {
        Outcome::nothing(Consumer::Ecs(Policy::QueueDepth), vec![minute; 90])
    }

    fn minute(arrivals: u64, visible: u64, tasks: u64, metric: f64, wait: u64) -> Minute {
        Minute {
            arrivals,
            visible,
            running: tasks,
            desired: tasks,
            metric: Some(metric),
            head_wait: Some(wait),
        }
    }

    /// `range` holds `peak` and is not much taller: the curve fills its panel.
    fn fits(range: f64, peak: f64, what: &str) {
        assert!(range >= peak, "{what}: {range} cuts off {peak}");
        assert!(range <= 1.5 * peak, "{what}: {range} flattens a peak of {peak}");
    }

    #[test]
    fn each_run_is_scaled_to_its_own_peaks_not_to_the_worst_run_of_the_picture() {
        let slo = 300;
        let failing = run(minute(1_800, 50_000, 0, 50_000.0, 30_000));
        let mut working = run(minute(1_800, 40, 2, 120.0, 90));
        working.minutes.truncate(60);
        let picture = [(&failing, Some(150.0)), (&working, Some(150.0))];
        let scales = of_picture(&picture, slo);
        for ((outcome, _), s) in picture.iter().zip(scales) {
            let m = outcome.minutes[0];
            fits(s.messages, m.arrivals.max(m.visible) as f64, "messages");
            // The wait's scale is logarithmic: within twice the peak is tight.
            let wait = m.head_wait.unwrap_or(0).max(slo) as f64;
            assert!(s.wait >= wait && s.wait <= 2.0 * wait, "wait {} for a peak of {wait}", s.wait);
            fits(s.metric, m.metric.unwrap_or(0.0).max(150.0), "metric");
            assert!(s.tasks > m.desired as f64, "the desired line under the top");
            assert_eq!(s.minutes, failing.minutes.len() as f64, "one clock: the longest run's");
        }
    }

    #[test]
    fn the_published_metric_has_its_own_range_and_the_messages_range_ignores_it() {
        // Sum of six samples under the zero guard: far above any message count.
        let spike = run(minute(100, 60, 1, 240_000.0, 10));
        let s = of_picture(&[(&spike, Some(20_000.0))], 300)[0];
        fits(s.messages, 100.0, "messages, without the metric");
        fits(s.metric, 240_000.0, "metric");

        // A metric below its target: the target line is still inside the strip.
        let low = run(minute(100, 60, 1, 40.0, 10));
        let target = 150.0;
        fits(of_picture(&[(&low, Some(target))], 300)[0].metric, target, "metric with its target");
    }
}
