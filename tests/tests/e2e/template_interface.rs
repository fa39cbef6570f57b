//! The template's parameter groups (`AWS::CloudFormation::Interface`): every
//! parameter in exactly one group, and the first group holds what a first
//! deploy must decide, the only parameter without a default among them.

use std::collections::BTreeMap;

use serde_norway::Value;

use crate::template::template;

fn groups(template: &Value) -> Vec<(String, Vec<String>)> {
    let interface = &template["Metadata"]["AWS::CloudFormation::Interface"]["ParameterGroups"];
    let groups = interface.as_sequence().expect("ParameterGroups is a list");
    groups
        .iter()
        .map(|group| {
            let label = group["Label"]["default"].as_str().expect("a label").to_owned();
            let names = group["Parameters"].as_sequence().expect("a parameter list");
            (label, names.iter().map(|n| n.as_str().unwrap().to_owned()).collect())
        })
        .collect()
}

#[test]
fn every_parameter_is_in_exactly_one_group() {
    let template = template();
    let parameters = template["Parameters"].as_mapping().unwrap();
    let mut seen: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (label, names) in groups(&template) {
        for name in names {
            assert!(parameters.contains_key(name.as_str()), "{label}: {name} is no parameter");
            seen.entry(name).or_default().push(label.clone());
        }
    }
    for name in parameters.keys().map(|k| k.as_str().unwrap()) {
        let in_groups = seen.get(name).map_or(0, Vec::len);
        assert_eq!(in_groups, 1, "{name} is in {in_groups} groups: {:?}", seen.get(name));
    }
}

#[test]
fn the_first_group_holds_every_parameter_without_a_default() {
    let template = template();
    let groups = groups(&template);
    let (label, first) = &groups[0];
    assert!(label.starts_with("Required"), "{label}");
    for (name, parameter) in template["Parameters"].as_mapping().unwrap() {
        let name = name.as_str().unwrap();
        if parameter.get("Default").is_none() {
            assert!(first.iter().any(|n| n == name), "{name} has no default but is not in {label}");
        }
    }
    let labels = &template["Metadata"]["AWS::CloudFormation::Interface"]["ParameterLabels"];
    for name in first {
        assert!(labels[name.as_str()]["default"].is_string(), "{name} has no label");
    }
}
