//! `simulate fidelity`: the model's own parts run on the setups behind
//! figures AWS has published, each simulated figure beside the published
//! one. The ECS figures run the planner's CloudWatch periods, alarms,
//! evaluation range, Application Auto Scaling and task start-up on a step of
//! load; the event source mapping's run the Lambda consumer's whole
//! simulation on a queue that never runs dry.

use backlog_publisher::BacklogTarget;
use fastrand::Rng;

use crate::autoscaling::{Evaluation, Scaler, ScalingConfig, ZeroCapacity};
use crate::cloudwatch::{AlarmShape, AlarmState, Series, Statistic, evaluation_interval, recent};
use crate::fleet::{Fleet, WorkerModel};
use crate::lambda::esm::Mode;
use crate::queue::{Queue, QueueModel};
use crate::random::ServiceTime;
use crate::sim::Scenario;
use crate::stats::Waits;
use crate::trace::Trace;

/// How far a simulated figure may be from the published one, as a fraction of it.
pub const BAND: f64 = 0.15;

/// Where the ECS figures come from: AWS's launch of 20-second metrics for
/// ECS service auto scaling (18 June 2026), as its blog states them.
const ECS_LAUNCH: &str = "AWS News Blog, \"Amazon ECS introduces new high-resolution metrics for \
    faster service auto scaling\" (18 June 2026), \
    https://aws.amazon.com/blogs/aws/amazon-ecs-introduces-new-high-resolution-metrics-for-faster-service-auto-scaling/";
const TARGET_TRACKING: &str = "Application Auto Scaling User Guide, \"How target tracking scaling \
    for Application Auto Scaling works\" (scale-in alarm: 15 datapoints within 15 minutes below \
    90 % of the target); containers-roadmap #1208";
const ESM_SCALING: &str = "AWS Lambda Developer Guide, \"Configuring scaling behavior for SQS \
    event source mappings\", https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html";

/// The planner's delay from a period's end until its datapoint can be read
/// (the default `--metric-lag-seconds`): used for AWS's metrics too, since
/// AWS does not publish theirs.
const DELAY: u64 = 30;

/// One published figure and the model's.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Check {
    /// Short, stable name.
    pub name: &'static str,
    /// What AWS published.
    pub published: f64,
    /// What the model gives on the same setup.
    pub simulated: f64,
    /// Of both.
    pub unit: &'static str,
    /// Where the published figure is.
    pub source: &'static str,
    /// The setup simulated, and what was assumed where the source is silent.
    pub setup: &'static str,
    /// Why the figure falls outside the band, and the band it then must
    /// stay in: a known difference, not a free pass.
    pub explained: Option<Explained>,
}

/// A known difference between a setup AWS measured and the one simulated.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Explained {
    /// The relative differences (simulated ÷ published − 1) the cause accounts for.
    pub range: (f64, f64),
    /// The cause.
    pub why: &'static str,
}

impl Check {
    /// simulated ÷ published − 1.
    pub fn difference(&self) -> f64 {
        self.simulated / self.published - 1.0
    }

    /// Within ±[`BAND`] of the published figure.
    pub fn within(&self) -> bool {
        // Rounded, so a figure exactly 15 % away is within.
        self.difference().abs() <= BAND + 1e-9
    }

    /// Within the band, or within the range its explanation accounts for.
    pub fn holds(&self) -> bool {
        self.within()
            || self.explained.is_some_and(|e| (e.range.0..=e.range.1).contains(&self.difference()))
    }
}

/// What a step of load did on a warm fleet.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepResponse {
    /// Seconds from the step to the scaling action.
    pub trigger: Option<u64>,
    /// Seconds from the step until the new tasks ran.
    pub running: Option<u64>,
}

/// The tracked metric's target in the ECS steps, percent.
const STEP_TARGET: f64 = 60.0;
/// Where the metric sits before the step: under the target, above 90 % of
/// it, so neither alarm fires before the step.
const STEP_FROM: f64 = 57.0;

/// A step of the tracked metric on a warm fleet of 4 tasks: target tracking
/// on `period`-second datapoints that are readable `delay` seconds after
/// their period ends, alarms evaluated as CloudWatch evaluates them, tasks
/// starting in `startup` seconds. The metric steps from 57 to `after`
/// (target 60) at the start of a period.
pub fn step_response(period: u64, delay: u64, after: f64, startup: f64) -> Option<StepResponse> {
    const INITIAL: u64 = 4;
    const STEP_AT: u64 = 1_200;
    let (target, before) = (STEP_TARGET, STEP_FROM);
    let config = ScalingConfig {
        target: BacklogTarget::new(target)?,
        min_tasks: 1,
        max_tasks: 100,
        scale_in_cooldown: crate::defaults::SCALE_IN_COOLDOWN,
        step_cooldown: crate::defaults::STEP_COOLDOWN,
        zero_capacity: ZeroCapacity::Stay,
        step_scale_in: None,
    };
    let (high, low) =
        (AlarmShape::target_tracking_high(target), AlarmShape::target_tracking_low(target));
    let workers = WorkerModel {
        startup_seconds: startup,
        startup_jitter: 0.0,
        slots: 1,
        service: ServiceTime::Fixed(1.0),
        drain_seconds: None,
        idle_first: true,
        slowdown: None,
    };
    let mut fleet = Fleet::new(workers, INITIAL);
    let mut scaler = Scaler::new(config, INITIAL);
    let mut queue = Queue::new(QueueModel {
        visibility_timeout: 60,
        max_receive_count: 5,
        poison_fraction: 0.0,
        in_flight_limit: 1,
    });
    let (mut rng, mut waits) = (Rng::with_seed(1), Waits::default());
    let mut series = Series::with_period(period);
    let mut response = StepResponse { trigger: None, running: None };
    let every = evaluation_interval(period);
    for now in 0..STEP_AT + 3_600 {
        // A period's average, stamped with its start, readable `delay` after its end.
        if now.is_multiple_of(period) && now >= period {
            let start = now - period;
            let value = if start >= STEP_AT { after } else { before };
            series.put(start, period + delay, value);
        }
        fleet.work(now, &mut queue, &mut rng, &mut waits);
        if now > 0 && now.is_multiple_of(every) {
            let evaluation = Evaluation {
                high: high.evaluate_series(&series, Statistic::Average, now),
                low: low.evaluate_series(&series, Statistic::Average, now),
                metric: recent(&series, Statistic::Average, now, 1)[0],
                wake_up: false,
                step_low: AlarmState::Ok,
            };
            let acted = scaler.evaluate(now, fleet.running(), evaluation);
            if acted.is_some() && now >= STEP_AT && response.trigger.is_none() {
                response.trigger = Some(now - STEP_AT);
            }
        }
        fleet.reconcile(now, scaler.desired(), &mut queue, &mut rng);
        let moved =
            if after > before { fleet.running() > INITIAL } else { fleet.running() < INITIAL };
        if response.trigger.is_some() && response.running.is_none() && moved {
            response.running = Some(now - STEP_AT);
        }
    }
    Some(response)
}

/// The mapping's concurrency limit at the end of each minute of a backlog
/// that never runs dry, from its whole simulation.
pub fn esm_ramp(mode: Mode, minutes: u64) -> Option<Vec<u64>> {
    let service = ServiceTime::Fixed(600.0);
    let trace = Trace { name: "fidelity".into(), arrivals: vec![2_000_000], start: None };
    let mut scenario = Scenario::new(trace, BacklogTarget::new(crate::defaults::TARGET)?);
    scenario.tail_seconds = minutes * 60;
    scenario.queue.visibility_timeout = 43_200;
    scenario.lambda = crate::lambda::LambdaModel::new(service);
    scenario.lambda.esm.mode = mode;
    scenario.lambda.esm.account_concurrency = 10_000;
    scenario.lambda.invocation.timeout = 900.0;
    scenario.workers.service = service;
    let run = crate::lambda::run::run(&scenario);
    Some(run.outcome.minutes.iter().map(|minute| minute.desired).collect())
}

/// Every check.
pub fn checks() -> Vec<Check> {
    let none = StepResponse { trigger: None, running: None };
    let step =
        |period, after, startup| step_response(period, DELAY, after, startup).unwrap_or(none);
    let minute = step(60, 90.0, AWS_STARTUP);
    let high_res = step(20, 90.0, AWS_STARTUP);
    let fargate = step(60, 90.0, crate::sim::FARGATE_STARTUP);
    let scale_in = step(60, 20.0, AWS_STARTUP);
    let seconds = |value: Option<u64>| value.map_or(f64::NAN, |v| v as f64);
    let standard = esm_ramp(Mode::Standard { maximum_concurrency: None }, 6).unwrap_or_default();
    let provisioned = esm_ramp(Mode::Provisioned { minimum_pollers: 2, maximum_pollers: 300 }, 4)
        .unwrap_or_default();
    let at = |ramp: &[u64], minute: usize| ramp.get(minute).map_or(f64::NAN, |&c| c as f64);
    let sixty_late = Explained {
        range: (-0.45, -0.25),
        why: "AWS's figure implies that its 60-second CPUUtilization reached the alarm 2 to 3 \
              minutes after its period, where the model assumes 30 s; the same launch brought \
              \"optimized metric publishing\", and its 20-second figure matches with the same \
              30 s. With a 150 s delay the model gives 360 s (-0.8 %)",
    };
    vec![
        Check {
            name: "ecs-scale-out-trigger-60s",
            published: 363.0,
            simulated: seconds(minute.trigger),
            unit: "s",
            source: ECS_LAUNCH,
            setup: "a step of CPU load on a warm fleet (4 tasks, 57 % → 90 %, target 60 %), \
                    60-second datapoints readable 30 s after their period (assumed: AWS does not \
                    publish the delay), 3 of 3 above the target, alarm evaluated each minute, \
                    the step at the start of a period",
            explained: Some(sixty_late),
        },
        Check {
            name: "ecs-new-tasks-60s",
            published: 386.0,
            simulated: seconds(minute.running),
            unit: "s",
            source: ECS_LAUNCH,
            setup: "as ecs-scale-out-trigger-60s, until the new tasks run; start-up 23 s, the \
                    benchmark's own (386 − 363 and 109 − 86)",
            explained: Some(Explained {
                range: (-0.45, -0.25),
                why: "the trigger's difference, above (the start-up is the benchmark's own)",
            }),
        },
        Check {
            name: "ecs-scale-out-trigger-20s",
            published: 86.0,
            simulated: seconds(high_res.trigger),
            unit: "s",
            source: ECS_LAUNCH,
            setup: "the same step with 20-second datapoints (--metric-period 20), 3 of 3 \
                    periods above the target (assumed: the launch does not give the alarm's \
                    datapoints), evaluated every 10 s (CloudWatch's high-resolution alarms)",
            explained: None,
        },
        Check {
            name: "ecs-new-tasks-20s",
            published: 109.0,
            simulated: seconds(high_res.running),
            unit: "s",
            source: ECS_LAUNCH,
            setup: "as ecs-scale-out-trigger-20s, until the new tasks run; start-up 23 s",
            explained: None,
        },
        Check {
            name: "ecs-start-up-after-trigger",
            published: 23.0,
            simulated: seconds(fargate.running) - seconds(fargate.trigger),
            unit: "s",
            source: ECS_LAUNCH,
            setup: "the planner's default start-up (--startup-seconds 57, Fargate) after the \
                    scaling action; published: the benchmark's two figures' difference",
            explained: Some(Explained {
                range: (1.0, 1.8),
                why: "the planner's default is a Fargate task pulling its image (57 s ± 8); \
                      the benchmark's tasks started in 23 s (its compute is not stated). Give \
                      your own with --startup-seconds",
            }),
        },
        Check {
            name: "target-tracking-scale-in",
            published: 900.0,
            simulated: seconds(scale_in.trigger),
            unit: "s",
            source: TARGET_TRACKING,
            setup: "the load falls from 57 % to 20 % (target 60 %, 4 tasks) on 60-second \
                    datapoints readable 30 s after their period; published: 15 one-minute \
                    datapoints below 90 % of the target",
            explained: None,
        },
        Check {
            name: "esm-standard-first-minute",
            published: 305.0,
            simulated: at(&standard, 0),
            unit: "concurrent invokes",
            source: ESM_SCALING,
            setup: "2,000,000 messages waiting, batches of 10 taking 600 s (so every allowed \
                    invoke runs), no MaximumConcurrency, account concurrency 10,000: the \
                    mapping's concurrency at the end of the first minute; published: 5 to start, \
                    up to 300 more a minute",
            explained: None,
        },
        Check {
            name: "esm-standard-after-4-minutes",
            published: 1_205.0,
            simulated: at(&standard, 3),
            unit: "concurrent invokes",
            source: ESM_SCALING,
            setup: "as esm-standard-first-minute, at the end of minute 4: 5 + 4 × 300",
            explained: None,
        },
        Check {
            name: "esm-standard-ceiling",
            published: 1_250.0,
            simulated: standard.iter().copied().max().map_or(f64::NAN, |c| c as f64),
            unit: "concurrent invokes",
            source: ESM_SCALING,
            setup: "as esm-standard-first-minute, the most over 6 minutes: at most 1,250",
            explained: None,
        },
        Check {
            name: "esm-provisioned-first-minute",
            published: 1_020.0,
            simulated: at(&provisioned, 0),
            unit: "concurrent invokes",
            source: ESM_SCALING,
            setup: "provisioned mode, MinimumPollers 2 (10 concurrent invokes each: 20 at rest), \
                    MaximumPollers 300, the same backlog: up to 1,000 more a minute",
            explained: None,
        },
    ]
}

/// The task start-up AWS's benchmark saw: 386 − 363 = 109 − 86 = 23 s.
const AWS_STARTUP: f64 = 23.0;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_check_holds_within_its_band_or_its_explanation_and_not_otherwise() {
        let check = |simulated, explained| Check {
            name: "x",
            published: 100.0,
            simulated,
            unit: "s",
            source: "",
            setup: "",
            explained,
        };
        assert!(check(115.0, None).holds() && check(85.0, None).holds());
        assert!(!check(116.0, None).holds() && !check(f64::NAN, None).holds());
        let why = Explained { range: (-0.45, -0.25), why: "" };
        assert!(check(66.0, Some(why)).holds());
        assert!(!check(50.0, Some(why)).holds(), "further than the explanation accounts for");
    }

    #[test]
    fn a_shorter_period_triggers_sooner_and_scale_in_waits_fifteen_minutes() {
        let step = |period, delay, after| step_response(period, delay, after, 23.0).unwrap();
        let (minute, high_res) = (step(60, 30, 90.0), step(20, 30, 90.0));
        assert_eq!(minute.trigger, Some(240), "3 minutes, then the 30 s delay to the next minute");
        assert_eq!(high_res.trigger, Some(90), "3 × 20 s, the delay, every 10 s");
        assert_eq!(minute.running, Some(263));
        assert_eq!(step(60, 30, 20.0).trigger, Some(960));
        assert_eq!(step(60, 150, 90.0).trigger, Some(360));
    }

    #[test]
    fn every_check_holds() {
        let checks = checks();
        assert_eq!(checks.len(), 10);
        for check in checks {
            let (name, published, simulated) = (check.name, check.published, check.simulated);
            assert!(check.holds(), "{name}: published {published}, simulated {simulated}");
        }
    }
}
