//! A CloudFormation template, YAML or JSON, as one JSON value: the YAML short
//! forms (`!Ref X`, `!GetAtt A.B`, `!If [...]`) become the long ones
//! (`{"Ref": "X"}`, `{"Fn::GetAtt": ["A", "B"]}`, `{"Fn::If": [...]}`), so the
//! evaluator reads one shape.

use serde_json::{Map, Value};
use serde_norway::Value as Yaml;

/// The template's text, parsed; YAML is a superset of JSON, so both read here.
pub(crate) fn parse(text: &str) -> Result<Value, serde_norway::Error> {
    let yaml: Yaml = serde_norway::from_str(text)?;
    Ok(to_json(yaml))
}

fn to_json(yaml: Yaml) -> Value {
    match yaml {
        Yaml::Null => Value::Null,
        Yaml::Bool(b) => Value::Bool(b),
        // JSON has no NaN or infinity: kept as written (`.nan`), so a parameter's check names it.
        Yaml::Number(n) if n.as_f64().is_some_and(|f| !f.is_finite()) => {
            Value::String(n.to_string())
        }
        Yaml::Number(n) => serde_json::to_value(&n).unwrap_or(Value::Null),
        Yaml::String(s) => Value::String(s),
        Yaml::Sequence(items) => Value::Array(items.into_iter().map(to_json).collect()),
        Yaml::Mapping(entries) => Value::Object(
            entries.into_iter().map(|(key, value)| (key_text(key), to_json(value))).collect(),
        ),
        Yaml::Tagged(tagged) => {
            let name = tagged.tag.to_string().trim_start_matches('!').to_owned();
            let value = to_json(tagged.value);
            let (key, value) = match name.as_str() {
                "Ref" | "Condition" => (name, value),
                "GetAtt" => match value {
                    Value::String(text) => {
                        let (resource, attribute) =
                            text.split_once('.').unwrap_or((text.as_str(), ""));
                        let parts = vec![resource.into(), attribute.into()];
                        ("Fn::GetAtt".to_owned(), Value::Array(parts))
                    }
                    other => ("Fn::GetAtt".to_owned(), other),
                },
                _ => (format!("Fn::{name}"), value),
            };
            Value::Object(Map::from_iter([(key, value)]))
        }
    }
}

/// Why the parsed file is no template, if it is none: CloudFormation requires a mapping whose
/// Resources section holds at least one resource, each with a Type.
pub(crate) fn not_a_template(template: &Value) -> Option<String> {
    const SECTIONS: &str = "not a mapping of sections such as Resources";
    let sections = match template {
        Value::Object(sections) => sections,
        Value::Null => return Some("it holds nothing but blank lines or comments".into()),
        Value::String(_) => return Some(format!("it is plain text, {SECTIONS}")),
        Value::Array(_) => return Some(format!("its top level is a list, {SECTIONS}")),
        Value::Bool(_) | Value::Number(_) => {
            return Some(format!("its top level is a single value, {SECTIONS}"));
        }
    };
    let resources = match sections.get("Resources") {
        None => return Some("it has no Resources section".into()),
        Some(Value::Object(resources)) => resources,
        Some(_) => return Some("its Resources section is not a mapping of resources".into()),
    };
    if resources.is_empty() {
        return Some(
            "its Resources section is empty, and CloudFormation requires at least one resource"
                .into(),
        );
    }
    let untyped = resources.iter().find(|(_, resource)| !resource["Type"].is_string());
    untyped.map(|(logical, _)| format!("its resource {logical} has no Type"))
}

/// A mapping's key as text: templates key `Mappings` by numbers too (`10:`).
fn key_text(key: Yaml) -> String {
    match key {
        Yaml::String(s) => s,
        Yaml::Number(n) => n.to_string(),
        Yaml::Bool(b) => b.to_string(),
        other => serde_norway::to_string(&other).unwrap_or_default().trim().to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_forms_become_the_long_ones() {
        let template = parse(
            "A: !Ref X\nB: !GetAtt Q.Arn\nC: !If [Cond, !Sub '${X}-y', !Ref AWS::NoValue]\n10: n",
        )
        .unwrap();
        assert_eq!(template["A"], serde_json::json!({"Ref": "X"}));
        assert_eq!(template["B"], serde_json::json!({"Fn::GetAtt": ["Q", "Arn"]}));
        assert_eq!(
            template["C"],
            serde_json::json!({"Fn::If": ["Cond", {"Fn::Sub": "${X}-y"}, {"Ref": "AWS::NoValue"}]})
        );
        assert_eq!(template["10"], "n");
    }
}
