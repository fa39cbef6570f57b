//! The planner's defaults are what `template.yaml` deploys: a recommendation
//! made at the defaults holds for a default deploy. Fails when they drift.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use backlog_publisher::BacklogTarget;
use capacity_planner::Scenario;
use capacity_planner::defaults;
use capacity_planner::trace::Trace;
use serde_norway::Value;

fn template() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../template.yaml");
    serde_norway::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn default_of(template: &Value, parameter: &str) -> String {
    let value = &template["Parameters"][parameter]["Default"];
    match value {
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        other => panic!("{parameter}: no default ({other:?})"),
    }
}

fn resource<'t>(template: &'t Value, name: &str) -> &'t Value {
    &template["Resources"][name]["Properties"]
}

#[test]
fn every_default_the_template_also_sets_is_the_templates() {
    let template = template();
    let number = |parameter: &str| default_of(&template, parameter).parse::<f64>().unwrap();
    assert_eq!(defaults::TARGET, number("TargetBacklogPerTask"));
    assert_eq!(defaults::MIN_TASKS as f64, number("MinTasks"));
    assert_eq!(defaults::MAX_TASKS as f64, number("MaxTasks"));
    assert_eq!(f64::from(defaults::SLOTS), number("ConsumerConcurrency"));
    assert_eq!(defaults::VISIBILITY_TIMEOUT as f64, number("WorkerVisibilityTimeout"));
    assert_eq!(f64::from(defaults::MAX_RECEIVE_COUNT), number("MaxReceiveCount"));
    assert_eq!(defaults::DRAIN_SECONDS as f64, number("DrainSeconds"));
    assert_eq!(default_of(&template, "ScheduleRate"), "rate(1 minute)");
    assert_eq!(defaults::SCHEDULE_SECONDS, 60);

    let tracking = &resource(&template, "BacklogPerTaskScalingPolicy")["TargetTrackingScalingPolicyConfiguration"];
    assert_eq!(tracking["ScaleInCooldown"].as_u64(), Some(defaults::SCALE_IN_COOLDOWN));
    let step = &resource(&template, "ScaleFromZeroPolicy")["StepScalingPolicyConfiguration"];
    assert_eq!(step["Cooldown"].as_u64(), Some(defaults::STEP_COOLDOWN));
    assert_eq!(
        step["StepAdjustments"][0]["ScalingAdjustment"].as_u64(),
        Some(defaults::WAKE_UP_STEP)
    );
    let alarm = resource(&template, "ScaleFromZeroAlarm");
    assert_eq!(alarm["EvaluationPeriods"].as_u64(), Some(1));
    // Publisher's metrics or, with ScalingSignal=metric-math, AWS's: a minute either way.
    let (_, math, published) = if_branches(&alarm["Metrics"]);
    for queries in [math, published] {
        let periods: Vec<u64> = queries
            .as_sequence()
            .unwrap()
            .iter()
            .filter_map(|m| m["MetricStat"]["Period"].as_u64())
            .collect();
        assert!(!periods.is_empty() && periods.iter().all(|&p| p == defaults::WAKE_UP_PERIOD));
    }
}

/// An `!If [condition, then, else]`'s three parts.
fn if_branches(value: &Value) -> (&str, &Value, &Value) {
    let Value::Tagged(tagged) = value else { panic!("expected an !If, got {value:?}") };
    assert_eq!(tagged.tag, "If");
    let parts = tagged.value.as_sequence().unwrap();
    (parts[0].as_str().unwrap(), &parts[1], &parts[2])
}

/// A condition of `Equals` of `BacklogIncludes` under `Or`, for one value of it.
fn holds_for(template: &Value, condition: &str, backlog_includes: &str) -> bool {
    let Value::Tagged(or) = &template["Conditions"][condition] else { panic!("{condition}") };
    assert_eq!(or.tag, "Or");
    or.value.as_sequence().unwrap().iter().any(|equals| {
        let Value::Tagged(equals) = equals else { panic!("{condition}: {equals:?}") };
        equals.value[1].as_str() == Some(backlog_includes)
    })
}

/// The query `id` of a list of metric data queries.
fn query<'t>(queries: &'t Value, id: &str) -> &'t Value {
    queries.as_sequence().unwrap().iter().find(|q| q["Id"].as_str() == Some(id)).unwrap()
}

/// `backlog`'s expression as the template resolves it for one BACKLOG_INCLUDES.
fn backlog_expression(template: &Value, queries: &Value, backlog_includes: &str) -> String {
    let mut expression = &query(queries, "backlog")["Expression"];
    while let Value::Tagged(_) = expression {
        let (condition, then, otherwise) = if_branches(expression);
        expression =
            if holds_for(template, condition, backlog_includes) { then } else { otherwise };
    }
    expression.as_str().unwrap().to_owned()
}

#[test]
fn the_templates_metric_math_signal_is_the_planners() {
    use backlog_publisher::backlog::BacklogIncludes;
    use capacity_planner::sim::policy::{
        METRIC_MATH_PER_TASK, METRIC_MATH_WAKE_UP, Policy, metric_math_backlog,
    };

    let template = template();
    let tracking = &resource(&template, "BacklogPerTaskScalingPolicy")["TargetTrackingScalingPolicyConfiguration"];
    let (condition, math, _) = if_branches(&tracking["CustomizedMetricSpecification"]);
    assert_eq!(condition, "ScalesOnMetricMath");
    let policy_queries = &math["Metrics"];
    let returned: Vec<&str> = policy_queries
        .as_sequence()
        .unwrap()
        .iter()
        .filter(|q| q["ReturnData"].as_bool() == Some(true))
        .map(|q| q["Expression"].as_str().unwrap())
        .collect();
    assert_eq!(returned, [METRIC_MATH_PER_TASK], "the one series target tracking reads");
    let (_, wake_up, _) = if_branches(&resource(&template, "ScaleFromZeroAlarm")["Metrics"]);
    assert_eq!(query(wake_up, "waiting")["Expression"].as_str(), Some(METRIC_MATH_WAKE_UP));

    let allowed = template["Parameters"]["BacklogIncludes"]["AllowedValues"].as_sequence().unwrap();
    assert_eq!(allowed.len(), 4);
    for value in allowed.iter().map(|v| v.as_str().unwrap()) {
        let includes: BacklogIncludes = value.parse().unwrap();
        for queries in [policy_queries, wake_up] {
            assert_eq!(
                backlog_expression(&template, queries, value),
                metric_math_backlog(includes),
                "BacklogIncludes={value}"
            );
        }
    }
    // Each AWS metric read as the planner reads it: one point a minute, by the policy's statistic.
    for id in ["visible", "inflight", "delayed", "running"] {
        let stat = query(policy_queries, id)["MetricStat"]["Stat"].as_str().unwrap();
        assert_eq!(stat, format!("{:?}", Policy::MetricMath.statistic()), "{id}");
    }
    // Its target is TargetBacklogPerTask, the messages per task the planner's TARGETS try.
    let (_, _, backlog_target) = if_branches(&tracking["TargetValue"]);
    let Value::Tagged(reference) = backlog_target else { panic!("{backlog_target:?}") };
    assert_eq!(
        (reference.tag.to_string().as_str(), reference.value.as_str()),
        ("!Ref", Some("TargetBacklogPerTask"))
    );
}

#[test]
fn the_lambda_consumers_defaults_are_the_templates() {
    let template = template();
    let number = |parameter: &str| default_of(&template, parameter).parse::<f64>().unwrap();
    assert_eq!(f64::from(defaults::BATCH_SIZE), number("BatchSize"));
    assert_eq!(defaults::BATCHING_WINDOW as f64, number("MaximumBatchingWindowInSeconds"));
    assert_eq!(f64::from(defaults::MAXIMUM_CONCURRENCY), number("MaximumConcurrency"));
    assert_eq!(defaults::FUNCTION_TIMEOUT as f64, number("ConsumerTimeout"));
    assert_eq!(f64::from(defaults::MEMORY_MB), number("ConsumerMemorySize"));
    assert_eq!(defaults::DEADLINE_MARGIN_MS as f64, number("DeadlineMarginMs"));
    assert_eq!(number("ProvisionedMinimumPollers"), 0.0, "standard mode by default");
    // The planner's timeouts are the template's, and its visibility timeout is the mapping's.
    let allowed: Vec<u64> = template["Parameters"]["ConsumerTimeout"]["AllowedValues"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().parse().unwrap())
        .collect();
    assert_eq!(allowed, capacity_planner::lambda::args::FUNCTION_TIMEOUTS);
    for timeout in allowed {
        let seconds = &template["Mappings"]["VisibilityTimeoutFor"][timeout.to_string()]["Seconds"];
        assert_eq!(seconds.as_u64(), Some(6 * timeout), "ConsumerTimeout {timeout}");
    }
}

#[test]
fn the_ranges_a_deploy_line_is_checked_against_are_the_templates() {
    let template = template();
    let range = |parameter: &str| {
        let p = &template["Parameters"][parameter];
        (p["MinValue"].as_u64().unwrap(), p["MaxValue"].as_u64().unwrap())
    };
    assert_eq!(range("MaxReceiveCount"), defaults::MAX_RECEIVE_COUNT_RANGE);
    assert_eq!(range("DrainSeconds"), defaults::DRAIN_SECONDS_RANGE);
    assert_eq!(range("WorkerVisibilityTimeout"), defaults::WORKER_VISIBILITY_TIMEOUT_RANGE);
}

#[test]
fn a_scenario_starts_from_the_defaults() {
    let trace = Trace { name: "t".into(), arrivals: vec![0; 60], start: None };
    let scenario = Scenario::new(trace, BacklogTarget::new(defaults::TARGET).unwrap());
    assert_eq!(scenario.scaling.min_tasks, defaults::MIN_TASKS);
    assert_eq!(scenario.scaling.max_tasks, defaults::MAX_TASKS);
    assert_eq!(scenario.scaling.scale_in_cooldown, defaults::SCALE_IN_COOLDOWN);
    assert_eq!(scenario.scaling.step_cooldown, defaults::STEP_COOLDOWN);
    assert_eq!(scenario.workers.slots, defaults::SLOTS);
    assert_eq!(scenario.workers.drain_seconds, Some(defaults::DRAIN_SECONDS));
    assert_eq!(scenario.queue.visibility_timeout, defaults::VISIBILITY_TIMEOUT);
    assert_eq!(scenario.queue.max_receive_count, defaults::MAX_RECEIVE_COUNT);
    assert_eq!(scenario.publisher.schedule_seconds, defaults::SCHEDULE_SECONDS);
}

#[test]
fn the_load_policy_and_its_scale_in_steps_are_the_templates() {
    use backlog_publisher::load::LoadSettings;
    use capacity_planner::sim::autoscaling::{SCALE_IN_STEPS, SCALE_IN_THRESHOLD};
    let template = template();
    let number = |parameter: &str| default_of(&template, parameter).parse::<f64>().unwrap();
    let load = LoadSettings::DEFAULT;
    assert_eq!(default_of(&template, "ScalingSignal"), "load");
    assert_eq!(load.target_percent, number("TargetLoadPercent"));
    assert_eq!(load.processing_seconds, number("AvgProcessingSeconds"));
    assert_eq!(load.drain_seconds, number("LoadDrainSeconds"));
    assert_eq!(load.hold_seconds, number("LoadHoldSeconds"));
    assert_eq!(f64::from(load.slots), number("ConsumerConcurrency"));

    let alarm = resource(&template, "LoadScaleInAlarm");
    assert_eq!(alarm["Threshold"].as_f64(), Some(SCALE_IN_THRESHOLD));
    assert_eq!(
        (alarm["EvaluationPeriods"].as_u64(), alarm["DatapointsToAlarm"].as_u64()),
        (Some(3), Some(3))
    );
    assert_eq!(alarm["ComparisonOperator"].as_str(), Some("LessThanThreshold"));
    let policy = &resource(&template, "LoadScaleInPolicy")["StepScalingPolicyConfiguration"];
    assert_eq!(policy["AdjustmentType"].as_str(), Some("PercentChangeInCapacity"));
    assert_eq!(policy["Cooldown"].as_u64(), Some(defaults::LOAD_SCALE_IN_COOLDOWN));
    // Each step's upper bound is relative to the threshold.
    let steps: Vec<(f64, i64)> = policy["StepAdjustments"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|step| {
            let upper = step["MetricIntervalUpperBound"].as_f64().unwrap();
            let bound = ((SCALE_IN_THRESHOLD + upper) * 1e9).round() / 1e9;
            (bound, step["ScalingAdjustment"].as_i64().unwrap())
        })
        .collect();
    assert_eq!(steps, SCALE_IN_STEPS.to_vec());
}
