//! A service that already scales itself on CPU: its target tracking policy
//! on `ECSServiceAverageCPUUtilization`, beside (or instead of) the queue's
//! policy on one scalable target (`ScalingTarget=existing`).

use crate::sim::cloudwatch::{AlarmShape, AlarmState, Series, Statistic, recent};

/// How often the model samples the service's CPU into the minute's
/// average: ECS reports task CPU many times a minute; CloudWatch's
/// `CPUUtilization` for the service is the minute's average.
pub const CPU_SAMPLE_SECONDS: u64 = 10;

/// The service's own CPU target tracking policy, and what its CPU does
/// with the work.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuPolicy {
    /// `TargetValue`: the average CPU utilization, percent, it keeps the service at.
    pub target_percent: f64,
    /// Its `ScaleInCooldown` (Application Auto Scaling's default for ECS: 300 s).
    pub scale_in_cooldown: u64,
    /// A task's CPU with nothing to work on, percent.
    pub idle_percent: f64,
    /// What one message in work adds to its task's CPU, percent.
    pub percent_per_message: f64,
}

impl CpuPolicy {
    /// A task's CPU, percent, with `busy` messages in work: no more than 100.
    pub fn task_percent(&self, busy: usize) -> f64 {
        (self.idle_percent + self.percent_per_message * busy as f64).min(100.0)
    }
}

/// What the CPU policy's alarms said at one evaluation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuEvaluation {
    /// Its high alarm: CPU above the target for 3 of 3 minutes.
    pub high: AlarmState,
    /// Its low alarm: below 90 % of the target for 15 of 15.
    pub low: AlarmState,
    /// The latest minute's CPU, which its capacity is computed from.
    pub metric: Option<f64>,
}

/// The service's `CPUUtilization` as CloudWatch holds it, and the alarms
/// target tracking made for the CPU policy.
#[derive(Debug, Clone)]
pub struct CpuWatch {
    policy: CpuPolicy,
    series: Series,
    high: AlarmShape,
    low: AlarmShape,
}

impl CpuWatch {
    /// Nothing recorded yet.
    pub fn new(policy: CpuPolicy) -> Self {
        Self {
            policy,
            series: Series::default(),
            high: AlarmShape::target_tracking_high(policy.target_percent),
            low: AlarmShape::target_tracking_low(policy.target_percent),
        }
    }

    /// The policy watched.
    pub fn policy(&self) -> CpuPolicy {
        self.policy
    }

    /// Second `now`: on a sample's second, the service's average CPU over
    /// the tasks that report it (`None` with none: no datapoint), readable
    /// `lag` seconds later.
    pub fn sample(&mut self, now: u64, average: impl FnOnce() -> Option<f64>, lag: u64) {
        // Read only on a sample's second: the fleet's tasks are walked for it.
        if now.is_multiple_of(CPU_SAMPLE_SECONDS)
            && let Some(average) = average()
        {
            self.series.put(now, lag, average);
        }
    }

    /// The alarms at `now`.
    pub fn evaluate(&self, now: u64) -> CpuEvaluation {
        let average = Statistic::Average;
        CpuEvaluation {
            high: self.high.evaluate_series(&self.series, average, now),
            low: self.low.evaluate_series(&self.series, average, now),
            metric: recent(&self.series, average, now, 1)[0],
        }
    }

    /// Minute `minute`'s CPU, once every sample is visible.
    pub fn minute(&self, minute: u64) -> Option<f64> {
        self.series.period(minute, Statistic::Average, u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> CpuPolicy {
        CpuPolicy {
            target_percent: 70.0,
            scale_in_cooldown: 300,
            idle_percent: 5.0,
            percent_per_message: 3.0,
        }
    }

    #[test]
    fn a_task_is_busier_with_each_message_up_to_all_of_its_cpu() {
        assert_eq!(policy().task_percent(0), 5.0);
        assert_eq!(policy().task_percent(10), 35.0);
        assert_eq!(policy().task_percent(40), 100.0);
    }

    #[test]
    fn three_minutes_above_the_target_raise_the_high_alarm() {
        let mut watch = CpuWatch::new(policy());
        for now in 0..240 {
            watch.sample(now, || Some(90.0), 30);
        }
        let at = |now| watch.evaluate(now);
        assert_eq!(at(120).high, AlarmState::Ok, "two minutes are not three");
        assert_eq!(at(180).high, AlarmState::Alarm);
        assert_eq!(at(240).metric, Some(90.0));
        let mut none = CpuWatch::new(policy());
        none.sample(0, || None, 30);
        assert_eq!(none.evaluate(240).high, AlarmState::InsufficientData, "no task, no datapoint");
    }
}
