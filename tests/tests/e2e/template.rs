//! `template.yaml` against the code: the environment each function gets is
//! exactly what it reads, and the scaling policy reads exactly the metric the
//! publisher writes. (cfn-lint and `sam validate --lint` run in the gate, `make gate`.)

use std::collections::{BTreeMap, BTreeSet};

use backlog_publisher::metrics::{BACKLOG_PER_TASK, DIMENSION_NAMES, METRIC_NAMES, SCALING_LOAD};
use backpressure_core::config::variables::{Reader, read_by};
use serde_norway::Value;
use serde_norway::value::TaggedValue;

pub(crate) fn template() -> Value {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../template.yaml")).unwrap();
    serde_norway::from_str(&text).unwrap()
}

pub(crate) fn resource<'t>(template: &'t Value, name: &str) -> &'t Value {
    &template["Resources"][name]["Properties"]
}

/// The parameter a `!Ref` names.
pub(crate) fn reference(value: &Value) -> String {
    match value {
        Value::Tagged(tagged) if tagged.tag == "Ref" => tagged.value.as_str().unwrap().to_owned(),
        other => panic!("expected a !Ref, got {other:?}"),
    }
}

/// An `!If [condition, then, else]`'s three parts.
pub(crate) fn if_branches(value: &Value) -> (&str, &Value, &Value) {
    match value {
        Value::Tagged(tagged) if tagged.tag == "If" => {
            let parts = tagged.value.as_sequence().unwrap();
            (parts[0].as_str().unwrap(), &parts[1], &parts[2])
        }
        other => panic!("expected an !If, got {other:?}"),
    }
}

pub(crate) fn env_names(template: &Value, function: &str) -> BTreeSet<String> {
    resource(template, function)["Environment"]["Variables"]
        .as_mapping()
        .unwrap()
        .keys()
        .map(|k| k.as_str().unwrap().to_owned())
        .collect()
}

/// The names of a metric's `Dimensions`, in order.
pub(crate) fn dimension_names(dimensions: &Value) -> Vec<&str> {
    dimensions.as_sequence().unwrap().iter().map(|d| d["Name"].as_str().unwrap()).collect()
}

pub(crate) fn names(list: &[&str]) -> BTreeSet<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

/// The variables `reader` reads, from the table the code parses with.
pub(crate) fn read(reader: Reader) -> BTreeSet<String> {
    read_by(reader).map(|variable| variable.name.to_owned()).collect()
}

/// The worker's own variables: those batch-consumer does not read.
pub(crate) fn worker_own() -> BTreeSet<String> {
    read(Reader::Worker).difference(&read(Reader::Consumer)).cloned().collect()
}

#[test]
fn publisher_environment_is_what_the_publisher_reads() {
    let set = env_names(&template(), "PublisherFunction");
    let read = read(Reader::Publisher);
    let unknown: Vec<_> = set.difference(&read).collect();
    assert!(
        unknown.is_empty(),
        "the template sets variables the publisher never reads: {unknown:?}"
    );
    // The template configures one target with an explicit target value (AVG_PROCESSING_SECONDS
    // is the load's); the other forms of the same settings are the only variables it leaves out.
    let left_out: BTreeSet<String> = read.difference(&set).cloned().collect();
    assert_eq!(left_out, names(&["TARGETS", "ACCEPTABLE_LATENCY_SECONDS"]));
}

#[test]
fn consumer_environment_is_what_the_consumer_reads() {
    let template = template();
    // The record size limit is the quarantine queue's own, read from it: not overridden.
    let mut read = read(Reader::Consumer);
    read.remove("QUARANTINE_MAX_MESSAGE_BYTES");
    // The template's store is its DynamoDB table, for this stack's consumer alone.
    read.remove("IDEMPOTENCY_REDIS_URL");
    read.remove("IDEMPOTENCY_KEY_PREFIX");
    assert_eq!(env_names(&template, "ConsumerFunction"), read);
}

#[test]
fn scaling_policy_reads_the_metric_the_publisher_writes() {
    let template = template();
    let policy = &resource(&template, "BacklogPerTaskScalingPolicy")["TargetTrackingScalingPolicyConfiguration"];
    let (math, _, metric) = if_branches(&policy["CustomizedMetricSpecification"]);
    assert_eq!(math, "ScalesOnMetricMath");
    let (condition, on_load, otherwise) = if_branches(&metric["MetricName"]);
    assert_eq!(condition, "ScalesOnLoad");
    assert_eq!(
        (on_load.as_str(), otherwise.as_str()),
        (Some(SCALING_LOAD), Some(BACKLOG_PER_TASK))
    );
    let (_, on_load, otherwise) = if_branches(&metric["Unit"]);
    assert_eq!((on_load.as_str(), otherwise.as_str()), (Some("Percent"), Some("Count")));
    let (_, on_load, otherwise) = if_branches(&policy["DisableScaleIn"]);
    assert_eq!((on_load.as_bool(), otherwise.as_bool()), (Some(true), Some(false)));
    assert_eq!(
        metric["Statistic"].as_str(),
        Some("Average"),
        "Sum would multiply with sub-minute samples"
    );
    assert_eq!(dimension_names(&metric["Dimensions"]), DIMENSION_NAMES);

    let publisher_env = &resource(&template, "PublisherFunction")["Environment"]["Variables"];
    assert_eq!(reference(&metric["Namespace"]), reference(&publisher_env["METRIC_NAMESPACE"]));
    let (_, load_target, backlog_target) = if_branches(&policy["TargetValue"]);
    assert_eq!(reference(load_target), reference(&publisher_env["TARGET_LOAD_PERCENT"]));
    assert_eq!(reference(backlog_target), reference(&publisher_env["TARGET_BACKLOG_PER_TASK"]));
    let load_alarm = resource(&template, "LoadScaleInAlarm");
    let load_metric = &load_alarm["Metrics"][1]["MetricStat"]["Metric"];
    assert_eq!(load_metric["MetricName"].as_str(), Some(SCALING_LOAD));
    assert_eq!(dimension_names(&load_metric["Dimensions"]), DIMENSION_NAMES);
    assert_eq!(reference(&load_metric["Namespace"]), reference(&publisher_env["METRIC_NAMESPACE"]));
    assert_eq!(
        reference(&metric["Dimensions"][0]["Value"]),
        reference(&publisher_env["ECS_CLUSTER_NAME"])
    );
    assert_eq!(
        reference(&metric["Dimensions"][1]["Value"]),
        reference(&publisher_env["ECS_SERVICE_NAME"])
    );
    let scale_out = policy["ScaleOutCooldown"].as_u64().unwrap();
    let scale_in = policy["ScaleInCooldown"].as_u64().unwrap();
    assert!(scale_in > scale_out, "scale in slower than scale out");

    let missing = resource(&template, "BacklogPerTaskMissingAlarm");
    assert_eq!(dimension_names(&missing["Dimensions"]), DIMENSION_NAMES);
    assert_eq!(missing["MetricName"].as_str(), Some(BACKLOG_PER_TASK));
    assert_eq!(missing["TreatMissingData"].as_str(), Some("breaching"));
}

#[test]
fn work_queue_visibility_is_six_times_the_consumer_timeout_plus_the_longest_window() {
    let template = template();
    let allowed: BTreeSet<u64> = template["Parameters"]["ConsumerTimeout"]["AllowedValues"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().parse().unwrap())
        .collect();
    // The window's longest: its pattern takes 300 and nothing above.
    let longest_window = 300;
    let pattern = template["Parameters"]["MaximumBatchingWindowInSeconds"]["AllowedPattern"]
        .as_str()
        .unwrap();
    assert_eq!(pattern, "^([0-9]|[1-9][0-9]|[12][0-9]{2}|300)$");
    let mapping = template["Mappings"]["VisibilityTimeoutFor"].as_mapping().unwrap();
    let mapped: BTreeSet<u64> =
        mapping.keys().map(|k| k.as_str().unwrap().parse().unwrap()).collect();
    assert_eq!(mapped, allowed, "every allowed timeout has a visibility timeout");
    for (timeout, row) in mapping {
        let timeout: u64 = timeout.as_str().unwrap().parse().unwrap();
        assert_eq!(row["Seconds"].as_u64(), Some(6 * timeout));
        assert_eq!(row["WithWindow"].as_u64(), Some(6 * timeout + longest_window));
        assert!(6 * timeout + longest_window <= 43_200, "within SQS's maximum visibility timeout");
    }
    let (condition, with_window, without) =
        if_branches(&resource(&template, "WorkQueue")["VisibilityTimeout"]);
    assert_eq!(condition, "HasBatchingWindow");
    assert_eq!(
        format!("{:?}", template["Conditions"]["HasBatchingWindow"]),
        format!(
            "{:?}",
            serde_norway::from_str::<Value>(
                "!Not [!Equals [!Ref MaximumBatchingWindowInSeconds, \"0\"]]"
            )
            .unwrap()
        )
    );
    for (find, column) in [(with_window, "WithWindow"), (without, "Seconds")] {
        let Value::Tagged(find) = find else {
            panic!("VisibilityTimeout is computed with !FindInMap")
        };
        let TaggedValue { tag, value } = find.as_ref();
        assert_eq!(tag, "FindInMap");
        assert_eq!(value[0].as_str(), Some("VisibilityTimeoutFor"));
        assert_eq!(reference(&value[1]), "ConsumerTimeout");
        assert_eq!(value[2].as_str(), Some(column));
    }
    assert_eq!(reference(&resource(&template, "ConsumerFunction")["Timeout"]), "ConsumerTimeout");
}

#[test]
fn reserved_concurrency_is_not_below_the_mapping_maximum() {
    let template = template();
    let consumer = resource(&template, "ConsumerFunction");
    let mapping = resource(&template, "ConsumerFunctionWorkQueue");
    let (own, yours, ours) = if_branches(&mapping["FunctionName"]);
    assert_eq!((own, reference(yours)), ("HasOwnConsumerFunction", "ConsumerFunctionArn".into()));
    let (on, managed, default) = if_branches(ours);
    assert_eq!(
        (on, reference(managed), reference(default)),
        ("OnManagedInstances", "ConsumerManagedFunction".to_owned(), "ConsumerFunction".to_owned())
    );
    // Both `!If [HasMaximumConcurrency, <value>, AWS::NoValue]`: set together, or neither.
    let when = |value: &Value| -> (String, Value) {
        let Value::Tagged(tagged) = value else { panic!("expected an !If, got {value:?}") };
        assert_eq!(tagged.tag, "If");
        assert_eq!(reference(&tagged.value[2]), "AWS::NoValue");
        (tagged.value[0].as_str().unwrap().to_owned(), tagged.value[1].clone())
    };
    let (reserved_if, reserved) = when(&consumer["ReservedConcurrentExecutions"]);
    let (scaling_if, scaling) = when(&mapping["ScalingConfig"]);
    assert_eq!(
        (reserved_if.as_str(), scaling_if.as_str()),
        ("HasMaximumConcurrency", "HasMaximumConcurrency")
    );
    assert_eq!(reference(&reserved), reference(&scaling["MaximumConcurrency"]));
    let (provisioned_if, _) = when(&mapping["ProvisionedPollerConfig"]);
    assert_eq!(provisioned_if, "HasProvisionedPollers");
    let metrics = &mapping["MetricsConfig"]["Metrics"];
    assert_eq!(metrics[0].as_str(), Some("EventCount"), "the mapping's own metrics are on");
    let response_types = &mapping["FunctionResponseTypes"];
    assert_eq!(response_types[0].as_str(), Some("ReportBatchItemFailures"));
}

/// A role's statements, each `!If [condition, statement, AWS::NoValue]` as its statement.
/// A role's inline policy `policy`, or a managed policy's document (`policy` 0).
pub(crate) fn statements<'t>(template: &'t Value, role: &str, policy: usize) -> Vec<&'t Value> {
    let holder = resource(template, role);
    let document = match holder.get("PolicyDocument") {
        Some(document) => document,
        None => &holder["Policies"].as_sequence().unwrap()[policy]["PolicyDocument"],
    };
    let listed = document["Statement"].as_sequence().unwrap();
    listed
        .iter()
        .map(|statement| match statement {
            Value::Tagged(tagged) if tagged.tag == "!If" => &tagged.value[1],
            plain => plain,
        })
        .collect()
}

#[test]
fn scale_from_zero_alarm_reads_the_publisher_metrics_and_adds_a_task() {
    let template = template();
    let alarm = resource(&template, "ScaleFromZeroAlarm");
    let (math, _, metrics) = if_branches(&alarm["Metrics"]);
    assert_eq!(math, "ScalesOnMetricMath");
    let metrics = metrics.as_sequence().unwrap();
    for (id, metric) in [("tasks", "TaskCount"), ("backlog", "QueueBacklog")] {
        let stat =
            &metrics.iter().find(|m| m["Id"].as_str() == Some(id)).unwrap()["MetricStat"]["Metric"];
        assert_eq!(stat["MetricName"].as_str(), Some(metric));
        assert_eq!(dimension_names(&stat["Dimensions"]), DIMENSION_NAMES);
    }
    assert!(METRIC_NAMES.contains(&"TaskCount") && METRIC_NAMES.contains(&"QueueBacklog"));
    let policy = &resource(&template, "ScaleFromZeroPolicy")["StepScalingPolicyConfiguration"];
    assert_eq!(policy["AdjustmentType"].as_str(), Some("ChangeInCapacity"));
    assert_eq!(policy["StepAdjustments"][0]["ScalingAdjustment"].as_i64(), Some(1));
    assert_eq!(reference(&alarm["AlarmActions"][0]), "ScaleFromZeroPolicy");
}

#[test]
fn a_failed_scheduled_run_is_not_retried_asynchronously() {
    let template = template();
    let config = &resource(&template, "PublisherFunction")["EventInvokeConfig"];
    assert_eq!(config["MaximumRetryAttempts"].as_u64(), Some(0), "{config:?}");
    let age = config["MaximumEventAgeInSeconds"].as_u64().unwrap();
    assert!((60..=120).contains(&age), "stale schedule events are dropped: {age}");
}

#[test]
fn both_functions_get_the_api_call_timeout() {
    let template = template();
    for function in ["PublisherFunction", "ConsumerFunction"] {
        let env = &resource(&template, function)["Environment"]["Variables"];
        assert_eq!(reference(&env["API_CALL_TIMEOUT_MS"]), "ApiCallTimeoutMs", "{function}");
    }
}

/// The worker container's environment, name to value.
pub(crate) fn worker_env(template: &Value) -> BTreeMap<String, Value> {
    let container = &resource(template, "WorkerTaskDefinition")["ContainerDefinitions"][0];
    container["Environment"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|pair| (pair["Name"].as_str().unwrap().to_owned(), pair["Value"].clone()))
        .collect()
}

/// The demo and `make invoke` run the publisher with the template's defaults
/// (`e2e_tests::template_defaults`): with them it publishes `ScalingLoad` at the
/// settings the code calls the template's.
#[test]
fn the_local_runs_configure_the_publisher_as_the_template_deploys_it() {
    let mut env: BTreeMap<String, String> =
        e2e_tests::template_defaults::environment("PublisherFunction")
            .unwrap()
            .into_iter()
            .collect();
    for (name, value) in [
        ("QUEUE_URL", "http://127.0.0.1:1/000000000000/orders-work"),
        ("ECS_CLUSTER_NAME", "demo"),
        ("ECS_SERVICE_NAME", "orders-workers"),
    ] {
        env.insert(name.to_owned(), value.to_owned());
    }
    let vars = backpressure_core::config::Vars::new(|name: &str| env.get(name).cloned());
    let config = backlog_publisher::config::PublisherConfig::from_vars(&vars).unwrap();
    assert_eq!(config.load, Some(backlog_publisher::load::LoadSettings::DEFAULT));
    assert_eq!(config.targets.len(), 1);
}
