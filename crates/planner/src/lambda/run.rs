//! The Lambda consumer, one second at a time: the trace's messages arrive,
//! leases lapse, invocations that are over settle their batches, the
//! mapping invokes as many batches as its concurrency allows, and scales.

use std::collections::BTreeMap;

use fastrand::Rng;

use super::esm::Scaling;
use super::invoke::{Environment, Invocation, plan};
use crate::policy::Consumer;
use crate::queue::{Message, Queue};
use crate::sim::Scenario;
use crate::stats::{Minute, Outcome, Waits, leftovers};

/// A Lambda run: the shared outcome, and what only a Lambda run has.
#[derive(Debug, Clone, PartialEq)]
pub struct LambdaOutcome {
    /// Waits, misses, per-minute state (`running`: invocations running,
    /// `desired`: the mapping's concurrency limit) and billed duration as
    /// `task_seconds`.
    pub outcome: Outcome,
    /// Invocations (Lambda requests billed).
    pub invocations: u64,
    /// Billed duration, milliseconds.
    pub billed_ms: u64,
    /// `ConsumerMemorySize`, MB.
    pub memory_mb: u32,
    /// Messages the deadline guard cut (retried after their visibility timeout).
    pub cut: u64,
    /// The most invocations running at once.
    pub peak_concurrency: u32,
    /// The most requests the downstream received in one second.
    pub downstream_peak_rps: u64,
    /// Seconds in which the downstream received more than its capacity.
    pub seconds_over_capacity: u64,
}

impl LambdaOutcome {
    /// Billed GB-seconds: duration × memory.
    pub fn gb_seconds(&self) -> f64 {
        self.billed_ms as f64 / 1_000.0 * f64::from(self.memory_mb) / 1_024.0
    }
}

/// Requests the downstream received, per second.
#[derive(Debug, Default)]
struct Requests {
    per_second: BTreeMap<u64, u64>,
    peak: u64,
    over: u64,
}

impl Requests {
    /// Folds in every second before `now`, which can get no more requests.
    fn settle(&mut self, now: u64, capacity: Option<f64>) {
        while let Some(entry) = self.per_second.first_entry() {
            if *entry.key() >= now {
                break;
            }
            let n = entry.remove();
            self.peak = self.peak.max(n);
            self.over += u64::from(capacity.is_some_and(|c| n as f64 > c));
        }
    }
}

/// Runs the Lambda consumer on `scenario` (its `lambda` settings).
pub fn run(scenario: &Scenario) -> LambdaOutcome {
    let model = scenario.lambda;
    let mut poison_rng = Rng::with_seed(scenario.seed ^ 0x01);
    let mut service_rng = Rng::with_seed(scenario.seed ^ 0x02);
    let mut queue = Queue::new(scenario.queue);
    let mut scaling = Scaling::new(model.esm);
    let mut running: Vec<Invocation> = Vec::new();
    // Environments between invocations: one that returned during this second
    // takes the next batch from the moment it returned.
    let mut idle: Vec<Environment> = Vec::new();
    let mut waits = Waits::default();
    let mut requests = Requests::default();
    let capacity = model.invocation.downstream.capacity_rps;
    let (mut invocations, mut billed_ms, mut cut, mut peak) = (0, 0, 0, 0);
    let (mut counted, mut minute_arrivals, mut last_finish) = (0, 0, None);
    let mut gathering: Option<u64> = None;
    let mut minutes = Vec::new();

    let end = scenario.trace.seconds() + scenario.tail_seconds;
    for now in 0..end {
        let arrivals = scenario.trace.arrivals.get(now as usize).copied().unwrap_or(0);
        for _ in 0..arrivals {
            let poison = poison_rng.f64() < scenario.queue.poison_fraction;
            counted += u64::from(!poison);
            queue.send(Message { sent: now as u32, receives: 0, poison });
        }
        minute_arrivals += u64::from(arrivals);
        queue.expire_leases(now);

        let freed = idle.len();
        running.retain(|invocation| {
            if invocation.end >= (now + 1) as f64 {
                return true;
            }
            for work in &invocation.work {
                match work.started {
                    Some(started) if work.finished && !work.message.poison => {
                        queue.delete();
                        waits.record(started - f64::from(work.message.sent));
                        last_finish = Some(invocation.end);
                    }
                    // Failed or cut: back when its visibility timeout ends.
                    _ => queue.lapse(work.message, invocation.begin as u64),
                }
            }
            idle.push(invocation.environment);
            false
        });
        if idle.len() > freed {
            // Latest first, so `pop` takes the environment that has been free longest.
            idle.sort_by(|a, b| b.free_at.total_cmp(&a.free_at));
        }

        requests.settle(now.saturating_sub(1), capacity);
        let last_second = requests.per_second.get(&now.saturating_sub(1)).copied().unwrap_or(0);
        let slowdown = capacity.map_or(1.0, |c| (last_second as f64 / c).max(1.0));
        let batch_size = u64::from(model.esm.batch_size);
        while (running.len() as u32) < scaling.limit() && queue.visible() > 0 {
            let full = queue.visible() >= batch_size;
            let since = *gathering.get_or_insert(now);
            if !full && now - since < model.esm.batching_window {
                break;
            }
            let batch: Vec<Message> =
                std::iter::from_fn(|| queue.receive()).take(batch_size as usize).collect();
            gathering = None;
            if batch.is_empty() {
                break;
            }
            let environment = idle.pop().unwrap_or_else(|| Environment::new(now as f64));
            let planned = plan(
                &model.invocation,
                now,
                environment,
                batch,
                slowdown,
                &mut service_rng,
                |at| {
                    // To the microsecond: a limiter's 20 steps of 0.05 s end at 1 s, not before.
                    let second = ((at * 1e6).round() / 1e6) as u64;
                    *requests.per_second.entry(second).or_default() += 1;
                },
            );
            invocations += 1;
            billed_ms += planned.billed_ms();
            cut += planned.cut;
            running.push(planned);
        }
        if queue.visible() == 0 {
            gathering = None;
        }
        peak = peak.max(running.len() as u32);
        scaling.tick(running.len() as u32, queue.visible());

        if now % 60 == 59 {
            minutes.push(Minute {
                arrivals: minute_arrivals,
                visible: queue.visible(),
                running: running.len() as u64,
                desired: u64::from(scaling.limit()),
                metric: None,
                head_wait: queue.head_sent().map(|sent| now.saturating_sub(u64::from(sent))),
            });
            minute_arrivals = 0;
        }
    }
    requests.settle(u64::MAX, capacity);

    let slo = scenario.slo.latency_seconds;
    let held = running.iter().flat_map(|i| i.work.iter().map(|w| w.message));
    let (left, left_late) = leftovers(queue.remaining().chain(held), end, slo);
    let outcome = Outcome {
        consumer: Consumer::Lambda,
        sent: scenario.trace.total(),
        processed: waits.count(),
        dead_lettered: queue.dead_lettered(),
        dead_lettered_healthy: queue.dead_lettered_healthy(),
        left,
        left_late,
        counted,
        waits,
        last_finish,
        slo_seconds: slo,
        task_seconds: billed_ms.div_ceil(1_000),
        actions: Vec::new(),
        zero_to_first_task: Vec::new(),
        minutes,
    };
    LambdaOutcome {
        outcome,
        invocations,
        billed_ms,
        memory_mb: model.memory_mb,
        cut,
        peak_concurrency: peak,
        downstream_peak_rps: requests.peak,
        seconds_over_capacity: requests.over,
    }
}
