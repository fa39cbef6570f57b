//! The ECS service's tasks: start-up, slots working through messages,
//! scale-in (idle tasks first, optional drain) and per-second billing.

use fastrand::Rng;

use crate::random::{ServiceTime, standard_normal};
use crate::sim::queue::{Message, Queue};
use crate::stats::Waits;

/// The workers' settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WorkerModel {
    /// Mean seconds from launch to running (Fargate: 57 s).
    pub startup_seconds: f64,
    /// Standard deviation of the start-up time.
    pub startup_jitter: f64,
    /// Messages one task works on at once (`k`).
    pub slots: u32,
    /// Seconds per message.
    pub service: ServiceTime,
    /// On scale-in, seconds a stopping task may finish its messages before it
    /// releases the rest (sqs-worker's `DRAIN_SECONDS`); `None` stops it at
    /// once, leaving its messages to lapse.
    pub drain_seconds: Option<u64>,
    /// Scale-in stops idle tasks before busy ones (task scale-in protection).
    pub idle_first: bool,
    /// A spell in which every message takes longer (a slow downstream).
    pub slowdown: Option<Slowdown>,
}

/// Messages started from `from` until `until` (seconds) take `factor` × as long.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Slowdown {
    /// First second.
    pub from: u64,
    /// Second after the last.
    pub until: u64,
    /// How many times as long.
    pub factor: f64,
}

/// Fargate bills per second from the image download until the task stops,
/// with a one-minute minimum (<https://aws.amazon.com/fargate/pricing/>).
const MINIMUM_BILLED_SECONDS: u64 = 60;

#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    Pending { ready_at: u64 },
    Running,
    Draining { deadline: u64 },
}

#[derive(Debug, Clone)]
struct Task {
    launched: u64,
    state: State,
    /// Per slot: when its message finishes (or its last one finished, when
    /// idle). Apart from `work` so that a second's scan for slots that are
    /// due or idle reads one small array.
    busy_until: Vec<f64>,
    /// Per slot: the message and when its processing started.
    work: Vec<Option<(Message, f64)>>,
    /// When its first working slot finishes (infinity with none working) and
    /// how many slots are idle, as of its last second of work: a second in
    /// which nothing finishes and nothing can be received skips its slots.
    next_due: f64,
    idle: usize,
}

impl Task {
    fn busy(&self) -> usize {
        self.work.iter().filter(|work| work.is_some()).count()
    }
}

/// The service's tasks.
#[derive(Debug, Clone)]
pub struct Fleet {
    model: WorkerModel,
    tasks: Vec<Task>,
    billed_seconds: u64,
    last_finish: Option<f64>,
}

impl Fleet {
    /// `initial` tasks already running at second 0.
    pub fn new(model: WorkerModel, initial: u64) -> Self {
        let mut fleet = Self { model, tasks: Vec::new(), billed_seconds: 0, last_finish: None };
        for _ in 0..initial {
            fleet.tasks.push(fleet.task(0, State::Running));
        }
        fleet
    }

    fn task(&self, launched: u64, state: State) -> Task {
        let slots = self.model.slots as usize;
        Task {
            launched,
            state,
            busy_until: vec![0.0; slots],
            work: vec![None; slots],
            next_due: f64::INFINITY,
            idle: slots,
        }
    }

    /// Tasks in RUNNING and receiving (ECS `runningCount`).
    pub fn running(&self) -> u64 {
        self.tasks.iter().filter(|task| task.state == State::Running).count() as u64
    }

    /// The service's average CPU, percent, over the tasks that run (draining
    /// ones too: they still report), as `cpu` says a task's CPU follows its
    /// work; `None` when none runs.
    pub fn cpu_percent(&self, cpu: &crate::sim::cpu::CpuPolicy) -> Option<f64> {
        let reporting =
            self.tasks.iter().filter(|task| !matches!(task.state, State::Pending { .. }));
        let (count, total) = reporting
            .fold((0_u32, 0.0), |(n, sum), task| (n + 1, sum + cpu.task_percent(task.busy())));
        (count > 0).then(|| total / f64::from(count))
    }

    /// Tasks starting (ECS `pendingCount`).
    pub fn pending(&self) -> u64 {
        self.tasks.iter().filter(|task| matches!(task.state, State::Pending { .. })).count() as u64
    }

    /// Seconds billed so far for tasks that have stopped.
    pub fn billed_seconds(&self) -> u64 {
        self.billed_seconds
    }

    /// When the last message processed so far finished, seconds.
    pub fn last_finish(&self) -> Option<f64> {
        self.last_finish
    }

    /// Bills every task still alive up to `now` (the end of a run).
    pub fn bill_remaining(&mut self, now: u64) -> u64 {
        let alive: u64 = self.tasks.iter().map(|task| bill(task.launched, now)).sum();
        self.billed_seconds + alive
    }

    /// Messages held in slots.
    pub fn holding(&self) -> impl Iterator<Item = Message> + '_ {
        self.tasks.iter().flat_map(|task| task.work.iter().filter_map(|work| work.map(|(m, _)| m)))
    }

    /// Moves the service towards `desired` tasks at `now`.
    pub fn reconcile(&mut self, now: u64, desired: u64, queue: &mut Queue, rng: &mut Rng) {
        let active = self.running() + self.pending();
        for _ in active..desired {
            let startup =
                self.model.startup_seconds + self.model.startup_jitter * standard_normal(rng);
            let ready_at = now + startup.round().max(1.0) as u64;
            self.tasks.push(self.task(now, State::Pending { ready_at }));
        }
        for _ in desired..active {
            self.stop_one(now, queue);
        }
    }

    /// Stops the task ECS would pick: one still starting, else (with
    /// scale-in protection) an idle one, else the least busy. A protected
    /// task is not stopped at scale-in ("Protect your Amazon ECS tasks from
    /// being terminated by scale-in events",
    /// <https://docs.aws.amazon.com/AmazonECS/latest/developerguide/task-scale-in-protection.html>);
    /// sqs-worker protects itself while busy.
    fn stop_one(&mut self, now: u64, queue: &mut Queue) {
        let pending =
            self.tasks.iter().rposition(|task| matches!(task.state, State::Pending { .. }));
        let running =
            || self.tasks.iter().enumerate().filter(|(_, task)| task.state == State::Running);
        let chosen = pending.or_else(|| {
            if self.model.idle_first {
                running().min_by_key(|(_, task)| task.busy()).map(|(i, _)| i)
            } else {
                running().next().map(|(i, _)| i)
            }
        });
        let Some(index) = chosen else { return };
        if let (State::Running, Some(drain)) = (self.tasks[index].state, self.model.drain_seconds) {
            self.tasks[index].state = State::Draining { deadline: now + drain };
        } else {
            self.remove(index, now, queue, Exit::Killed);
        }
    }

    fn remove(&mut self, index: usize, now: u64, queue: &mut Queue, exit: Exit) {
        let task = self.tasks.swap_remove(index);
        self.billed_seconds += bill(task.launched, now);
        for (message, _) in task.work.into_iter().flatten() {
            match exit {
                // sqs-worker's drain: unfinished messages are released at once.
                Exit::Drained => queue.release(message),
                // Killed: the lease its heartbeat last set runs out.
                Exit::Killed => queue.lapse(message, now),
            }
        }
    }

    /// One second of work: tasks that finished starting begin receiving,
    /// every slot completes what is due and receives more while the second
    /// lasts, draining tasks finish or give up.
    pub fn work(&mut self, now: u64, queue: &mut Queue, rng: &mut Rng, waits: &mut Waits) {
        let end = (now + 1) as f64;
        for task in &mut self.tasks {
            if let State::Pending { ready_at } = task.state
                && ready_at <= now
            {
                task.state = State::Running;
            }
            let receiving = match task.state {
                State::Pending { .. } => continue,
                State::Running => true,
                State::Draining { .. } => false,
            };
            if task.next_due > end && (task.idle == 0 || !receiving || queue.visible() == 0) {
                continue;
            }
            for (busy_until, work) in task.busy_until.iter_mut().zip(&mut task.work) {
                // Busy past this second: nothing to do (an idle slot's time is in the past).
                if *busy_until > end {
                    continue;
                }
                loop {
                    if let Some((message, started)) = *work {
                        if *busy_until > end {
                            break;
                        }
                        *work = None;
                        if message.poison {
                            // Fails; retried when its lease runs out.
                            queue.lapse(message, started as u64);
                        } else {
                            queue.delete();
                            self.last_finish = Some(*busy_until);
                            waits.record(started - f64::from(message.sent));
                        }
                    }
                    if !receiving {
                        break;
                    }
                    let Some(message) = queue.receive() else { break };
                    let started = busy_until.max(now as f64);
                    let slower = self
                        .model
                        .slowdown
                        .filter(|slow| (slow.from..slow.until).contains(&now))
                        .map_or(1.0, |slow| slow.factor);
                    *busy_until = started + self.model.service.draw(rng) * slower;
                    *work = Some((message, started));
                }
            }
            let (mut next_due, mut idle) = (f64::INFINITY, 0);
            for (busy_until, work) in task.busy_until.iter().zip(&task.work) {
                match work {
                    Some(_) => next_due = next_due.min(*busy_until),
                    None => idle += 1,
                }
            }
            task.next_due = next_due;
            task.idle = idle;
        }
        let finished: Vec<(usize, Exit)> = self
            .tasks
            .iter()
            .enumerate()
            .filter_map(|(i, task)| match task.state {
                State::Draining { deadline } if task.busy() == 0 || deadline <= now => {
                    Some((i, Exit::Drained))
                }
                _ => None,
            })
            .collect();
        for (index, exit) in finished.into_iter().rev() {
            self.remove(index, now, queue, exit);
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Exit {
    Drained,
    Killed,
}

fn bill(launched: u64, stopped: u64) -> u64 {
    stopped.saturating_sub(launched).max(MINIMUM_BILLED_SECONDS)
}
