//! The parameters a set gives that nothing it creates reads: a value that takes no effect,
//! such as `MinTasks` for a service whose scaling the stack does not register.

use std::collections::BTreeSet;

use serde_json::Value;

use super::TemplateError;
use super::stack::{Stack, single};
use crate::finding::Finding;
use crate::rules::PARAMETER_UNUSED;

impl Stack<'_> {
    /// The parameters what the stack creates reads: the conditions that decide which resources
    /// and outputs exist, and every field of each one created (of an `Fn::If`, the branch
    /// taken). The template's Rules do not count: they check values, and make nothing of them.
    pub(crate) fn parameters_used(&self) -> Result<BTreeSet<String>, TemplateError> {
        self.read.borrow_mut().clear();
        for (logical, resource) in self.resources()? {
            let _open = self.evaluating(logical);
            self.resolve(resource)?;
        }
        for output in self.template["Outputs"].as_object().into_iter().flatten().map(|o| o.1) {
            let wanted = match output.get("Condition").and_then(Value::as_str) {
                Some(condition) => self.condition(condition)?,
                None => true,
            };
            if wanted {
                self.resolve(&output["Value"])?;
            }
        }
        Ok(self.read.take())
    }

    /// The parameters an expression reads, its conditions' included, in the order it reads
    /// them: a worklist, each condition expanded once, so neither a cycle nor depth recurses.
    pub(crate) fn parameters_read<'e>(&'e self, expression: &'e Value, into: &mut Vec<String>) {
        let mut expanded: Vec<&str> = Vec::new();
        let mut pending = vec![expression];
        while let Some(expression) = pending.pop() {
            let mut next: Vec<&Value> = Vec::new();
            let mut condition = None;
            match single(expression) {
                Some(("Ref", name)) => {
                    let name = name.as_str().unwrap_or_default();
                    if self.values.contains_key(name) && !into.iter().any(|n| n == name) {
                        into.push(name.to_owned());
                    }
                }
                Some(("Condition", name)) => condition = Some(name),
                Some(("Fn::If", args)) => {
                    condition = args.get(0);
                    next.extend(args.as_array().into_iter().flatten().skip(1).take(2));
                }
                Some((_, args)) => next.push(args),
                None => match expression {
                    Value::Array(items) => next.extend(items),
                    Value::Object(fields) => next.extend(fields.values()),
                    _ => {}
                },
            }
            if let Some(name) = condition.map(|name| name.as_str().unwrap_or_default())
                && !expanded.contains(&name)
            {
                expanded.push(name);
                next.insert(0, &self.template["Conditions"][name]);
            }
            pending.extend(next.into_iter().rev());
        }
    }
}

/// A warning for each parameter `given` that nothing the stack creates reads, naming the
/// resources that would and the condition that leaves them out. Nothing is said when the
/// template cannot be evaluated whole: an unused parameter is never guessed.
pub(super) fn unused_parameters(stack: &Stack, given: &BTreeSet<&String>) -> Vec<Finding> {
    let Ok(used) = stack.parameters_used() else { return Vec::new() };
    let resources = stack.template["Resources"].as_object().into_iter().flatten();
    let resources: Vec<(&String, &Value)> = resources.collect();
    let mut findings = Vec::new();
    for name in given.iter().filter(|name| !used.contains(name.as_str())) {
        let readers: Vec<(&String, Option<&str>)> = resources
            .iter()
            .filter(|(_, resource)| reads(resource, name))
            .map(|(logical, resource)| (*logical, resource["Condition"].as_str()))
            .collect();
        let value = &stack.values[name.as_str()];
        let (measured, fix) = if readers.is_empty() {
            (
                format!(
                    "{name}={value} is given, and no resource or output of the template reads it"
                ),
                format!("leave {name} out of the parameter set"),
            )
        } else {
            let mut conditions = Vec::new();
            let names: Vec<String> = readers
                .iter()
                .map(|(logical, condition)| match condition {
                    Some(condition) if !stack.condition(condition).unwrap_or(true) => {
                        conditions.push(*condition);
                        format!("{logical} (created when {condition})")
                    }
                    _ => format!("{logical} (in an Fn::If branch this set does not take)"),
                })
                .collect();
            conditions.dedup();
            let only_where = match conditions.as_slice() {
                [] => String::new(),
                [condition] => {
                    let mut decided_by = Vec::new();
                    stack.parameters_read(
                        &stack.template["Conditions"][*condition],
                        &mut decided_by,
                    );
                    format!(
                        ": it takes effect only where {condition} holds (which reads {})",
                        decided_by.join(", ")
                    )
                }
                several => format!(": it takes effect only where {} holds", or_list(several)),
            };
            (
                format!(
                    "{name}={value} is given, and nothing this set creates reads it; only {} \
                     would",
                    names.join(", ")
                ),
                format!("leave {name} out of the parameter set{only_where}"),
            )
        };
        let finding = Finding::new(&PARAMETER_UNUSED, "template", measured, fix);
        findings.push(finding.on(format!("parameter {name}")));
    }
    findings
}

/// `a`, `a or b`, `a, b or c`.
fn or_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [only] => (*only).to_owned(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// Whether `resource` names the parameter `name`: a `Ref`, or `${name}` in an `Fn::Sub`.
fn reads(resource: &Value, name: &str) -> bool {
    match single(resource) {
        Some(("Ref", target)) => target.as_str() == Some(name),
        Some(("Fn::Sub", args)) => {
            let text = args.get(0).unwrap_or(args).as_str().unwrap_or_default();
            text.contains(&format!("${{{name}}}")) || args.get(1).is_some_and(|v| reads(v, name))
        }
        _ => match resource {
            Value::Array(items) => items.iter().any(|item| reads(item, name)),
            Value::Object(fields) => fields.values().any(|value| reads(value, name)),
            _ => false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::super::{ParameterSet, check_template};

    const TEMPLATE: &str = "
Parameters:
  Kind: {Type: String, Default: queue}
  Visibility: {Type: Number, Default: 30}
  Retention: {Type: Number, Default: 345600}
  Label: {Type: String, Default: none}
  Spare: {Type: String, Default: none}
Conditions:
  IsTopic: !Equals [!Ref Kind, topic]
Resources:
  Q:
    Type: AWS::SQS::Queue
    Properties:
      VisibilityTimeout: !Ref Visibility
      MessageRetentionPeriod: !If [IsTopic, !Ref Retention, !Ref AWS::NoValue]
      QueueName: !Sub 'work-${Label}'
  T:
    Type: AWS::SNS::Topic
    Condition: IsTopic
    Properties:
      DisplayName: !Sub '${Spare}'
";

    fn unused(pairs: &[(&str, &str)]) -> Vec<String> {
        let mut set = ParameterSet::default();
        for (name, value) in pairs {
            set.values.insert((*name).to_owned(), (*value).to_owned());
        }
        let report = check_template("t.yaml", TEMPLATE, "set.json", &set).unwrap();
        let unused = report.findings.iter().filter(|f| f.rule == "parameter-unused");
        unused.map(|f| format!("{}: {}", f.measured, f.fix)).collect()
    }

    #[test]
    fn a_parameter_read_by_what_the_set_creates_is_used() {
        let used = [("Kind", "queue"), ("Visibility", "60"), ("Label", "orders")];
        assert_eq!(unused(&used), Vec::<String>::new());
        assert_eq!(unused(&[("Kind", "topic"), ("Retention", "60"), ("Spare", "x")]).len(), 0);
    }

    #[test]
    fn a_parameter_only_an_untaken_branch_or_an_uncreated_resource_reads_is_unused() {
        let found = unused(&[("Retention", "60"), ("Spare", "x")]);
        assert_eq!(
            found,
            [
                "Retention=60 is given, and nothing this set creates reads it; only Q (in an \
                 Fn::If branch this set does not take) would: leave Retention out of the \
                 parameter set",
                "Spare=x is given, and nothing this set creates reads it; only T (created when \
                 IsTopic) would: leave Spare out of the parameter set: it takes effect only \
                 where IsTopic holds (which reads Kind)",
            ]
        );
    }

    #[test]
    fn a_parameter_the_set_leaves_to_its_default_is_not_named() {
        assert_eq!(unused(&[]), Vec::<String>::new());
    }
}
