//! One invocation of batch-consumer: its batch worked `CONSUMER_CONCURRENCY`
//! messages at a time, each request to the downstream spaced by
//! `DOWNSTREAM_MAX_RPS`, and a downstream pushed past its capacity slowing
//! every request in proportion. Its deadline guard stops at
//! `DEADLINE_MARGIN_MS` before the function's timeout: what has not started
//! or not finished by then is cut and reported as a batch item failure, so
//! the function returns before Lambda would time it out.

use fastrand::Rng;

use crate::random::ServiceTime;
use crate::sim::queue::Message;

/// The downstream the consumer calls.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DownstreamModel {
    /// `DOWNSTREAM_MAX_RPS`: requests per second one function instance sends, at most.
    pub max_rps_per_instance: Option<f64>,
    /// Requests per second the downstream serves at its usual speed; past it,
    /// each request takes longer in proportion to the overload.
    pub capacity_rps: Option<f64>,
}

/// What one invocation is given.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InvocationModel {
    /// `CONSUMER_CONCURRENCY`: messages of one batch worked at once.
    pub slots: u32,
    /// Seconds per message at the downstream's usual speed.
    pub service: ServiceTime,
    /// The function's timeout, seconds.
    pub timeout: f64,
    /// `DEADLINE_MARGIN_MS`, in seconds.
    pub deadline_margin: f64,
    /// The downstream.
    pub downstream: DownstreamModel,
}

/// One message's part in an invocation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Work {
    /// The message.
    pub message: Message,
    /// When its request started, seconds, if it did before the deadline guard.
    pub started: Option<f64>,
    /// It finished before the deadline guard (its outcome is acknowledged).
    pub finished: bool,
}

/// One execution environment: it runs one invocation at a time, and its
/// `DOWNSTREAM_MAX_RPS` limiter lives as long as it does.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Environment {
    /// When its last invocation returned, seconds.
    pub free_at: f64,
    /// The earliest its limiter lets the next request go, seconds.
    pub next_request: f64,
}

impl Environment {
    /// A new environment, ready at `now`.
    pub fn new(now: f64) -> Self {
        Self { free_at: now, next_request: now }
    }
}

/// An invocation as planned when its batch arrives.
#[derive(Debug, Clone, PartialEq)]
pub struct Invocation {
    /// When it began, seconds.
    pub begin: f64,
    /// Its environment as it leaves it.
    pub environment: Environment,
    /// When the function returns, seconds.
    pub end: f64,
    /// Messages the deadline guard cut (unstarted or unfinished).
    pub cut: u64,
    /// Each message, in batch order.
    pub work: Vec<Work>,
}

impl Invocation {
    /// Billed milliseconds: duration rounded up to 1 ms
    /// (<https://aws.amazon.com/lambda/pricing/>).
    pub fn billed_ms(&self) -> u64 {
        ((self.end - self.begin) * 1_000.0).ceil().max(1.0) as u64
    }
}

/// Plans `batch`, received at second `now`, on `environment` (it begins
/// once that is free); `slowdown` (≥ 1) stretches each request for a
/// downstream past its capacity. Calls `request` with the start of every
/// request sent.
pub fn plan(
    model: &InvocationModel,
    now: u64,
    environment: Environment,
    batch: Vec<Message>,
    slowdown: f64,
    rng: &mut Rng,
    mut request: impl FnMut(f64),
) -> Invocation {
    let begin = environment.free_at.max(now as f64);
    let guard = begin + model.timeout - model.deadline_margin;
    let spacing = model.downstream.max_rps_per_instance.map_or(0.0, |rps| 1.0 / rps);
    let mut free = vec![begin; (model.slots as usize).min(batch.len()).max(1)];
    let mut next_request = environment.next_request.max(begin);
    let mut end = begin;
    let work = batch
        .into_iter()
        .map(|message| {
            let (slot, &at) =
                free.iter().enumerate().min_by(|a, b| a.1.total_cmp(b.1)).unwrap_or((0, &begin));
            let start = at.max(next_request);
            if start >= guard {
                return Work { message, started: None, finished: false };
            }
            next_request = start + spacing;
            let finish = start + model.service.draw(rng) * slowdown;
            free[slot] = finish.min(guard);
            end = end.max(finish.min(guard));
            request(start);
            Work { message, started: Some(start), finished: finish <= guard }
        })
        .collect::<Vec<_>>();
    let cut = work.iter().filter(|w| !w.finished).count() as u64;
    let end = if cut > 0 { guard } else { end };
    let environment = Environment { free_at: end, next_request };
    Invocation { begin, environment, end, cut, work }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(slots: u32) -> InvocationModel {
        InvocationModel {
            slots,
            service: ServiceTime::Fixed(1.0),
            timeout: 30.0,
            deadline_margin: 2.0,
            downstream: DownstreamModel { max_rps_per_instance: None, capacity_rps: None },
        }
    }

    fn batch(n: usize) -> Vec<Message> {
        vec![Message { sent: 0, receives: 1, poison: false }; n]
    }

    #[test]
    fn a_batch_is_worked_concurrency_at_a_time() {
        let mut rng = Rng::with_seed(1);
        let planned = plan(&model(4), 10, Environment::new(10.0), batch(10), 1.0, &mut rng, |_| {});
        let starts: Vec<f64> = planned.work.iter().filter_map(|w| w.started).collect();
        assert_eq!(starts, [10.0, 10.0, 10.0, 10.0, 11.0, 11.0, 11.0, 11.0, 12.0, 12.0]);
        assert_eq!((planned.end, planned.billed_ms(), planned.cut), (13.0, 3_000, 0));
    }

    #[test]
    fn the_deadline_guard_cuts_late_messages_and_rps_spaces_requests() {
        let mut rng = Rng::with_seed(1);
        let planned = plan(&model(1), 0, Environment::new(0.0), batch(40), 1.0, &mut rng, |_| {});
        assert_eq!(planned.work.iter().filter(|w| w.finished).count(), 28);
        assert_eq!((planned.cut, planned.end), (12, 28.0));
        let mut spaced = model(10);
        spaced.downstream.max_rps_per_instance = Some(2.0);
        let mut starts = Vec::new();
        let first = plan(&spaced, 0, Environment::new(0.0), batch(4), 1.0, &mut rng, |at| {
            starts.push(at);
        });
        assert_eq!(starts, [0.0, 0.5, 1.0, 1.5]);
        // The next invocation on the same environment keeps its limiter's pace.
        let environment = Environment { free_at: 1.0, ..first.environment };
        plan(&spaced, 1, environment, batch(1), 1.0, &mut rng, |at| starts.push(at));
        assert_eq!(starts[4], 2.0);
    }

    #[test]
    fn a_request_still_running_at_the_guard_is_cut_and_the_function_returns_in_time() {
        let mut rng = Rng::with_seed(1);
        let planned = plan(&model(1), 0, Environment::new(0.0), batch(2), 20.0, &mut rng, |_| {});
        assert_eq!(planned.work[1].started, Some(20.0));
        assert!(planned.work[0].finished && !planned.work[1].finished);
        assert_eq!((planned.cut, planned.end), (1, 28.0));
    }
}
