//! What a run measured: waits, cost, scaling activity, and the state each
//! minute for the pictures.

use crate::sim::autoscaling::ScalingAction;
use crate::sim::policy::Consumer;
use crate::sim::queue::Message;

/// Seconds each message waited between being sent and the start of the
/// processing that completed it, in one-second buckets.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Waits {
    buckets: Vec<u64>,
    count: u64,
}

impl Waits {
    /// Records one wait.
    pub fn record(&mut self, seconds: f64) {
        let bucket = seconds.max(0.0) as usize;
        if self.buckets.len() <= bucket {
            self.buckets.resize(bucket + 1, 0);
        }
        self.buckets[bucket] += 1;
        self.count += 1;
    }

    /// Waits recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Waits of `seconds` or longer: at one-second resolution a wait in
    /// [`seconds`, `seconds` + 1) counts as over, so misses are never
    /// under-counted.
    pub fn above(&self, seconds: u64) -> u64 {
        self.buckets.iter().skip(seconds as usize).sum()
    }

    /// The `q` quantile, in whole seconds (the bucket's upper edge); `None`
    /// without waits.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.count == 0 {
            return None;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (bucket, &n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return Some(bucket as u64 + 1);
            }
        }
        None
    }
}

/// Messages still in the queue or held at the end of a run (second `end`):
/// how many, and how many of those not poison had already waited `slo`
/// seconds or more.
pub fn leftovers(messages: impl Iterator<Item = Message>, end: u64, slo: u64) -> (u64, u64) {
    messages.fold((0, 0), |(left, late), message| {
        let waited = end.saturating_sub(u64::from(message.sent));
        (left + 1, late + u64::from(!message.poison && waited >= slo))
    })
}

/// The state at the end of one minute.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Minute {
    /// Messages sent during the minute.
    pub arrivals: u64,
    /// Visible messages at its end.
    pub visible: u64,
    /// Tasks running at its end.
    pub running: u64,
    /// The desired count at its end.
    pub desired: u64,
    /// The policy's metric for the minute, by its statistic; `None` when
    /// nothing was published.
    pub metric: Option<f64>,
    /// Seconds the message at the head of the queue had waited at its end.
    pub head_wait: Option<u64>,
}

/// Everything one policy's run produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// What consumed the queue (for ECS, under which policy).
    pub consumer: Consumer,
    /// Messages sent.
    pub sent: u64,
    /// Messages processed and deleted.
    pub processed: u64,
    /// Messages moved to the DLQ.
    pub dead_lettered: u64,
    /// Of those, messages that were not poison: never processed, so each missed the SLO.
    pub dead_lettered_healthy: u64,
    /// Messages left visible or in flight at the end.
    pub left: u64,
    /// Non-poison messages left at the end that had already waited past the SLO.
    pub left_late: u64,
    /// Non-poison messages sent (what the SLO is counted over).
    pub counted: u64,
    /// Waits of the processed messages.
    pub waits: Waits,
    /// When the last processed message finished, seconds from the trace's
    /// start: a burst's drain time.
    pub last_finish: Option<f64>,
    /// The latency SLO, seconds.
    pub slo_seconds: u64,
    /// Billed task-seconds.
    pub task_seconds: u64,
    /// Every change of the desired count.
    pub actions: Vec<ScalingAction>,
    /// For each time messages waited with no task running: seconds until the
    /// first task ran, `None` if none ever did.
    pub zero_to_first_task: Vec<Option<u64>>,
    /// Per minute, for the pictures.
    pub minutes: Vec<Minute>,
}

#[cfg(test)]
impl Outcome {
    /// A run of nothing under `consumer`, for tests to fill in what they need.
    pub(crate) fn nothing(consumer: Consumer, minutes: Vec<Minute>) -> Self {
        Self {
            consumer,
            sent: 0,
            processed: 0,
            dead_lettered: 0,
            dead_lettered_healthy: 0,
            left: 0,
            left_late: 0,
            counted: 0,
            waits: Waits::default(),
            last_finish: None,
            slo_seconds: 300,
            task_seconds: 0,
            actions: Vec::new(),
            zero_to_first_task: Vec::new(),
            minutes,
        }
    }
}

impl Outcome {
    /// Messages whose wait exceeded the SLO: processed late, still waiting
    /// past it, or moved to the DLQ without ever being processed.
    pub fn slo_misses(&self) -> u64 {
        self.waits.above(self.slo_seconds) + self.left_late + self.dead_lettered_healthy
    }

    /// Whether at most `1 − quantile` of the messages missed the SLO.
    pub fn meets_slo(&self, quantile: f64) -> bool {
        self.slo_misses() as f64 <= (1.0 - quantile) * self.counted as f64
    }

    /// Billed task-minutes: the cost.
    pub fn task_minutes(&self) -> f64 {
        self.task_seconds as f64 / 60.0
    }

    /// Times the scaling direction reversed.
    pub fn direction_changes(&self) -> usize {
        self.actions
            .windows(2)
            .filter(|pair| (pair[0].to > pair[0].from) != (pair[1].to > pair[1].from))
            .count()
    }

    /// The longest wait from messages at zero tasks to a running task;
    /// `Some(None)` when one never ended, `None` when it never happened.
    pub fn worst_zero_to_first_task(&self) -> Option<Option<u64>> {
        if self.zero_to_first_task.contains(&None) {
            return Some(None);
        }
        self.zero_to_first_task.iter().flatten().max().map(|&worst| Some(worst))
    }

    /// The highest desired count.
    pub fn peak_desired(&self) -> u64 {
        self.minutes.iter().map(|minute| minute.desired).max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_bucket_upper_edges() {
        let mut waits = Waits::default();
        for seconds in 0..100 {
            waits.record(f64::from(seconds) + 0.5);
        }
        assert_eq!(waits.quantile(0.5), Some(50));
        assert_eq!(waits.quantile(0.99), Some(99));
        assert_eq!(waits.quantile(1.0), Some(100));
        assert_eq!(waits.above(90), 10);
        assert_eq!(Waits::default().quantile(0.5), None);
    }
}
