//! Every metric the template's dashboard and alarms name is one the code
//! emits (namespace, name and dimensions, read from batch-consumer's own EMF
//! output and the publisher's metric names) or one AWS publishes; the
//! dashboard's widgets tile its grid.

use std::collections::BTreeSet;
use std::time::Duration;

use backlog_publisher::metrics::{DIMENSION_NAMES, METRIC_NAMES};
use backpressure_core::config::DEFAULT_NAMESPACE;
use e2e_tests::downstream::Downstream;
use e2e_tests::fixtures::{Aws, binary, unique};
use e2e_tests::runtime_host::LambdaHost;
use serde_json::Value as Json;
use serde_norway::Value;

use crate::template::{resource, template};

/// (namespace, metric, dimension names in order).
type Metric = (String, String, Vec<String>);

/// What AWS publishes, with the dimension the template reads it by: the SQS
/// Developer Guide's "Available CloudWatch metrics" (fair queues' quiet-group
/// metrics among them) and Lambda's function and event source mapping metrics.
const AWS_PUBLISHED: &[(&str, &str, &[&str])] = &[
    ("AWS/SQS", "ApproximateNumberOfMessagesVisible", &["QueueName"]),
    ("AWS/SQS", "ApproximateNumberOfMessagesNotVisible", &["QueueName"]),
    ("AWS/SQS", "ApproximateNumberOfMessagesDelayed", &["QueueName"]),
    ("AWS/SQS", "ApproximateAgeOfOldestMessage", &["QueueName"]),
    ("AWS/SQS", "ApproximateNumberOfNoisyGroups", &["QueueName"]),
    ("AWS/SQS", "ApproximateNumberOfMessagesVisibleInQuietGroups", &["QueueName"]),
    ("AWS/SQS", "ApproximateAgeOfOldestMessageInQuietGroups", &["QueueName"]),
    ("AWS/Lambda", "Errors", &["FunctionName"]),
    ("AWS/Lambda", "Throttles", &["FunctionName"]),
    ("AWS/Lambda", "ConcurrentExecutions", &["FunctionName"]),
    ("AWS/Lambda", "PolledEventCount", &["EventSourceMappingUUID"]),
    ("AWS/Lambda", "InvokedEventCount", &["EventSourceMappingUUID"]),
    ("AWS/Lambda", "FailedInvokeEventCount", &["EventSourceMappingUUID"]),
    ("AWS/Lambda", "DroppedEventCount", &["EventSourceMappingUUID"]),
    ("AWS/Lambda", "DeletedEventCount", &["EventSourceMappingUUID"]),
    // Container Insights' service metrics (ScalingSignal=metric-math).
    ("ECS/ContainerInsights", "RunningTaskCount", &["ClusterName", "ServiceName"]),
    ("ECS/ContainerInsights", "DesiredTaskCount", &["ClusterName", "ServiceName"]),
];

/// batch-consumer's EMF documents from one real invocation (the sample
/// event: done, retried and quarantined records), and the publisher's names.
async fn emitted() -> BTreeSet<Metric> {
    let aws = Aws::from_env().await.unwrap();
    let quarantine = aws.create_queue(&unique("quarantine")).await.unwrap();
    let downstream = Downstream::start().await.unwrap();
    let env = [("DOWNSTREAM_URL", downstream.url()), ("QUARANTINE_QUEUE_URL", quarantine)];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let host = LambdaHost::start(&binary("batch-consumer").unwrap(), &env).await.unwrap();
    let event: Json =
        serde_json::from_str(include_str!("../../../events/sqs-standard.json")).unwrap();
    host.invoke(&event, Duration::from_secs(30)).await;
    let mut metrics = BTreeSet::new();
    for line in host.logs() {
        let Ok(document) = serde_json::from_str::<Json>(&line) else { continue };
        for directive in document["_aws"]["CloudWatchMetrics"].as_array().into_iter().flatten() {
            let namespace = directive["Namespace"].as_str().unwrap().to_owned();
            let dimensions: Vec<String> = directive["Dimensions"][0]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.as_str().unwrap().to_owned())
                .collect();
            for metric in directive["Metrics"].as_array().unwrap() {
                let name = metric["Name"].as_str().unwrap().to_owned();
                metrics.insert((namespace.clone(), name, dimensions.clone()));
            }
        }
    }
    assert!(
        metrics.iter().any(|(_, n, _)| n == "MessagesProcessed"),
        "no EMF read: {:?}",
        host.logs()
    );
    let dimensions: Vec<String> = DIMENSION_NAMES.iter().map(|d| (*d).to_owned()).collect();
    for name in METRIC_NAMES {
        metrics.insert((DEFAULT_NAMESPACE.to_owned(), name.to_owned(), dimensions.clone()));
    }
    metrics
}

fn known(metric: &Metric, emitted: &BTreeSet<Metric>) -> bool {
    let (namespace, name, dimensions) = metric;
    emitted.contains(metric)
        || AWS_PUBLISHED
            .iter()
            .any(|(ns, n, d)| ns == namespace && n == name && dimensions.as_slice() == *d)
}

/// The dashboard body for one consumer type, its `${...}` filled in: quoted
/// ones with their own name, bare ones (numbers) with 1, the namespace with
/// the parameter's default and the ECS scaling signal with `signal`
/// (`metric-math`: the branch that reads AWS's metrics instead of the publisher's).
fn dashboard(template: &Value, lambda: bool, signal: &str) -> (Json, BTreeSet<String>) {
    let body = &resource(template, "Dashboard")["DashboardBody"];
    let Value::Tagged(join) = body else { panic!("DashboardBody is a !Join") };
    let parts = join.value[1].as_sequence().unwrap();
    let Value::Tagged(choice) = &parts[1] else { panic!("the second part is an !If") };
    assert_eq!(choice.value[0].as_str(), Some("IsLambdaConsumer"));
    let mut chosen = &choice.value[if lambda { 1 } else { 2 }];
    if !lambda {
        let Value::Tagged(math) = chosen else { panic!("the ECS part is an !If") };
        assert_eq!(math.value[0].as_str(), Some("ScalesOnMetricMath"));
        chosen = &math.value[if signal == "metric-math" { 1 } else { 2 }];
    }
    let mut text = String::new();
    let mut names = BTreeSet::new();
    for part in [&parts[0], chosen] {
        let Value::Tagged(sub) = part else { panic!("each part is a !Sub") };
        text.push_str(sub.value[0].as_str().unwrap());
        names.extend(
            sub.value[1].as_mapping().unwrap().keys().map(|k| k.as_str().unwrap().to_owned()),
        );
    }
    let mut filled = String::new();
    let mut rest = text.as_str();
    let mut used = BTreeSet::new();
    while let Some(start) = rest.find("${") {
        let end = start + rest[start..].find('}').unwrap();
        let name = &rest[start + 2..end];
        used.insert(name.to_owned());
        filled.push_str(&rest[..start]);
        let quoted = rest[..start].ends_with('"');
        filled.push_str(match name {
            "MetricNamespace" => DEFAULT_NAMESPACE,
            "SignalMetric" => signal,
            _ if quoted => name,
            _ => "1",
        });
        rest = &rest[end + 1..];
    }
    filled.push_str(rest);
    let parameters = template["Parameters"].as_mapping().unwrap();
    for name in &used {
        let resolvable = names.contains(name)
            || parameters.contains_key(name.as_str())
            || name.starts_with("AWS::");
        assert!(
            resolvable,
            "${{{name}}} is neither a !Sub variable, a parameter nor a pseudo parameter"
        );
    }
    (serde_json::from_str(&filled).unwrap_or_else(|e| panic!("{e}:\n{filled}")), used)
}

fn widget_metrics(body: &Json) -> Vec<Metric> {
    let mut metrics = Vec::new();
    for widget in body["widgets"].as_array().unwrap() {
        for row in widget["properties"]["metrics"].as_array().unwrap() {
            let fields: Vec<&str> =
                row.as_array().unwrap().iter().filter_map(Json::as_str).collect();
            if fields.is_empty() {
                // A metric math expression over the rows that are metrics.
                assert!(row[0]["expression"].is_string(), "{row}");
                continue;
            }
            let dimensions = fields[2..].iter().step_by(2).map(|d| (*d).to_owned()).collect();
            metrics.push((fields[0].to_owned(), fields[1].to_owned(), dimensions));
        }
    }
    metrics
}

fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Tagged(t) if t.tag == "Ref" && t.value.as_str() == Some("MetricNamespace") => {
            DEFAULT_NAMESPACE.to_owned()
        }
        other => panic!("a namespace or name given as {other:?}"),
    }
}

fn alarm_metrics(template: &Value) -> Vec<(String, Metric)> {
    let mut metrics = Vec::new();
    for (id, r) in template["Resources"].as_mapping().unwrap() {
        if r["Type"].as_str() != Some("AWS::CloudWatch::Alarm") {
            continue;
        }
        let p = &r["Properties"];
        // Queries, or `!If [condition, queries, queries]`.
        let query_lists: Vec<&Value> = match &p["Metrics"] {
            Value::Tagged(choice) if choice.tag == "If" => vec![&choice.value[1], &choice.value[2]],
            Value::Sequence(_) => vec![&p["Metrics"]],
            _ => Vec::new(),
        };
        let stats: Vec<&Value> = if query_lists.is_empty() {
            vec![p]
        } else {
            query_lists
                .into_iter()
                .flat_map(|queries| queries.as_sequence().unwrap())
                .filter_map(|q| q.get("MetricStat"))
                .map(|s| &s["Metric"])
                .collect()
        };
        for m in stats {
            let dimensions = m["Dimensions"].as_sequence().unwrap();
            let names = dimensions.iter().map(|d| d["Name"].as_str().unwrap().to_owned()).collect();
            metrics.push((
                id.as_str().unwrap().to_owned(),
                (text(&m["Namespace"]), text(&m["MetricName"]), names),
            ));
        }
    }
    metrics
}

/// The Lambda consumer's dashboard, and the ECS consumer's on each scaling signal.
const VARIANTS: [(bool, &str); 4] =
    [(true, "-"), (false, "ScalingLoad"), (false, "BacklogPerTask"), (false, "metric-math")];

#[tokio::test]
async fn every_metric_the_dashboard_and_alarms_name_is_emitted_or_published() {
    let template = template();
    let emitted = emitted().await;
    for (lambda, signal) in VARIANTS {
        let (body, _) = dashboard(&template, lambda, signal);
        for metric in widget_metrics(&body) {
            assert!(known(&metric, &emitted), "dashboard ({signal}) names {metric:?}");
        }
    }
    let alarms = alarm_metrics(&template);
    assert!(alarms.len() >= 10, "{alarms:?}");
    for (alarm, metric) in alarms {
        assert!(known(&metric, &emitted), "{alarm} names {metric:?}");
    }
}

#[test]
fn the_dashboard_tiles_its_grid_and_shows_each_consumers_own_scaling() {
    let template = template();
    for (lambda, signal) in VARIANTS {
        let (body, used) = dashboard(&template, lambda, signal);
        let mut cells = BTreeSet::new();
        for widget in body["widgets"].as_array().unwrap() {
            let at = |k: &str| widget[k].as_u64().unwrap();
            assert!(at("x") + at("width") <= 24, "{widget}");
            for x in at("x")..at("x") + at("width") {
                for y in at("y")..at("y") + at("height") {
                    assert!(cells.insert((x, y)), "widgets overlap at ({x}, {y})");
                }
            }
        }
        let names: BTreeSet<String> =
            widget_metrics(&body).into_iter().map(|(_, n, _)| n).collect();
        let own = match (lambda, signal) {
            (true, _) => ["PolledEventCount", "Throttles"],
            (false, "metric-math") => ["RunningTaskCount", "ApproximateNumberOfMessagesNotVisible"],
            (false, _) => ["DesiredTasks", "TaskCount"],
        };
        for name in own.into_iter().chain([
            "MessagesProcessed",
            "DeadlineCuts",
            "ApproximateNumberOfNoisyGroups",
        ]) {
            assert!(names.contains(name), "lambda {lambda}: {name} missing from {names:?}");
        }
        assert_eq!(
            used.contains("SignalMetric"),
            !lambda && signal != "metric-math",
            "the published scaling signal is the ECS consumer's with a publisher"
        );
    }
}
