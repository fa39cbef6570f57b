//! The settings `template.yaml` deploys by default, which every run starts
//! from: a recommendation made at the defaults holds for a default deploy.
//! `tests/template_defaults.rs` fails when the template and these drift apart.

/// `TargetBacklogPerTask`.
pub const TARGET: f64 = 100.0;
/// `MinTasks`.
pub const MIN_TASKS: u64 = 0;
/// `MaxTasks`.
pub const MAX_TASKS: u64 = 10;
/// `ConsumerConcurrency`: messages one task works on at once (`CONSUMER_CONCURRENCY`).
pub const SLOTS: u32 = 32;
/// `WorkerVisibilityTimeout`: the worker's lease on a message, seconds.
pub const VISIBILITY_TIMEOUT: u64 = 60;
/// `MaxReceiveCount`: the work queue's redrive policy.
pub const MAX_RECEIVE_COUNT: u16 = 5;
/// `DrainSeconds`: what a stopping task may finish, seconds.
pub const DRAIN_SECONDS: u64 = 90;
/// `ScheduleRate` (`rate(1 minute)`), seconds.
pub const SCHEDULE_SECONDS: u64 = 60;
/// The target tracking policy's `ScaleInCooldown`, seconds.
pub const SCALE_IN_COOLDOWN: u64 = 300;
/// The wake-up step policy's `Cooldown`, seconds.
pub const STEP_COOLDOWN: u64 = 300;
/// The load scale-in step policy's `Cooldown`, seconds.
pub const LOAD_SCALE_IN_COOLDOWN: u64 = 120;
/// The wake-up step policy's `ScalingAdjustment`: tasks started out of zero.
pub const WAKE_UP_STEP: u64 = 1;
/// The wake-up alarm's `Period`, seconds, evaluated over one period.
pub const WAKE_UP_PERIOD: u64 = 60;

/// `BatchSize`: messages the event source mapping hands one invocation.
pub const BATCH_SIZE: u32 = 10;
/// `MaximumBatchingWindowInSeconds`.
pub const BATCHING_WINDOW: u64 = 0;
/// `MaximumConcurrency` (the template also reserves this much concurrency).
pub const MAXIMUM_CONCURRENCY: u32 = 5;
/// `ConsumerTimeout`, seconds; the work queue's visibility timeout is 6 × this.
pub const FUNCTION_TIMEOUT: u64 = 30;
/// `ConsumerMemorySize`, MB.
pub const MEMORY_MB: u32 = 128;
/// `DeadlineMarginMs`: no message is started closer than this to the function's timeout.
pub const DEADLINE_MARGIN_MS: u64 = 2_000;

/// The ranges the template accepts for what a deploy line carries beyond
/// the searched settings, where they are narrower than the simulator's
/// flags: a run outside them can be simulated but not deployed as it ran.
pub const MAX_RECEIVE_COUNT_RANGE: (u64, u64) = (5, 1_000);
/// `DrainSeconds`.
pub const DRAIN_SECONDS_RANGE: (u64, u64) = (1, 110);
/// `WorkerVisibilityTimeout`.
pub const WORKER_VISIBILITY_TIMEOUT_RANGE: (u64, u64) = (1, 43_200);
