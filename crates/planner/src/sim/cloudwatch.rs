//! CloudWatch as the scaling alarms see it: datapoints aggregated into
//! periods (a minute, or `--metric-period`) by a statistic, visible only after the metric lag, and
//! alarms that need M of N periods breaching.

/// The load scale-in alarm's threshold, as a fraction of the target: above
/// the floor of two tasks holding one task's worth (0.375), below that of
/// one (0.75), so the last task stays while there is work.
pub const SCALE_IN_THRESHOLD: f64 = 0.45;

/// How a period's datapoints become one value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Statistic {
    /// The mean of the period's datapoints: what the template's policy uses.
    Average,
    /// Their sum: grows with the number of datapoints, not with the backlog.
    Sum,
    /// The largest.
    Maximum,
    /// The smallest.
    Minimum,
}

impl Statistic {
    fn aggregate(self, values: impl Iterator<Item = f64>) -> Option<f64> {
        let mut count = 0_u32;
        let mut acc: Option<f64> = None;
        for value in values {
            count += 1;
            acc = Some(match (self, acc) {
                (_, None) => value,
                (Self::Average | Self::Sum, Some(a)) => a + value,
                (Self::Maximum, Some(a)) => a.max(value),
                (Self::Minimum, Some(a)) => a.min(value),
            });
        }
        match self {
            Self::Average => acc.map(|sum| sum / f64::from(count)),
            _ => acc,
        }
    }
}

/// The period target tracking's alarms and the template's wake-up alarm
/// use: one minute. Target tracking on a custom metric evaluates per minute
/// on ECS today; `--metric-period` simulates a shorter one.
pub const PERIOD_SECONDS: u64 = 60;

/// Alarm periods CloudWatch accepts below a minute, for metrics stored at
/// one-second resolution (`PutMetricAlarm`, `Period`: 10, 20, 30 or a
/// multiple of 60).
pub const HIGH_RESOLUTION_PERIODS: [u64; 3] = [10, 20, 30];

/// How often CloudWatch evaluates an alarm of `period` seconds: each minute,
/// or every 10 seconds for a high-resolution alarm ("If the alarm period is
/// 10 seconds or 30 seconds, the alarm is evaluated every 10 seconds",
/// <https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/AlarmThatSendsEmail.html>;
/// 20 seconds is taken as the same).
pub fn evaluation_interval(period: u64) -> u64 {
    if period < PERIOD_SECONDS { 10 } else { PERIOD_SECONDS }
}

/// One metric's datapoints, in the order of their periods.
#[derive(Debug, Clone)]
pub struct Series {
    /// Seconds per period.
    period: u64,
    /// (period, second the datapoint becomes visible, value), by period:
    /// one flat array, as a month of minutes holds tens of thousands.
    points: Vec<(u64, u64, f64)>,
}

impl Default for Series {
    fn default() -> Self {
        Self::with_period(PERIOD_SECONDS)
    }
}

impl Series {
    /// Periods of `period` seconds (at least 1).
    pub fn with_period(period: u64) -> Self {
        Self { period: period.max(1), points: Vec::new() }
    }

    /// Seconds per period.
    pub fn seconds(&self) -> u64 {
        self.period
    }

    /// `PutMetricData` at `timestamp`, readable from `timestamp + lag`.
    pub fn put(&mut self, timestamp: u64, lag: u64, value: f64) {
        let index = timestamp / self.period;
        let point = (index, timestamp + lag, value);
        // Puts come in time order, so this is almost always the end.
        let at = self.points.partition_point(|&(i, _, _)| i <= index);
        self.points.insert(at, point);
    }

    /// Period `index`'s value as an alarm evaluating at `now` reads it;
    /// `None` when no datapoint of it is visible yet (missing data).
    pub fn period(&self, index: u64, statistic: Statistic, now: u64) -> Option<f64> {
        self.span(index, index + 1, statistic, now)
    }

    /// Periods `first..end` as one value: for a minute of 20-second periods.
    pub fn span(&self, first: u64, end: u64, statistic: Statistic, now: u64) -> Option<f64> {
        let from = self.points.partition_point(|&(i, _, _)| i < first);
        let to = self.points.partition_point(|&(i, _, _)| i < end);
        let points = self.points.get(from..to.max(from))?;
        statistic
            .aggregate(points.iter().filter(|&&(_, visible, _)| visible <= now).map(|&(_, _, v)| v))
    }
}

/// Which side of the threshold breaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Comparison {
    /// `GreaterThanThreshold`.
    Greater,
    /// `LessThanThreshold`.
    Less,
}

/// An alarm's state after one evaluation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AlarmState {
    /// Enough periods breach: the alarm's action runs.
    Alarm,
    /// Data, but not enough of it breaching.
    Ok,
    /// No datapoint in any evaluated period.
    InsufficientData,
}

/// An alarm on its metric's periods: `datapoints` of the last `periods` must
/// breach. A missing period does not breach (target tracking's alarms treat
/// missing data as missing, the wake-up alarm as `notBreaching`): with M = N,
/// one missing minute keeps the alarm out of ALARM, so nothing scales on
/// missing data. When periods of the evaluation range are missing,
/// CloudWatch evaluates "the most recent real data points" in it ("How
/// CloudWatch alarms treat missing data",
/// <https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/AlarmThatSendsEmail.html>):
/// a datapoint that arrives later than its period still counts, as
/// [`recent`] reads them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AlarmShape {
    /// The threshold.
    pub threshold: f64,
    /// How a value breaches it.
    pub comparison: Comparison,
    /// Breaching periods needed (M).
    pub datapoints: usize,
    /// Periods evaluated (N).
    pub periods: usize,
}

impl AlarmShape {
    /// Target tracking's high alarm: metric > target for 3 of 3 one-minute
    /// datapoints, the alarm Application Auto Scaling creates for scale-out
    /// ("How target tracking scaling for Application Auto Scaling works",
    /// <https://docs.aws.amazon.com/autoscaling/application/userguide/target-tracking-scaling-policy-overview.html>;
    /// the alarm it creates reads "3 datapoints within 3 minutes").
    pub fn target_tracking_high(target: f64) -> Self {
        Self { threshold: target, comparison: Comparison::Greater, datapoints: 3, periods: 3 }
    }

    /// Target tracking's low alarm: metric < 90 % of the target for 15 of 15
    /// datapoints. Scale-in waits for the metric to sit clearly below the
    /// target (same page: "typically more than 10 % lower"; the alarm reads
    /// "15 datapoints within 15 minutes").
    pub fn target_tracking_low(target: f64) -> Self {
        Self { threshold: 0.9 * target, comparison: Comparison::Less, datapoints: 15, periods: 15 }
    }

    /// The template's `LoadScaleInAlarm`: the load below
    /// [`SCALE_IN_THRESHOLD`] × the target for 3 of 3
    /// one-minute datapoints.
    pub fn load_scale_in(target: f64) -> Self {
        Self {
            threshold: SCALE_IN_THRESHOLD * target,
            comparison: Comparison::Less,
            datapoints: 3,
            periods: 3,
        }
    }

    /// The state for these period values, oldest first; `values.len()` must
    /// be `periods`.
    pub fn evaluate(&self, values: &[Option<f64>]) -> AlarmState {
        if values.iter().all(Option::is_none) {
            return AlarmState::InsufficientData;
        }
        let breaching = values
            .iter()
            .flatten()
            .filter(|&&value| match self.comparison {
                Comparison::Greater => value > self.threshold,
                Comparison::Less => value < self.threshold,
            })
            .count();
        if breaching >= self.datapoints { AlarmState::Alarm } else { AlarmState::Ok }
    }

    /// Evaluates the alarm at `now` over the periods that ended by then.
    pub fn evaluate_series(&self, series: &Series, statistic: Statistic, now: u64) -> AlarmState {
        self.evaluate(&recent(series, statistic, now, self.periods))
    }
}

/// Periods beyond N an alarm's evaluation range reaches back. CloudWatch
/// retrieves "a higher number of data points than the number specified as
/// Evaluation Periods", by an amount it does not publish: three is assumed.
pub const EVALUATION_RANGE_EXTRA: usize = 3;

/// The `periods` most recent periods with a visible datapoint within the
/// evaluation range before `now`, oldest first; padded with missing ones
/// at the front when the range holds fewer.
pub fn recent(series: &Series, statistic: Statistic, now: u64, periods: usize) -> Vec<Option<f64>> {
    let range = window(series, statistic, now, periods + EVALUATION_RANGE_EXTRA);
    let present: Vec<_> = range.into_iter().flatten().collect();
    let kept = present.len().min(periods);
    let mut values = vec![None; periods - kept];
    values.extend(present[present.len() - kept..].iter().map(|&v| Some(v)));
    values
}

/// The last `periods` complete periods before `now`, oldest first.
pub fn window(series: &Series, statistic: Statistic, now: u64, periods: usize) -> Vec<Option<f64>> {
    let current = now / series.period;
    (1..=periods as u64)
        .rev()
        .map(|back| {
            current.checked_sub(back).and_then(|index| series.period(index, statistic, now))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(values: &[Option<f64>]) -> Series {
        let mut series = Series::default();
        for (minute, value) in values.iter().enumerate() {
            if let Some(value) = value {
                series.put(minute as u64 * 60 + 5, 0, *value);
            }
        }
        series
    }

    #[test]
    fn high_alarm_needs_three_breaching_minutes_in_a_row() {
        let high = AlarmShape::target_tracking_high(100.0);
        let at = |values: &[Option<f64>]| {
            high.evaluate_series(&series(values), Statistic::Average, values.len() as u64 * 60)
        };
        assert_eq!(at(&[Some(150.0), Some(150.0), Some(150.0)]), AlarmState::Alarm);
        assert_eq!(at(&[Some(150.0), Some(150.0)]), AlarmState::Ok, "only two minutes yet");
        assert_eq!(at(&[Some(150.0), Some(99.0), Some(150.0)]), AlarmState::Ok);
        assert_eq!(
            at(&[Some(150.0), Some(100.0), Some(150.0)]),
            AlarmState::Ok,
            "equal is not above"
        );
        assert_eq!(at(&[Some(150.0), None, Some(150.0)]), AlarmState::Ok, "a missing minute");
        assert_eq!(at(&[None, None, None]), AlarmState::InsufficientData);
        assert_eq!(at(&[Some(50.0), Some(150.0), Some(150.0), Some(150.0)]), AlarmState::Alarm);
    }

    #[test]
    fn low_alarm_needs_fifteen_minutes_below_ninety_percent() {
        let low = AlarmShape::target_tracking_low(100.0);
        let mut values = vec![Some(89.9); 15];
        assert_eq!(low.evaluate(&values), AlarmState::Alarm);
        values[7] = Some(90.0);
        assert_eq!(low.evaluate(&values), AlarmState::Ok, "90 % of the target is not below it");
        values[7] = None;
        assert_eq!(low.evaluate(&values), AlarmState::Ok, "a missing minute");
        assert_eq!(low.evaluate(&[Some(0.0); 14]), AlarmState::Ok, "fourteen are not fifteen");
    }

    #[test]
    fn a_datapoint_later_than_its_period_still_counts_and_periods_can_be_20_seconds() {
        // One sample per 20-second period, 30 s late: at every evaluation the
        // latest period is still missing, and the alarm reads the three before it.
        let mut series = Series::with_period(20);
        for period in 0..6 {
            series.put(period * 20 + 5, 30, 150.0);
        }
        let high = AlarmShape::target_tracking_high(100.0);
        assert_eq!(
            window(&series, Statistic::Average, 100, 3)[2],
            None,
            "period 4 not yet visible"
        );
        assert_eq!(high.evaluate_series(&series, Statistic::Average, 100), AlarmState::Alarm);
        assert_eq!(
            high.evaluate_series(&series, Statistic::Average, 60),
            AlarmState::Ok,
            "two visible"
        );
        assert_eq!(series.span(0, 3, Statistic::Sum, u64::MAX), Some(450.0), "a minute of three");
        let mut gap = Series::default();
        gap.put(5, 0, 150.0);
        gap.put(65, 0, 150.0);
        gap.put(245, 0, 150.0);
        assert_eq!(
            recent(&gap, Statistic::Average, 300, 3),
            vec![Some(150.0), Some(150.0), Some(150.0)],
            "missing minutes inside the range are skipped"
        );
        assert_eq!(recent(&gap, Statistic::Average, 600, 3), vec![None, None, Some(150.0)]);
        assert_eq!(
            recent(&gap, Statistic::Average, 660, 3),
            vec![None, None, None],
            "out of range"
        );
    }

    #[test]
    fn datapoints_are_invisible_until_the_lag_has_passed() {
        let mut series = Series::default();
        series.put(65, 30, 7.0);
        assert_eq!(series.period(1, Statistic::Average, 94), None);
        assert_eq!(series.period(1, Statistic::Average, 95), Some(7.0));
    }

    #[test]
    fn statistics_aggregate_a_minute() {
        let mut series = Series::default();
        for (second, value) in [(0, 4.0), (10, 8.0), (50, 6.0)] {
            series.put(second, 0, value);
        }
        let at = |statistic| series.period(0, statistic, 60);
        assert_eq!(at(Statistic::Average), Some(6.0));
        assert_eq!(at(Statistic::Sum), Some(18.0));
        assert_eq!(at(Statistic::Maximum), Some(8.0));
        assert_eq!(at(Statistic::Minimum), Some(4.0));
        assert_eq!(series.period(1, Statistic::Sum, 120), None);
    }
}
