//! A parameter set, as a samconfig file or a parameters JSON gives it, and
//! each value against its parameter's declared constraints.

use std::collections::BTreeMap;

use serde_json::Value;

use super::TemplateError;
use crate::finding::Finding;
use crate::rules::PARAMETER_INVALID;

/// The values a set gives, and the stack name when it names one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ParameterSet {
    pub stack_name: Option<String>,
    pub values: BTreeMap<String, String>,
}

impl ParameterSet {
    /// Reads a samconfig file (TOML: the `default` environment's `global` then `deploy`
    /// parameters) or a parameters JSON (`{"Key": "Value"}`, CloudFormation's
    /// `[{"ParameterKey", "ParameterValue"}]`, or `{"Parameters": {...}}`).
    pub fn parse(file: &str, text: &str) -> Result<Self, TemplateError> {
        if file.ends_with(".toml") {
            let document: toml::Table = toml::from_str(text)
                .map_err(|source| TemplateError::Samconfig { file: file.into(), source })?;
            return Ok(Self::from_samconfig(&document));
        }
        let json: Value = serde_json::from_str(text)
            .map_err(|source| TemplateError::ParametersJson { file: file.into(), source })?;
        Self::from_json(&json).ok_or_else(|| TemplateError::ParametersShape { file: file.into() })
    }

    fn from_samconfig(document: &toml::Table) -> Self {
        let mut set = Self::default();
        for command in ["global", "deploy"] {
            let Some(parameters) = document
                .get("default")
                .and_then(|env| env.get(command))
                .and_then(|command| command.get("parameters"))
            else {
                continue;
            };
            if let Some(name) = parameters.get("stack_name").and_then(toml::Value::as_str) {
                set.stack_name = Some(name.to_owned());
            }
            let tokens = match parameters.get("parameter_overrides") {
                Some(toml::Value::String(line)) => split_overrides(line),
                Some(toml::Value::Array(items)) => {
                    items.iter().filter_map(toml::Value::as_str).map(str::to_owned).collect()
                }
                _ => Vec::new(),
            };
            for token in tokens {
                if let Some((key, value)) = override_pair(&token) {
                    set.values.insert(key, value);
                }
            }
        }
        set
    }

    fn from_json(json: &Value) -> Option<Self> {
        let text = |value: &Value| match value {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            _ => None,
        };
        let values = match json {
            Value::Object(map) if map.get("Parameters").is_some_and(Value::is_object) => {
                return Self::from_json(&map["Parameters"]);
            }
            Value::Object(map) => {
                map.iter().map(|(k, v)| Some((k.clone(), text(v)?))).collect::<Option<_>>()?
            }
            Value::Array(items) => items
                .iter()
                .map(|item| {
                    Some((
                        item["ParameterKey"].as_str()?.to_owned(),
                        text(&item["ParameterValue"])?,
                    ))
                })
                .collect::<Option<_>>()?,
            _ => return None,
        };
        Some(Self { stack_name: None, values })
    }
}

/// `K=V K2="a b"` as SAM reads it: whitespace apart, quotes kept together.
fn split_overrides(line: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut current = String::new();
    let mut quote = None;
    for c in line.chars() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, c) if c.is_whitespace() => {
                if !current.is_empty() {
                    tokens.push(std::mem::take(&mut current));
                }
            }
            _ => current.push(c),
        }
    }
    if !current.is_empty() {
        tokens.push(current);
    }
    tokens
}

/// `K=V`, or SAM's `ParameterKey=K,ParameterValue=V`.
fn override_pair(token: &str) -> Option<(String, String)> {
    if let Some(rest) = token.strip_prefix("ParameterKey=") {
        let (key, value) = rest.split_once(",ParameterValue=")?;
        return Some((key.to_owned(), value.to_owned()));
    }
    let (key, value) = token.split_once('=')?;
    Some((key.to_owned(), value.to_owned()))
}

/// Each given value checked against its parameter's type and constraints, and every
/// parameter without a default given one; the values the stack would take come back.
pub(crate) fn resolve(
    declared: &serde_json::Map<String, Value>,
    set: &ParameterSet,
    findings: &mut Vec<Finding>,
) -> BTreeMap<String, String> {
    let broken = |name: &str, measured: String, fix: String| {
        Finding::new(&PARAMETER_INVALID, "template", measured, fix).on(format!("parameter {name}"))
    };
    for name in set.values.keys().filter(|name| !declared.contains_key(*name)) {
        findings.push(broken(
            name,
            format!("{name} is not a parameter of the template: CloudFormation refuses the set"),
            format!("remove {name}, or check its spelling against the template's Parameters"),
        ));
    }
    let mut values = BTreeMap::new();
    for (name, spec) in declared {
        let value = match (set.values.get(name), &spec["Default"]) {
            (Some(given), _) => given.clone(),
            (None, Value::String(s)) => s.clone(),
            (None, Value::Number(n)) => n.to_string(),
            (None, Value::Bool(b)) => b.to_string(),
            (None, _) => {
                findings.push(broken(
                    name,
                    format!("{name} has no default and the set gives none"),
                    format!("give {name}=VALUE"),
                ));
                continue;
            }
        };
        if let Some(allowed) = against_constraints(spec, &value) {
            let fix = spec["ConstraintDescription"]
                .as_str()
                .map_or_else(|| format!("give {name} {allowed}"), str::to_owned);
            let measured =
                format!("{name}={value:?}: CloudFormation refuses it (it takes {allowed})");
            findings.push(broken(name, measured, fix));
        }
        values.insert(name.clone(), value);
    }
    values
}

/// What the parameter declared as `spec` takes, when `value` is not that.
fn against_constraints(spec: &Value, value: &str) -> Option<String> {
    let kind = spec["Type"].as_str().unwrap_or("String");
    if let Some(allowed) = spec["AllowedValues"].as_array() {
        let allowed: Vec<String> = allowed
            .iter()
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
            .collect();
        if !allowed.iter().any(|a| a == value) {
            return Some(format!("one of {}", allowed.join(", ")));
        }
    }
    if kind == "Number" {
        let Some(number) = number(value) else {
            return Some("a number".into());
        };
        // Both sides finite, so each comparison decides: NaN made both false, and passed.
        let bound = |key: &str| match &spec[key] {
            Value::Number(n) => n.as_f64().filter(|n| n.is_finite()),
            Value::String(s) => self::number(s),
            _ => None,
        };
        if bound("MinValue").is_some_and(|min| number < min) {
            return Some(format!("a number of at least {}", text(&spec["MinValue"])));
        }
        if bound("MaxValue").is_some_and(|max| number > max) {
            return Some(format!("a number of at most {}", text(&spec["MaxValue"])));
        }
    }
    if kind == "String" {
        let length = value.chars().count() as u64;
        if spec["MinLength"].as_u64().is_some_and(|min| length < min) {
            return Some(format!("at least {} characters", spec["MinLength"]));
        }
        if spec["MaxLength"].as_u64().is_some_and(|max| length > max) {
            return Some(format!("at most {} characters", spec["MaxLength"]));
        }
    }
    let pattern = spec["AllowedPattern"].as_str()?;
    // CloudFormation matches the whole value against the pattern (Java's `matches`).
    let whole = fancy_regex::Regex::new(&format!("^(?:{pattern})$"));
    match whole.map(|regex| regex.is_match(value)) {
        Ok(Ok(true)) => None,
        Ok(Ok(false)) => Some(format!("a value matching {pattern}")),
        Ok(Err(_)) | Err(_) => {
            Some(format!("a value matching {pattern}, which doctor cannot evaluate"))
        }
    }
}

/// What CloudFormation's Number takes: an integer or a decimal, signed, with an exponent or
/// not. Rust's `f64` parse also takes `NaN`, `inf` and `infinity`, which it does not.
pub(super) fn number(text: &str) -> Option<f64> {
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    let (mantissa, exponent) = match unsigned.split_once(['e', 'E']) {
        Some((mantissa, exponent)) => (mantissa, Some(exponent)),
        None => (unsigned, None),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let decimal = digits(whole) && digits(fraction) && !(whole.is_empty() && fraction.is_empty());
    let exponent = exponent.is_none_or(|exponent| {
        let exponent = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
        !exponent.is_empty() && digits(exponent)
    });
    if !(decimal && exponent) {
        return None;
    }
    text.parse::<f64>().ok().filter(|number| number.is_finite())
}

/// A bound as the template writes it: `5`, not `"5"`.
fn text(value: &Value) -> String {
    value.as_str().map_or_else(|| value.to_string(), str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samconfig_overrides_are_read_in_both_forms() {
        let text = r#"
version = 0.1
[default.global.parameters]
stack_name = "orders"
parameter_overrides = ["ConsumerType=ecs", "DownstreamUrl=https://x.example/a=b"]
[default.deploy.parameters]
parameter_overrides = "BatchSize=5 TenantFrom=\"/a b\" ParameterKey=MaxTasks,ParameterValue=7"
"#;
        let set = ParameterSet::parse("samconfig.toml", text).unwrap();
        assert_eq!(set.stack_name.as_deref(), Some("orders"));
        let values: Vec<(&str, &str)> =
            set.values.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(
            values,
            [
                ("BatchSize", "5"),
                ("ConsumerType", "ecs"),
                ("DownstreamUrl", "https://x.example/a=b"),
                ("MaxTasks", "7"),
                ("TenantFrom", "/a b"),
            ]
        );
    }

    #[test]
    fn json_sets_are_read_in_each_shape() {
        let map = ParameterSet::parse("p.json", r#"{"A": "1", "B": 2}"#).unwrap();
        let list = ParameterSet::parse(
            "p.json",
            r#"[{"ParameterKey": "A", "ParameterValue": "1"}, {"ParameterKey": "B", "ParameterValue": "2"}]"#,
        )
        .unwrap();
        let pipeline = ParameterSet::parse("p.json", r#"{"Parameters": {"A": "1", "B": "2"}}"#);
        assert_eq!(map, list);
        assert_eq!(map, pipeline.unwrap());
        assert!(ParameterSet::parse("p.json", "[1]").is_err());
    }

    #[test]
    fn patterns_match_the_whole_value_and_take_lookaheads() {
        let spec = serde_json::json!({"AllowedPattern": "^(?!AWS/)[A-Za-z/]{1,9}$"});
        assert_eq!(against_constraints(&spec, "Mine/x"), None);
        assert!(against_constraints(&spec, "AWS/SQS").is_some());
        let digits = serde_json::json!({"AllowedPattern": "[0-9]+"});
        assert!(against_constraints(&digits, "12a").is_some());
        let number = serde_json::json!({"Type": "Number", "MinValue": 1, "MaxValue": 10});
        assert!(against_constraints(&number, "11").is_some());
        assert!(against_constraints(&number, "x").is_some());
        assert_eq!(against_constraints(&number, "10"), None);
    }

    /// CloudFormation's Number takes integers and decimals, never NaN or an infinity: those
    /// parse as an f64 and compare false with every bound.
    #[test]
    fn a_number_is_finite_and_written_in_decimal() {
        let free = serde_json::json!({"Type": "Number"});
        let bounded = serde_json::json!({"Type": "Number", "MinValue": 5, "MaxValue": 1000});
        for taken in ["3", "-1.5", "1e3", "1.5E-2", "+7", "0.5", "1000"] {
            assert_eq!(against_constraints(&free, taken), None, "{taken}");
        }
        for refused in
            ["NaN", "nan", "-NaN", "inf", "-inf", "Infinity", "+Infinity", "1e", "0x10", " 3", ""]
        {
            let said = Some("a number".to_owned());
            assert_eq!(against_constraints(&free, refused), said, "{refused}");
            assert_eq!(against_constraints(&bounded, refused), said, "{refused}");
        }
        assert!(against_constraints(&bounded, "1e4").is_some());
        assert_eq!(against_constraints(&bounded, "1e3"), None);
        let written_as_text = serde_json::json!({"Type": "Number", "MinValue": "5"});
        assert!(against_constraints(&written_as_text, "4").is_some());
    }
}
