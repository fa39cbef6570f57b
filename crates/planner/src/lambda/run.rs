//! The Lambda consumer, one second at a time: the trace's messages arrive,
//! leases lapse, invocations that are over settle their batches, the
//! mapping invokes as many batches as its concurrency allows, and scales.

use std::collections::BTreeMap;

use fastrand::Rng;

use super::LambdaModel;
use super::esm::Scaling;
use super::invoke::{Environment, Invocation, plan};
use crate::sim::policy::Consumer;
use crate::sim::queue::{Message, Queue};
use crate::sim::{Scenario, settled};
use crate::stats::{Minute, Outcome, Waits};

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
    let mut run = LambdaRun::new(scenario);
    let end = scenario.trace.seconds() + scenario.tail_seconds;
    for now in 0..end {
        run.arrive(now);
        run.queue.expire_leases(now);
        run.settle_returned(now);
        run.invoke(now);
        run.scale();
        if now % 60 == 59 {
            run.close_minute(now);
        }
    }
    run.outcome(end)
}

/// A Lambda run between two seconds.
#[derive(Debug)]
struct LambdaRun<'a> {
    scenario: &'a Scenario,
    model: LambdaModel,
    /// The downstream's capacity, requests a second.
    capacity: Option<f64>,
    poison_rng: Rng,
    service_rng: Rng,
    queue: Queue,
    scaling: Scaling,
    running: Vec<Invocation>,
    /// Environments between invocations: one that returned during this second
    /// takes the next batch from the moment it returned.
    idle: Vec<Environment>,
    waits: Waits,
    requests: Requests,
    invocations: u64,
    billed_ms: u64,
    cut: u64,
    peak: u32,
    /// Non-poison messages sent.
    counted: u64,
    minute_arrivals: u64,
    last_finish: Option<f64>,
    /// The second the mapping began gathering a batch that is not full yet.
    gathering: Option<u64>,
    minutes: Vec<Minute>,
}

impl<'a> LambdaRun<'a> {
    fn new(scenario: &'a Scenario) -> Self {
        let model = scenario.lambda;
        Self {
            scenario,
            model,
            capacity: model.invocation.downstream.capacity_rps,
            poison_rng: Rng::with_seed(scenario.seed ^ 0x01),
            service_rng: Rng::with_seed(scenario.seed ^ 0x02),
            queue: Queue::new(scenario.queue),
            scaling: Scaling::new(model.esm),
            running: Vec::new(),
            idle: Vec::new(),
            waits: Waits::default(),
            requests: Requests::default(),
            invocations: 0,
            billed_ms: 0,
            cut: 0,
            peak: 0,
            counted: 0,
            minute_arrivals: 0,
            last_finish: None,
            gathering: None,
            minutes: Vec::new(),
        }
    }

    /// Sends the trace's messages of second `now`.
    fn arrive(&mut self, now: u64) {
        let (arrivals, healthy) =
            crate::sim::arrive(self.scenario, now, &mut self.queue, &mut self.poison_rng);
        self.minute_arrivals += arrivals;
        self.counted += healthy;
    }

    /// Settles the batches of the invocations over by the end of second `now`
    /// and keeps their environments for the next batches.
    fn settle_returned(&mut self, now: u64) {
        let freed = self.idle.len();
        let Self { running, idle, queue, waits, last_finish, .. } = self;
        running.retain(|invocation| {
            if invocation.end >= (now + 1) as f64 {
                return true;
            }
            for work in &invocation.work {
                match work.started {
                    Some(started) if work.finished && !work.message.poison => {
                        queue.delete();
                        waits.record(started - f64::from(work.message.sent));
                        *last_finish = Some(invocation.end);
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
    }

    /// Invokes as many batches as the mapping's concurrency allows, each once
    /// it is full or its batching window has passed.
    fn invoke(&mut self, now: u64) {
        self.requests.settle(now.saturating_sub(1), self.capacity);
        let last_second =
            self.requests.per_second.get(&now.saturating_sub(1)).copied().unwrap_or(0);
        let slowdown = self.capacity.map_or(1.0, |c| (last_second as f64 / c).max(1.0));
        let batch_size = u64::from(self.model.esm.batch_size);
        while (self.running.len() as u32) < self.scaling.limit() && self.queue.visible() > 0 {
            let full = self.queue.visible() >= batch_size;
            let since = *self.gathering.get_or_insert(now);
            if !full && now - since < self.model.esm.batching_window {
                break;
            }
            let batch: Vec<Message> =
                std::iter::from_fn(|| self.queue.receive()).take(batch_size as usize).collect();
            self.gathering = None;
            if batch.is_empty() {
                break;
            }
            let environment = self.idle.pop().unwrap_or_else(|| Environment::new(now as f64));
            let requests = &mut self.requests;
            let planned = plan(
                &self.model.invocation,
                now,
                environment,
                batch,
                slowdown,
                &mut self.service_rng,
                |at| {
                    // To the microsecond: a limiter's 20 steps of 0.05 s end at 1 s, not before.
                    let second = ((at * 1e6).round() / 1e6) as u64;
                    *requests.per_second.entry(second).or_default() += 1;
                },
            );
            self.invocations += 1;
            self.billed_ms += planned.billed_ms();
            self.cut += planned.cut;
            self.running.push(planned);
        }
        if self.queue.visible() == 0 {
            self.gathering = None;
        }
    }

    /// The end of a second for the mapping's concurrency.
    fn scale(&mut self) {
        let running = self.running.len() as u32;
        self.peak = self.peak.max(running);
        self.scaling.tick(running, self.queue.visible());
    }

    /// Records the minute that ends with second `now`.
    fn close_minute(&mut self, now: u64) {
        self.minutes.push(Minute {
            arrivals: self.minute_arrivals,
            visible: self.queue.visible(),
            running: self.running.len() as u64,
            desired: u64::from(self.scaling.limit()),
            metric: None,
            head_wait: self.queue.head_sent().map(|sent| now.saturating_sub(u64::from(sent))),
        });
        self.minute_arrivals = 0;
    }

    /// What the run did, `end` seconds in: messages still queued or held by
    /// an invocation are left.
    fn outcome(mut self, end: u64) -> LambdaOutcome {
        self.requests.settle(u64::MAX, self.capacity);
        let held = self.running.iter().flat_map(|i| i.work.iter().map(|w| w.message));
        let settled = settled(
            Consumer::Lambda,
            self.scenario,
            &self.queue,
            held,
            self.waits,
            self.counted,
            end,
        );
        let outcome = Outcome {
            last_finish: self.last_finish,
            task_seconds: self.billed_ms.div_ceil(1_000),
            minutes: self.minutes,
            ..settled
        };
        LambdaOutcome {
            outcome,
            invocations: self.invocations,
            billed_ms: self.billed_ms,
            memory_mb: self.model.memory_mb,
            cut: self.cut,
            peak_concurrency: self.peak,
            downstream_peak_rps: self.requests.peak,
            seconds_over_capacity: self.requests.over,
        }
    }
}
