//! CloudFormation refuses a template whose conditions, or whose resources,
//! refer to each other in a cycle, before it evaluates anything: so does
//! doctor, from the template as written (every branch of an `Fn::If`), and
//! without recursion, so that no template can exhaust the stack here.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::stack::single;
use super::{CycleOf, TemplateError};

/// The first cycle among the conditions, then among the resources.
pub(crate) fn refuse(template: &Value) -> Result<(), TemplateError> {
    let conditions = graph(&template["Conditions"], condition_refs);
    if let Some(path) = first_cycle(&conditions) {
        return Err(TemplateError::Cycle { of: CycleOf::Conditions, path });
    }
    let resources = graph(&template["Resources"], resource_refs);
    match first_cycle(&resources) {
        Some(path) => Err(TemplateError::Cycle { of: CycleOf::Resources, path }),
        None => Ok(()),
    }
}

type Graph<'t> = BTreeMap<&'t str, Vec<&'t str>>;

/// Each element of `section` to the elements of that section it names, each once.
fn graph<'t>(section: &'t Value, refs: impl Fn(&'t Value, &mut Vec<&'t str>)) -> Graph<'t> {
    let Some(elements) = section.as_object() else { return Graph::new() };
    let mut graph = Graph::new();
    for (name, element) in elements {
        let mut named = Vec::new();
        refs(element, &mut named);
        let mut edges: Vec<&str> = Vec::new();
        for target in named {
            if elements.contains_key(target) && !edges.contains(&target) {
                edges.push(target);
            }
        }
        graph.insert(name.as_str(), edges);
    }
    graph
}

/// The conditions a condition's definition names (`Condition`, and `Fn::If`'s first argument).
fn condition_refs<'t>(definition: &'t Value, into: &mut Vec<&'t str>) {
    walk(definition, |function, args| match function {
        "Condition" => into.extend(args.as_str()),
        "Fn::If" => into.extend(args.get(0).and_then(Value::as_str)),
        _ => {}
    });
}

/// What a resource names: in its properties `Ref`, `Fn::GetAtt` and `Fn::Sub`'s `${Name}` and
/// `${Name.Attribute}` (neither its own variables nor `${!Literal}`), and its `DependsOn`. A SAM
/// resource's `Events` are left out: the transform makes each a resource of its own (an SQS
/// event, an event source mapping), so the function does not depend on its queue.
fn resource_refs<'t>(resource: &'t Value, into: &mut Vec<&'t str>) {
    let properties = match (&resource["Properties"], &resource["Type"]) {
        (Value::Object(properties), Value::String(kind))
            if kind.starts_with("AWS::Serverless::") =>
        {
            properties.iter().filter(|(key, _)| *key != "Events").map(|(_, value)| value).collect()
        }
        (properties, _) => vec![properties],
    };
    for properties in properties {
        walk(properties, |function, args| visit(function, args, into));
    }
    match &resource["DependsOn"] {
        Value::String(name) => into.push(name),
        Value::Array(names) => into.extend(names.iter().filter_map(Value::as_str)),
        _ => {}
    }
}

/// What one intrinsic function of a resource's properties names.
fn visit<'t>(function: &str, args: &'t Value, into: &mut Vec<&'t str>) {
    match function {
        "Ref" => into.extend(args.as_str()),
        "Fn::GetAtt" => match args {
            Value::Array(parts) => into.extend(parts.first().and_then(Value::as_str)),
            Value::String(dotted) => into.extend(dotted.split('.').next()),
            _ => {}
        },
        "Fn::Sub" => {
            let (text, variables) = match args {
                Value::Array(parts) => {
                    (parts.first().and_then(Value::as_str), parts.get(1).and_then(Value::as_object))
                }
                other => (other.as_str(), None),
            };
            into.extend(text.into_iter().flat_map(|text| sub_names(text, variables)));
        }
        _ => {}
    }
}

/// The elements `${...}` names in a Sub's text, its own variables left out.
fn sub_names<'t>(
    text: &'t str,
    variables: Option<&'t Map<String, Value>>,
) -> impl Iterator<Item = &'t str> {
    text.split("${").skip(1).filter_map(move |part| {
        let inner = part.split_once('}')?.0;
        let own = variables.is_some_and(|variables| variables.contains_key(inner));
        (!inner.starts_with('!') && !own).then(|| inner.split('.').next().unwrap_or(inner))
    })
}

/// Every intrinsic function in `expression`, with its arguments, which are walked in turn: a
/// worklist, not recursion, however deep the template nests.
fn walk<'t>(expression: &'t Value, mut visit: impl FnMut(&str, &'t Value)) {
    let mut pending = vec![expression];
    while let Some(expression) = pending.pop() {
        if let Some((function, args)) = single(expression) {
            visit(function, args);
            pending.push(args);
            continue;
        }
        match expression {
            // Reversed onto the worklist, so the first written is the first walked.
            Value::Array(items) => pending.extend(items.iter().rev()),
            Value::Object(fields) => pending.extend(fields.values().rev()),
            _ => {}
        }
    }
}

/// The first cycle a depth-first search meets, visiting the elements in order: its path
/// starts and ends with the element it closes on.
fn first_cycle(graph: &Graph<'_>) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    let mut marks: BTreeMap<&str, Mark> = BTreeMap::new();
    for &start in graph.keys() {
        if marks.contains_key(start) {
            continue;
        }
        // The path from `start`, each element with the index of its next edge to follow.
        let mut path: Vec<(&str, usize)> = vec![(start, 0)];
        marks.insert(start, Mark::Open);
        while let Some((element, next)) = path.last_mut() {
            let edges = graph.get(*element).map_or(&[][..], Vec::as_slice);
            let Some(&target) = edges.get(*next) else {
                marks.insert(*element, Mark::Done);
                path.pop();
                continue;
            };
            *next += 1;
            match marks.get(target) {
                Some(Mark::Open) => {
                    let from = path.iter().position(|(open, _)| *open == target).unwrap_or(0);
                    let mut cycle: Vec<String> =
                        path[from..].iter().map(|(open, _)| (*open).to_owned()).collect();
                    cycle.push(target.to_owned());
                    return Some(cycle);
                }
                Some(Mark::Done) => {}
                None => {
                    marks.insert(target, Mark::Open);
                    path.push((target, 0));
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cycle(template: &str) -> Option<String> {
        let template = super::super::document::parse(template).unwrap();
        refuse(&template).err().map(|error| error.to_string())
    }

    #[test]
    fn a_cycle_is_found_past_the_elements_that_lead_into_it() {
        let template = "
Resources:
  A: {Type: T, Properties: {X: !Ref B}}
  B: {Type: T, Properties: {X: !GetAtt [C, Arn]}}
  C: {Type: T, Properties: {X: !Sub '${D.Arn}'}}
  D: {Type: T, Properties: {X: [!Ref B, !Ref AWS::Region, !Ref Param]}}
";
        let expected = "the template's resources refer to each other in a cycle: B → C → D → B";
        assert_eq!(cycle(template).as_deref(), Some(expected));
    }

    #[test]
    fn a_diamond_is_no_cycle() {
        let template = "
Conditions:
  Top: !And [!Condition Left, !Condition Right]
  Left: !Condition Bottom
  Right: !Not [!Condition Bottom]
  Bottom: !Equals [a, a]
Resources:
  A: {Type: T, DependsOn: [B, C]}
  B: {Type: T, DependsOn: D}
  C: {Type: T, Properties: {X: !If [Top, !Ref D, !Ref AWS::NoValue]}}
  D: {Type: T}
";
        assert_eq!(cycle(template), None);
    }

    #[test]
    fn a_sub_names_only_what_its_variables_do_not() {
        let names: Vec<&str> = sub_names("${A}-${B.Arn}-${!C}-${D}-${E", None).collect();
        assert_eq!(names, ["A", "B", "D"]);
        let variables = serde_json::json!({"A": 1});
        let names: Vec<&str> = sub_names("${A}-${B}", variables.as_object()).collect();
        assert_eq!(names, ["B"]);
    }
}
