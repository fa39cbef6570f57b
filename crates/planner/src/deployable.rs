//! The `sam deploy` lines the planner prints, and whether a run's fixed
//! settings are ones `template.yaml` can deploy: a deploy line carries them,
//! and `sam deploy` refuses a value outside a parameter's range.

use backlog_publisher::backlog::TaskCountMode;

use crate::defaults;
use crate::sim::Scenario;
use crate::sim::policy::Policy;

fn within(name: &str, value: u64, (min, max): (u64, u64), out: &mut Vec<String>) {
    if !(min..=max).contains(&value) {
        out.push(format!("{name}={value} (the template takes {min}–{max})"));
    }
}

/// What the ECS worker's deploy line could not carry as simulated.
pub fn ecs(scenario: &Scenario) -> Vec<String> {
    let mut out = Vec::new();
    common(scenario, &mut out);
    let drain = scenario.workers.drain_seconds.unwrap_or(0);
    within("DrainSeconds", drain, defaults::DRAIN_SECONDS_RANGE, &mut out);
    let visibility = scenario.queue.visibility_timeout;
    within(
        "WorkerVisibilityTimeout",
        visibility,
        defaults::WORKER_VISIBILITY_TIMEOUT_RANGE,
        &mut out,
    );
    let schedule = scenario.publisher.schedule_seconds;
    if !schedule.is_multiple_of(60) {
        out.push(format!(
            "ScheduleRate of {schedule} s (EventBridge's rate() counts whole minutes)"
        ));
    }
    out
}

/// What the Lambda consumer's deploy line could not carry as simulated.
pub fn lambda(scenario: &Scenario) -> Vec<String> {
    let mut out = Vec::new();
    common(scenario, &mut out);
    out
}

fn common(scenario: &Scenario, out: &mut Vec<String>) {
    let receives = u64::from(scenario.queue.max_receive_count);
    within("MaxReceiveCount", receives, defaults::MAX_RECEIVE_COUNT_RANGE, out);
}

/// `ScheduleRate` as the template takes it, quoted for the shell.
pub fn schedule_rate(scenario: &Scenario) -> String {
    match scenario.publisher.schedule_seconds / 60 {
        1 => "\"ScheduleRate='rate(1 minute)'\"".to_owned(),
        n => format!("\"ScheduleRate='rate({n} minutes)'\""),
    }
}

/// The deploy line to print, or why there is none; then what it leaves to
/// the operator. `first_deploy` names what a new stack needs besides.
pub fn block(line: String, problems: &[String], first_deploy: &str) -> String {
    if !problems.is_empty() {
        return format!(
            "no deploy line: the template cannot deploy this run as simulated: {}\n",
            problems.join(", ")
        );
    }
    format!("{line}\nnote: {}\n", leaves(first_deploy))
}

/// What a deploy line leaves to the operator, for the text and the JSON.
pub fn leaves(first_deploy: &str) -> String {
    format!(
        "the line sets every parameter the run was simulated with; a parameter left off keeps \
         what samconfig.toml or the stack already has, and a first deploy needs {first_deploy}"
    )
}

/// What a first deploy of a worker service the stack creates needs besides the line.
pub const ECS_FIRST_DEPLOY: &str = "DownstreamUrl, EcsClusterName, WorkerImage and WorkerSubnetIds";

/// The `sam deploy` line for a service of your own that the stack scales
/// (`ScalingTarget=create`): the target, its policies and the publisher,
/// without the worker's settings (its task definition's) or the queue's.
pub fn own_service_deploy_line(scenario: &Scenario, best: &crate::recommend::Candidate) -> String {
    deploy_line(scenario, best)
        .split(' ')
        .filter(|word| {
            !["WorkerVisibilityTimeout=", "DrainSeconds=", "MaxReceiveCount="]
                .iter()
                .any(|p| word.starts_with(p))
        })
        .collect::<Vec<_>>()
        .join(" ")
        .replacen("ConsumerType=ecs", "ConsumerType=ecs ScalingTarget=create", 1)
}

/// What the line for a service of your own leaves to the operator.
pub fn own_service_leaves(scenario: &Scenario) -> String {
    format!(
        "for a service with no scalable target of its own; a first deploy needs EcsClusterName \
         and EcsServiceName. Set CONSUMER_CONCURRENCY={}, VISIBILITY_TIMEOUT_SECONDS={} and \
         DRAIN_SECONDS={} on its task definition as simulated, and maxReceiveCount {} on your \
         queue's redrive policy (MaxReceiveCount={} on the line, for a work queue the stack \
         creates)",
        scenario.workers.slots,
        scenario.queue.visibility_timeout,
        scenario.workers.drain_seconds.unwrap_or(0),
        scenario.queue.max_receive_count,
        scenario.queue.max_receive_count,
    )
}

/// Where a service that keeps its own scaling is answered.
pub const EXISTING_HINT: &str = "for a service that keeps its own scalable target and \
     policies (ScalingTarget=existing): simulate recommend --scaling-target existing, with these \
     flags, your target's --min-tasks and --max-tasks and its CPU policy's (--cpu-target, \
     --cpu-per-message)";

/// The command that reads the metric the stack's `ScalingMetric` output
/// names into `$metric`, for [`put_scaling_policy`].
pub const METRIC_COMMAND: &str = "metric=$(aws cloudformation describe-stacks --stack-name \
     STACK --query \"Stacks[0].Outputs[?OutputKey=='ScalingMetric'].OutputValue\" --output text)";

/// What a first deploy of the Lambda consumer needs besides the line.
pub const LAMBDA_FIRST_DEPLOY: &str = "DownstreamUrl; with ExistingWorkQueueArn, the queue's \
     maxReceiveCount and visibility timeout are yours to set as simulated";

/// The Lambda consumer's line for a function of your own
/// (`ConsumerFunctionArn`): the event source mapping and the queue, without
/// what the stack sets only on a function it creates.
pub fn own_function_line(created_function_line: &str) -> String {
    created_function_line
        .split(' ')
        .filter(|word| {
            [
                "ConsumerMemorySize=",
                "ConsumerConcurrency=",
                "DeadlineMarginMs=",
                "DownstreamMaxRps=",
            ]
            .iter()
            .all(|p| !word.starts_with(p))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// What the line for a function of your own leaves to the operator.
pub fn own_function_leaves(created_function_line: &str) -> String {
    let value = |name: &str| {
        created_function_line.split(' ').find_map(|word| word.strip_prefix(name)).map(str::to_owned)
    };
    let mut set = vec![
        format!("CONSUMER_CONCURRENCY={}", value("ConsumerConcurrency=").unwrap_or_default()),
        format!("DEADLINE_MARGIN_MS={}", value("DeadlineMarginMs=").unwrap_or_default()),
    ];
    set.extend(value("DownstreamMaxRps=").map(|rps| format!("DOWNSTREAM_MAX_RPS={rps}")));
    format!(
        "a first deploy needs ConsumerFunctionArn (and no DownstreamUrl: your function calls what \
         it calls). Set {} on your function, its memory to {} MB and its timeout to the \
         ConsumerTimeout on the line, as simulated; the stack reserves MaximumConcurrency only \
         for a function it creates, so reserve yours",
        set.join(", "),
        value("ConsumerMemorySize=").unwrap_or_default(),
    )
}

/// A `recommend --json` line's `deploy` (the line, or null when nothing met
/// the SLO or the template would refuse the run), `not_deployable` and
/// `notes` (what the text prints as `note:`, the first-deploy one first).
pub fn json_fields(
    line: &mut serde_json::Value,
    deploy: Option<String>,
    problems: Vec<String>,
    first_deploy: &str,
    mut notes: Vec<String>,
) {
    let deploy = deploy.filter(|_| problems.is_empty());
    if deploy.is_some() {
        notes.insert(0, leaves(first_deploy));
    }
    line["deploy"] = deploy.into();
    line["not_deployable"] = problems.into();
    line["notes"] = notes.into();
}

/// The `sam deploy` line for `best`: every template parameter the run was
/// simulated with, so a deploy (whose `--parameter-overrides` replace, not
/// merge with, a samconfig.toml's) is what was simulated.
pub fn deploy_line(scenario: &Scenario, best: &crate::recommend::Candidate) -> String {
    let schedule = crate::deployable::schedule_rate(scenario);
    format!(
        "sam deploy --parameter-overrides ConsumerType=ecs ScalingSignal=load \
         TargetLoadPercent={} AvgProcessingSeconds={} LoadDrainSeconds={} LoadHoldSeconds={} \
         MinTasks={} MaxTasks={} ConsumerConcurrency={} WorkerVisibilityTimeout={} \
         MaxReceiveCount={} DrainSeconds={} TaskCount={} BacklogIncludes={} {schedule} \
         SamplesPerInvocation=1",
        best.target.get(),
        scenario.publisher.load.processing_seconds,
        scenario.publisher.load.drain_seconds,
        scenario.publisher.load.hold_seconds,
        best.min_tasks,
        scenario.scaling.max_tasks,
        scenario.workers.slots,
        scenario.queue.visibility_timeout,
        scenario.queue.max_receive_count,
        scenario.workers.drain_seconds.unwrap_or(0),
        task_count(scenario),
        backlog_includes(scenario),
    )
}

/// `TaskCount` as the template takes it.
fn task_count(scenario: &Scenario) -> &'static str {
    match scenario.publisher.backlog.task_count {
        TaskCountMode::Running => "running",
        TaskCountMode::RunningPlusPending => "running+pending",
        TaskCountMode::Desired => "desired",
    }
}

/// `BacklogIncludes` as the template takes it.
fn backlog_includes(scenario: &Scenario) -> String {
    let includes = scenario.publisher.backlog.includes;
    let mut listed = vec!["visible"];
    listed.extend(includes.in_flight.then_some("inflight"));
    listed.extend(includes.delayed.then_some("delayed"));
    listed.join(",")
}

/// The `sam deploy` line for a service that keeps its own scalable target
/// (`ScalingTarget=existing`): the publisher's parameters alone, the only
/// ones that stack applies (its target, bounds and worker settings are the
/// service's own).
pub fn existing_deploy_line(scenario: &Scenario, target_load: f64) -> String {
    format!(
        "sam deploy --parameter-overrides ConsumerType=ecs ScalingTarget=existing \
         ScalingSignal=load TargetLoadPercent={target_load} AvgProcessingSeconds={} \
         LoadDrainSeconds={} LoadHoldSeconds={} ConsumerConcurrency={} TaskCount={} \
         BacklogIncludes={} {} SamplesPerInvocation=1",
        scenario.publisher.load.processing_seconds,
        scenario.publisher.load.drain_seconds,
        scenario.publisher.load.hold_seconds,
        scenario.workers.slots,
        task_count(scenario),
        backlog_includes(scenario),
        schedule_rate(scenario),
    )
}

/// The target tracking policy on `ScalingLoad` to put beside a service's
/// CPU policy, on the metric the stack's `ScalingMetric` output names
/// (`$metric`; docs/your-code.md shows how to read it).
pub fn put_scaling_policy(target_load: f64) -> String {
    format!(
        "aws application-autoscaling put-scaling-policy --service-namespace ecs --resource-id \
         service/CLUSTER/SERVICE --scalable-dimension ecs:service:DesiredCount --policy-name \
         scaling-load --policy-type TargetTrackingScaling \
         --target-tracking-scaling-policy-configuration \
         \"{{\\\"TargetValue\\\": {target_load}, \\\"CustomizedMetricSpecification\\\": $metric}}\""
    )
}

/// The `sam deploy` line for `ScalingSignal=backlog-per-task` or
/// `metric-math` at `c`, with the run's other settings.
pub fn alternative_deploy_line(
    scenario: &Scenario,
    policy: Policy,
    c: &crate::recommend::Candidate,
) -> String {
    let signal = match policy {
        Policy::MetricMath => "metric-math",
        _ => "backlog-per-task",
    };
    let load_line = deploy_line(scenario, c);
    load_line
        .split(' ')
        .filter(|word| {
            !["ScalingSignal=", "TargetLoadPercent=", "LoadDrainSeconds=", "LoadHoldSeconds="]
                .iter()
                .any(|p| word.starts_with(p))
        })
        .collect::<Vec<_>>()
        .join(" ")
        .replacen(
            "ConsumerType=ecs",
            &format!(
                "ConsumerType=ecs ScalingSignal={signal} TargetBacklogPerTask={}",
                c.target.get()
            ),
            1,
        )
}
