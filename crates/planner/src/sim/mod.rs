//! The simulation loop: one second at a time, the trace's messages arrive,
//! leases lapse, tasks work, the publisher samples on its schedule, the
//! alarms evaluate each minute and ECS follows the desired count.

pub mod autoscaling;
pub mod cloudwatch;
pub mod cpu;
pub mod fleet;
pub mod policy;
pub mod publisher;
pub mod queue;
mod scenario;

pub use scenario::{FARGATE_STARTUP, Scenario, Slo};

use backlog_publisher::backlog::Readings;
use backlog_publisher::{QueueCounts, ServiceCounts};
use fastrand::Rng;

use crate::defaults;
use crate::sim::autoscaling::{Scaler, ScalingAction, ScalingConfig};
use crate::sim::cloudwatch::PERIOD_SECONDS;
use crate::sim::cpu::CpuWatch;
use crate::sim::fleet::Fleet;
use crate::sim::policy::{Consumer, Policy};
use crate::sim::publisher::Publisher;
use crate::sim::queue::{Message, Queue};
use crate::stats::{Minute, Outcome, Waits, leftovers};

/// Separate generators per concern, so that every policy sees the same
/// poison messages and service times in the same order.
#[derive(Debug)]
struct Rngs {
    poison: Rng,
    service: Rng,
    startup: Rng,
    schedule: Rng,
}

impl Rngs {
    fn new(seed: u64) -> Self {
        Self {
            poison: Rng::with_seed(seed ^ 0x01),
            service: Rng::with_seed(seed ^ 0x02),
            startup: Rng::with_seed(seed ^ 0x03),
            schedule: Rng::with_seed(seed ^ 0x04),
        }
    }
}

/// Runs `policy` on `scenario`.
pub fn run(scenario: &Scenario, policy: Policy) -> Outcome {
    let mut run = EcsRun::new(scenario, policy);
    let end = scenario.trace.seconds() + scenario.tail_seconds;
    for now in 0..end {
        run.arrive(now);
        run.queue.expire_leases(now);
        run.fleet.work(now, &mut run.queue, &mut run.rngs.service, &mut run.waits);
        run.publish_and_scale(now);
        run.watch_for_zero(now);
        if now % PERIOD_SECONDS == PERIOD_SECONDS - 1 {
            run.close_minute(now);
        }
    }
    run.outcome(end)
}

/// Sends the trace's messages of second `now` to `queue`, each poison with
/// the scenario's probability: how many arrived, and how many of them are not
/// poison.
pub(crate) fn arrive(
    scenario: &Scenario,
    now: u64,
    queue: &mut Queue,
    poison: &mut Rng,
) -> (u64, u64) {
    let arrivals = scenario.trace.arrivals.get(now as usize).copied().unwrap_or(0);
    let mut healthy = 0;
    for _ in 0..arrivals {
        let poison = poison.f64() < scenario.queue.poison_fraction;
        healthy += u64::from(!poison);
        queue.send(Message { sent: now as u32, receives: 0, poison });
    }
    (u64::from(arrivals), healthy)
}

/// A run's outcome `end` seconds in, as its queue and `waits` tell it: the
/// messages still queued or `held` by the consumer are left. What only the
/// consumer knows (its billing, actions, minutes and last finish) the caller
/// sets.
pub(crate) fn settled(
    consumer: Consumer,
    scenario: &Scenario,
    queue: &Queue,
    held: impl Iterator<Item = Message>,
    waits: Waits,
    counted: u64,
    end: u64,
) -> Outcome {
    let slo = scenario.slo.latency_seconds;
    let (left, left_late) = leftovers(queue.remaining().chain(held), end, slo);
    Outcome {
        consumer,
        sent: scenario.trace.total(),
        processed: waits.count(),
        dead_lettered: queue.dead_lettered(),
        dead_lettered_healthy: queue.dead_lettered_healthy(),
        left,
        left_late,
        counted,
        waits,
        last_finish: None,
        slo_seconds: slo,
        task_seconds: 0,
        actions: Vec::new(),
        zero_to_first_task: Vec::new(),
        minutes: Vec::new(),
    }
}

/// An ECS run between two seconds.
#[derive(Debug)]
struct EcsRun<'a> {
    scenario: &'a Scenario,
    policy: Policy,
    rngs: Rngs,
    queue: Queue,
    fleet: Fleet,
    scaler: Scaler,
    publisher: Publisher,
    /// The service's own CPU policy, on a target it shares with the queue's.
    cpu: Option<CpuWatch>,
    /// Seconds between two evaluations of the alarms.
    every: u64,
    waits: Waits,
    actions: Vec<ScalingAction>,
    /// Each spell of messages waiting with no task running: its seconds, or
    /// `None` for one the run ended in.
    episodes: Vec<Option<u64>>,
    zero_since: Option<u64>,
    minutes: Vec<Minute>,
    minute_arrivals: u64,
    /// Non-poison messages sent.
    counted: u64,
}

impl<'a> EcsRun<'a> {
    fn new(scenario: &'a Scenario, policy: Policy) -> Self {
        let target = scenario.target_of(policy);
        // Beside a service's own CPU policy the queue's is the operator's plain target
        // tracking policy: the template's step policies come only with its own target.
        let step_scale_in = match (policy, scenario.scaling.cpu) {
            (Policy::Load, None) => Some(defaults::LOAD_SCALE_IN_COOLDOWN),
            _ => None,
        };
        let mut rngs = Rngs::new(scenario.seed);
        let mut queue = Queue::new(scenario.queue);
        let mut fleet = Fleet::new(scenario.workers, scenario.initial_tasks);
        let scaler = Scaler::new(
            ScalingConfig { target, step_scale_in, ..scenario.scaling },
            scenario.initial_tasks,
        );
        fleet.reconcile(0, scaler.desired(), &mut queue, &mut rngs.startup);
        let publisher = Publisher::new(scenario.publisher, policy, target);
        Self {
            scenario,
            policy,
            rngs,
            queue,
            fleet,
            scaler,
            cpu: scenario.scaling.cpu.map(CpuWatch::new),
            every: publisher.evaluation_interval(),
            publisher,
            waits: Waits::default(),
            actions: Vec::new(),
            episodes: Vec::new(),
            zero_since: None,
            minutes: Vec::new(),
            minute_arrivals: 0,
            counted: 0,
        }
    }

    /// Sends the trace's messages of second `now`.
    fn arrive(&mut self, now: u64) {
        let (arrivals, healthy) =
            arrive(self.scenario, now, &mut self.queue, &mut self.rngs.poison);
        self.minute_arrivals += arrivals;
        self.counted += healthy;
    }

    /// The publisher samples on its schedule, the alarms evaluate on theirs,
    /// and ECS follows the desired count.
    fn publish_and_scale(&mut self, now: u64) {
        let Self { queue, fleet, scaler, publisher, rngs, .. } = self;
        let read = || Readings {
            queue: QueueCounts {
                visible: queue.visible(),
                in_flight: queue.in_flight(),
                delayed: 0,
            },
            service: ServiceCounts {
                running: fleet.running(),
                pending: fleet.pending(),
                desired: scaler.desired(),
            },
            dlq_visible: None,
        };
        publisher.tick(now, read, &mut rngs.schedule);
        let lag = self.scenario.publisher.metric_lag_seconds;
        if let Some(cpu) = &mut self.cpu {
            let policy = cpu.policy();
            cpu.sample(now, || fleet.cpu_percent(&policy), lag);
        }
        let evaluation = |now| match &self.cpu {
            None => publisher.evaluation(now),
            Some(cpu) => {
                let queue = publisher.evaluation(now);
                let cpu = Some(cpu.evaluate(now));
                crate::sim::autoscaling::Evaluation { wake_up: false, cpu, ..queue }
            }
        };
        if now > 0
            && now.is_multiple_of(self.every)
            && let Some(action) = scaler.evaluate(now, fleet.running(), evaluation(now))
        {
            self.actions.push(action);
        }
        fleet.reconcile(now, scaler.desired(), queue, &mut rngs.startup);
    }

    /// Opens a spell when messages wait and no task runs; closes it when one
    /// does. A spell whose messages were all finished without a task running
    /// (by the last task as it drained) waited for no task, and is dropped:
    /// it would otherwise read as a wake-up that never came.
    fn watch_for_zero(&mut self, now: u64) {
        let waiting = self.queue.visible() + self.queue.in_flight() > 0;
        match (self.zero_since, self.fleet.running()) {
            (None, 0) if waiting => self.zero_since = Some(now),
            (Some(since), running) if running > 0 => {
                self.episodes.push(Some(now - since));
                self.zero_since = None;
            }
            (Some(_), _) if !waiting => self.zero_since = None,
            _ => {}
        }
    }

    /// Records the minute that ends with second `now`.
    fn close_minute(&mut self, now: u64) {
        let minute = now / PERIOD_SECONDS;
        self.minutes.push(Minute {
            arrivals: self.minute_arrivals,
            visible: self.queue.visible(),
            running: self.fleet.running(),
            desired: self.scaler.desired(),
            metric: match (&self.cpu, self.scenario.scaling.queue_policy) {
                (Some(cpu), false) => cpu.minute(minute),
                _ => self.publisher.minute(minute),
            },
            head_wait: self.queue.head_sent().map(|sent| now.saturating_sub(u64::from(sent))),
        });
        self.minute_arrivals = 0;
    }

    /// What the run did, `end` seconds in: messages still queued or held by a
    /// task are left.
    fn outcome(mut self, end: u64) -> Outcome {
        if self.zero_since.is_some() {
            self.episodes.push(None);
        }
        let (consumer, held) = (Consumer::Ecs(self.policy), self.fleet.holding());
        let settled =
            settled(consumer, self.scenario, &self.queue, held, self.waits, self.counted, end);
        Outcome {
            last_finish: self.fleet.last_finish(),
            task_seconds: self.fleet.bill_remaining(end),
            actions: self.actions,
            zero_to_first_task: self.episodes,
            minutes: self.minutes,
            ..settled
        }
    }
}
