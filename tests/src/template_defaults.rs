//! A function's environment as `template.yaml` deploys it with every parameter
//! at its default, so the demo and `make invoke` run the functions the way a
//! stack does (the template's scaling signal on, its target, its hold), not
//! with settings of their own that drift from it.

use serde_norway::Value;

/// Built in, so the binaries need not be run from the repository's root.
const TEMPLATE: &str = include_str!("../../template.yaml");

/// `function`'s (a resource's logical name, e.g. `PublisherFunction`)
/// variables whose value is a literal, or a `!Ref` to a parameter with a
/// non-empty default, with that value. Variables the template derives (`!If`,
/// `!Sub`, a `!Ref` to a resource) are left out: they name resources the caller
/// makes locally.
pub fn environment(function: &str) -> Result<Vec<(String, String)>, String> {
    let template: Value = serde_norway::from_str(TEMPLATE)
        .map_err(|error| format!("template.yaml is not YAML: {error}"))?;
    let variables = template["Resources"][function]["Properties"]["Environment"]["Variables"]
        .as_mapping()
        .ok_or_else(|| format!("template.yaml has no environment for {function}"))?;
    let mut environment = Vec::new();
    for (name, value) in variables {
        let Some(name) = name.as_str() else { continue };
        let tagged = match value {
            Value::String(literal) => {
                environment.push((name.to_owned(), literal.clone()));
                continue;
            }
            Value::Tagged(tagged) => tagged,
            _ => continue,
        };
        let Some(parameter) = tagged.value.as_str().filter(|_| tagged.tag == "Ref") else {
            continue;
        };
        let default = match &template["Parameters"][parameter]["Default"] {
            Value::String(text) => text.clone(),
            Value::Number(number) => number.to_string(),
            _ => continue,
        };
        if !default.is_empty() {
            environment.push((name.to_owned(), default));
        }
    }
    Ok(environment)
}
