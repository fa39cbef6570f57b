//! The resources a template would create for a parameter set, as the same
//! plain data the live reader fills: the rules then run on them unchanged.

use std::collections::BTreeMap;

use serde_json::Value;

use super::TemplateError;
use super::stack::{Stack, text_of};
use crate::deployment::{
    Alarm, Deployment, Function, Mapping, Pollers, Queue, Redrive, RedriveAllow,
};

/// The deployment a template would make, and where each piece came from.
pub(crate) struct Planned {
    pub(crate) deployment: Deployment,
    /// A function's physical name to its logical ID.
    functions: BTreeMap<String, String>,
    /// Each resource's properties as written, to say which parameters set one.
    written: BTreeMap<String, Value>,
}

pub(crate) fn plan(stack: &Stack<'_>) -> Result<Planned, TemplateError> {
    let mut planned = Planned {
        deployment: Deployment::default(),
        functions: BTreeMap::new(),
        written: BTreeMap::new(),
    };
    let globals = stack.resolve(&stack.template["Globals"]["Function"])?.unwrap_or_default();
    for (logical, resource) in stack.resources()? {
        let written = &resource["Properties"];
        planned.written.insert(logical.to_owned(), written.clone());
        let properties = {
            let _start = stack.evaluating(logical);
            stack.resolve(written)?.unwrap_or_default()
        };
        match resource["Type"].as_str().unwrap_or_default() {
            "AWS::SQS::Queue" => {
                planned.deployment.queues.push(queue(stack, logical, &properties)?);
            }
            kind @ ("AWS::Lambda::Function" | "AWS::Serverless::Function") => {
                let serverless = kind == "AWS::Serverless::Function";
                let setting = |key: &str| match (&properties[key], serverless) {
                    (Value::Null, true) => globals[key].clone(),
                    (value, _) => value.clone(),
                };
                let name = stack.physical_name(logical)?;
                let arn = stack.text(&serde_json::json!({"Fn::GetAtt": [logical, "Arn"]}))?;
                let mut function =
                    Function::new(&arn, &name, number(&setting("Timeout")).unwrap_or(3));
                function.reserved_concurrency = number(&setting("ReservedConcurrentExecutions"));
                function.reports_item_failures =
                    !setting("Environment")["Variables"]["QUARANTINE_QUEUE_URL"].is_null();
                for (event, spec) in properties["Events"].as_object().into_iter().flatten() {
                    if spec["Type"] == "SQS" {
                        let uuid = format!("{logical}.{event}");
                        let queue_arn = text_of(&spec["Properties"]["Queue"]);
                        planned.deployment.mappings.push(mapping(
                            &uuid,
                            &queue_arn,
                            &arn,
                            &spec["Properties"],
                        ));
                    }
                }
                planned.functions.insert(name, logical.to_owned());
                planned.deployment.functions.push(function);
            }
            "AWS::Lambda::EventSourceMapping" => {
                let queue_arn = text_of(&properties["EventSourceArn"]);
                if !queue_arn.contains(":sqs:") {
                    continue;
                }
                let function = text_of(&properties["FunctionName"]);
                let function_arn = if function.starts_with("arn:") {
                    function
                } else {
                    format!("arn:aws:lambda:REGION:ACCOUNT:function:{function}")
                };
                planned.deployment.mappings.push(mapping(
                    logical,
                    &queue_arn,
                    &function_arn,
                    &properties,
                ));
            }
            "AWS::CloudWatch::Alarm" => {
                let name = text_of(&properties["AlarmName"]);
                let name = if name.is_empty() { logical.to_owned() } else { name };
                if let Some(alarm) = alarm(&name, &properties) {
                    planned.deployment.alarms.push(alarm);
                }
            }
            _ => {}
        }
    }
    Ok(planned)
}

/// A whole number however CloudFormation's Number writes it: `1000`,
/// `1e3` and `1000.0` are one setting.
fn number(value: &Value) -> Option<u32> {
    let number = match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => super::parameters::number(s.trim()),
        _ => None,
    }?;
    let whole = number.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&number);
    // Whole and in range: the conversion is exact.
    whole.then_some(number as u32)
}

/// A JSON policy written as an object, or as a string holding one.
fn object(value: &Value) -> Value {
    match value {
        Value::String(text) => serde_json::from_str(text).unwrap_or_default(),
        other => other.clone(),
    }
}

fn queue(stack: &Stack<'_>, logical: &str, properties: &Value) -> Result<Queue, TemplateError> {
    let name = stack.physical_name(logical)?;
    let arn = format!("arn:aws:sqs:REGION:ACCOUNT:{name}");
    // The logical ID stands for the URL: a fix names the resource to change in the template.
    let mut queue = Queue::new(&arn, logical, &name);
    // Who reads a queue is the deploy's to say (a service, a mapping added later).
    queue.asked = false;
    queue.fifo = text_of(&properties["FifoQueue"]) == "true";
    queue.visibility_timeout_s = number(&properties["VisibilityTimeout"]).unwrap_or(30);
    queue.retention_s = number(&properties["MessageRetentionPeriod"]).unwrap_or(345_600);
    queue.max_message_bytes =
        number(&properties["MaximumMessageSize"]).unwrap_or(queue.max_message_bytes);
    let redrive = object(&properties["RedrivePolicy"]);
    if !redrive.is_null() {
        queue.redrive = Some(Redrive {
            dead_letter_arn: text_of(&redrive["deadLetterTargetArn"]),
            max_receive_count: number(&redrive["maxReceiveCount"]).unwrap_or(0),
        });
    }
    let allow = object(&properties["RedriveAllowPolicy"]);
    queue.redrive_allow = match allow["redrivePermission"].as_str() {
        Some("denyAll") => RedriveAllow::DenyAll,
        Some("byQueue") => RedriveAllow::ByQueue(
            allow["sourceQueueArns"].as_array().into_iter().flatten().map(text_of).collect(),
        ),
        _ => RedriveAllow::AllowAll,
    };
    Ok(queue)
}

fn mapping(uuid: &str, queue_arn: &str, function_arn: &str, properties: &Value) -> Mapping {
    let mut mapping = Mapping::new(uuid, queue_arn, function_arn);
    mapping.enabled = text_of(&properties["Enabled"]) != "false";
    mapping.batch_size = number(&properties["BatchSize"]).unwrap_or(10);
    mapping.window_s = number(&properties["MaximumBatchingWindowInSeconds"]).unwrap_or(0);
    mapping.reports_item_failures = properties["FunctionResponseTypes"]
        .as_array()
        .is_some_and(|types| types.iter().any(|t| t == "ReportBatchItemFailures"));
    mapping.maximum_concurrency = number(&properties["ScalingConfig"]["MaximumConcurrency"]);
    let pollers = &properties["ProvisionedPollerConfig"];
    if !pollers.is_null() {
        mapping.pollers = Some(Pollers {
            minimum: number(&pollers["MinimumPollers"]).unwrap_or(0),
            maximum: number(&pollers["MaximumPollers"]).unwrap_or(0),
        });
    }
    mapping
}

fn alarm(name: &str, properties: &Value) -> Option<Alarm> {
    let mut metrics = Vec::new();
    let mut queue_names = Vec::new();
    let mut take = |metric: &Value| {
        if metric["Namespace"] != "AWS/SQS" {
            return;
        }
        metrics.push(text_of(&metric["MetricName"]));
        for dimension in metric["Dimensions"].as_array().into_iter().flatten() {
            if dimension["Name"] == "QueueName" {
                queue_names.push(text_of(&dimension["Value"]));
            }
        }
    };
    take(properties);
    for query in properties["Metrics"].as_array().into_iter().flatten() {
        take(&query["MetricStat"]["Metric"]);
    }
    if metrics.is_empty() {
        return None;
    }
    let mut alarm = Alarm::new(name, "", "");
    alarm.metrics = metrics;
    alarm.queue_names = queue_names;
    Some(alarm)
}

impl Planned {
    /// A fix the live check words as an `aws` command, worded for the template instead: which
    /// resource's property to set, and the parameters that set it.
    pub(crate) fn template_fix(&self, stack: &Stack<'_>, fix: &str) -> String {
        let words: Vec<&str> = fix.split(' ').collect();
        let (logical, property, value) = match words.as_slice() {
            [
                "aws",
                "sqs",
                "set-queue-attributes",
                "--queue-url",
                logical,
                "--attributes",
                setting,
            ] => {
                let (name, value) = setting.split_once('=').unwrap_or((setting, ""));
                ((*logical).to_owned(), name.to_owned(), value.trim_matches('\'').to_owned())
            }
            [
                "aws",
                "lambda",
                "update-event-source-mapping",
                "--uuid",
                logical,
                flag,
                rest @ ..,
            ] => {
                let property = match *flag {
                    "--batch-size" => "BatchSize",
                    "--maximum-batching-window-in-seconds" => "MaximumBatchingWindowInSeconds",
                    "--function-response-types" => "FunctionResponseTypes",
                    "--scaling-config" => "ScalingConfig",
                    "--provisioned-poller-config" => "ProvisionedPollerConfig",
                    _ => return fix.to_owned(),
                };
                ((*logical).to_owned(), property.to_owned(), rest.join(" "))
            }
            ["aws", "lambda", "put-function-concurrency", "--function-name", name, _, value] => {
                let Some(logical) = self.functions.get(*name) else { return fix.to_owned() };
                (logical.clone(), "ReservedConcurrentExecutions".to_owned(), (*value).to_owned())
            }
            ["aws", "cloudwatch", "put-metric-alarm", "--alarm-name", name, ..] => {
                let queue = name.trim_end_matches("-depth");
                return format!(
                    "add an AWS::CloudWatch::Alarm on {queue}'s ApproximateNumberOfMessagesVisible \
                     (AWS/SQS, Maximum over 60 s, GreaterThanThreshold 0)"
                );
            }
            _ => return fix.to_owned(),
        };
        let (logical, property) = (logical.split('.').next().unwrap_or_default(), property);
        let mut parameters = Vec::new();
        if let Some(written) = self.written.get(logical) {
            stack.parameters_read(&written[property.as_str()], &mut parameters);
        }
        let through = if parameters.is_empty() {
            String::new()
        } else {
            format!(" (the template sets it from {})", parameters.join(", "))
        };
        format!("in the template, {logical}'s {property}: {value}{through}")
    }
}
