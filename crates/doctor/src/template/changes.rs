//! What a stack would change of what already runs: a resource it creates that
//! attaches to a service, function, queue or role the stack does not make.

use serde_json::Value;

use super::TemplateError;
use super::stack::{Stack, single, text_of};
use crate::report::Change;

pub(crate) fn changes(stack: &Stack<'_>) -> Result<Vec<Change>, TemplateError> {
    let mut changes = Vec::new();
    for (logical, resource) in stack.resources()? {
        let found = what_it_changes(stack, resource)?;
        let mut decided_by = Vec::new();
        if let Some(condition) = resource.get("Condition").and_then(Value::as_str) {
            stack.parameters_read(&serde_json::json!({"Condition": condition}), &mut decided_by);
        }
        changes.extend(found.into_iter().map(|change| Change {
            resource: logical.to_owned(),
            change,
            decided_by: decided_by.clone(),
        }));
    }
    Ok(changes)
}

/// What one resource changes of what the stack does not make.
fn what_it_changes(stack: &Stack<'_>, resource: &Value) -> Result<Vec<String>, TemplateError> {
    let written = &resource["Properties"];
    let external = |key: &str| !written[key].is_null() && !names_own_resource(stack, &written[key]);
    let value = |key: &str| stack.text(&written[key]);
    let mut found = Vec::new();
    match resource["Type"].as_str().unwrap_or_default() {
        "AWS::ApplicationAutoScaling::ScalableTarget" if external("ResourceId") => {
            found.push(format!(
                "registers a scalable target on {} ({} to {} tasks): a service has one per \
                 dimension, so bounds it already has are replaced, and deleting the stack \
                 deregisters it with its policies",
                value("ResourceId")?,
                value("MinCapacity")?,
                value("MaxCapacity")?
            ));
        }
        "AWS::ApplicationAutoScaling::ScalingPolicy" if external("ResourceId") => {
            found.push(format!("adds a scaling policy to {}", value("ResourceId")?));
        }
        "AWS::ApplicationAutoScaling::ScalingPolicy" => {
            let target = written["ScalingTargetId"]["Ref"].as_str().unwrap_or_default();
            let target_written = &stack.template["Resources"][target]["Properties"]["ResourceId"];
            if !target_written.is_null() && !names_own_resource(stack, target_written) {
                found.push(format!("adds a scaling policy to {}", stack.text(target_written)?));
            }
        }
        "AWS::Lambda::EventSourceMapping" => {
            if external("FunctionName") {
                found.push(format!(
                    "makes your function {} a reader of {}: it is invoked with its messages",
                    value("FunctionName")?,
                    value("EventSourceArn")?
                ));
            }
            if external("EventSourceArn") {
                found.push(format!(
                    "reads your queue {0}: each message it processes is deleted there; its \
                     attributes are not known before the deploy, so the rules on them wait \
                     for `doctor --queue {0}` after it",
                    value("EventSourceArn")?
                ));
            }
        }
        "AWS::IAM::ManagedPolicy" | "AWS::IAM::Policy" => {
            for key in ["Roles", "Users", "Groups"] {
                for member in taken(stack, &written[key]).as_array().into_iter().flatten() {
                    if !names_own_resource(stack, member) {
                        let who = key.trim_end_matches('s').to_lowercase();
                        found.push(format!(
                            "attaches its permissions to your {who} {}",
                            stack.text(member)?
                        ));
                    }
                }
            }
        }
        "AWS::SQS::QueuePolicy" => {
            for member in taken(stack, &written["Queues"]).as_array().into_iter().flatten() {
                if !names_own_resource(stack, member) {
                    found.push(format!(
                        "sets the access policy of your queue {}: a queue has one, so a \
                         policy it already has is replaced",
                        stack.text(member)?
                    ));
                }
            }
        }
        "AWS::Lambda::Permission" if external("FunctionName") => {
            found.push(format!("adds a permission to your function {}", value("FunctionName")?));
        }
        _ => {}
    }
    Ok(found)
}

/// How many resources of each type the stack creates.
pub(crate) fn created(stack: &Stack<'_>) -> Result<Vec<(String, usize)>, TemplateError> {
    let mut counts: std::collections::BTreeMap<String, usize> = Default::default();
    for (_, resource) in stack.resources()? {
        *counts.entry(text_of(&resource["Type"])).or_default() += 1;
    }
    Ok(counts.into_iter().collect())
}

/// Whether the expression, its conditions taken, names a resource of the stack: what does
/// not is something that already runs.
fn names_own_resource(stack: &Stack<'_>, expression: &Value) -> bool {
    let own = |logical: &str| stack.resource_type(logical).is_some();
    match single(expression) {
        Some(("Ref", name)) => own(name.as_str().unwrap_or_default()),
        Some(("Fn::GetAtt", args)) => match args {
            Value::Array(parts) => own(parts.first().and_then(Value::as_str).unwrap_or_default()),
            other => own(text_of(other).split('.').next().unwrap_or_default()),
        },
        Some(("Fn::Sub", args)) => {
            let text = match args {
                Value::Array(parts) => text_of(parts.first().unwrap_or(&Value::Null)),
                other => text_of(other),
            };
            text.split("${").skip(1).any(|part| {
                let inner = part.split('}').next().unwrap_or_default();
                own(inner.split('.').next().unwrap_or_default())
            })
        }
        Some(("Fn::If", args)) => {
            let arg = |i: usize| args.get(i).unwrap_or(&Value::Null);
            let taken = stack.condition(arg(0).as_str().unwrap_or_default()).unwrap_or(true);
            names_own_resource(stack, if taken { arg(1) } else { arg(2) })
        }
        Some((_, args)) => names_own_resource(stack, args),
        None => match expression {
            Value::Array(items) => items.iter().any(|item| names_own_resource(stack, item)),
            _ => false,
        },
    }
}

/// The expression as written on the branch its conditions take (`Fn::If` followed).
fn taken<'v>(stack: &Stack<'_>, expression: &'v Value) -> &'v Value {
    match single(expression) {
        Some(("Fn::If", args)) => {
            let arg = |i: usize| args.get(i).unwrap_or(&Value::Null);
            let holds = stack.condition(arg(0).as_str().unwrap_or_default()).unwrap_or(true);
            taken(stack, if holds { arg(1) } else { arg(2) })
        }
        _ => expression,
    }
}
