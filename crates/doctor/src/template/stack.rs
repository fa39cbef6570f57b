//! A template with a parameter set's values: its conditions, its rules and
//! its intrinsic functions evaluated the way CloudFormation evaluates them,
//! with placeholder names for what only a deploy makes (a queue's URL, an ARN).

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::guard::{Guard, Open};
use super::{CycleOf, TemplateError};

/// What the ARNs and URLs of resources the stack would make hold for the
/// region and account: only a deploy knows them.
const REGION: &str = "REGION";
const ACCOUNT: &str = "ACCOUNT";

pub(crate) struct Stack<'t> {
    pub(crate) template: &'t Value,
    pub(super) values: BTreeMap<String, String>,
    pub(crate) name: String,
    guard: Guard,
    /// The parameters read since [`Stack::parameters_used`] began.
    pub(super) read: RefCell<BTreeSet<String>>,
}

impl<'t> Stack<'t> {
    pub(crate) fn new(template: &'t Value, values: BTreeMap<String, String>, name: &str) -> Self {
        Self {
            template,
            values,
            name: name.to_owned(),
            guard: Guard::default(),
            read: RefCell::default(),
        }
    }

    /// The template's rules whose assertions fail for these values: each rule's name, the
    /// values it read, and the failing assertion's description.
    pub(crate) fn refused(&self) -> Result<Vec<(String, String, String)>, TemplateError> {
        let mut refused = Vec::new();
        let Some(rules) = self.template["Rules"].as_object() else { return Ok(refused) };
        for (name, rule) in rules {
            if let Some(condition) = rule.get("RuleCondition")
                && !self.holds(condition)?
            {
                continue;
            }
            for assertion in rule["Assertions"].as_array().into_iter().flatten() {
                if !self.holds(&assertion["Assert"])? {
                    let description = assertion["AssertDescription"]
                        .as_str()
                        .unwrap_or("the template's rule gives no description");
                    let mut read = Vec::new();
                    self.parameters_read(
                        rule.get("RuleCondition").unwrap_or(&Value::Null),
                        &mut read,
                    );
                    self.parameters_read(&assertion["Assert"], &mut read);
                    let values: Vec<String> =
                        read.iter().map(|name| format!("{name}={}", self.values[name])).collect();
                    let description = description.split_whitespace().collect::<Vec<_>>().join(" ");
                    refused.push((name.clone(), values.join(", "), description));
                }
            }
        }
        Ok(refused)
    }

    /// Marks the resource whose properties are about to be evaluated, so that an evaluation
    /// nesting too deep says where it started.
    pub(crate) fn evaluating(&self, logical: &str) -> Open<'_> {
        self.guard.start(CycleOf::Resources, logical)
    }

    /// The resources the stack would create, with their logical IDs.
    pub(crate) fn resources(&self) -> Result<Vec<(&'t str, &'t Value)>, TemplateError> {
        let mut present = Vec::new();
        for (logical, resource) in self.template["Resources"].as_object().into_iter().flatten() {
            let wanted = match resource.get("Condition").and_then(Value::as_str) {
                Some(condition) => self.condition(condition)?,
                None => true,
            };
            if wanted {
                present.push((logical.as_str(), resource));
            }
        }
        Ok(present)
    }

    pub(crate) fn condition(&self, name: &str) -> Result<bool, TemplateError> {
        let condition = &self.template["Conditions"][name];
        if condition.is_null() {
            return Err(TemplateError::Unsupported(format!("the condition {name} is not defined")));
        }
        let _open = self.guard.open(CycleOf::Conditions, name)?;
        self.holds(condition)
    }

    fn holds(&self, expression: &Value) -> Result<bool, TemplateError> {
        let _level = self.guard.level()?;
        let (function, args) = single(expression).ok_or_else(|| {
            TemplateError::Unsupported(format!("{expression} is not a condition"))
        })?;
        let arg = |i: usize| args.get(i).unwrap_or(&Value::Null);
        Ok(match function {
            "Fn::Equals" => self.text(arg(0))? == self.text(arg(1))?,
            "Fn::Not" => !self.holds(arg(0))?,
            "Fn::And" => {
                let mut all = true;
                for a in args.as_array().into_iter().flatten() {
                    all &= self.holds(a)?;
                }
                all
            }
            "Fn::Or" => {
                let mut any = false;
                for a in args.as_array().into_iter().flatten() {
                    any |= self.holds(a)?;
                }
                any
            }
            "Condition" => self.condition(args.as_str().unwrap_or_default())?,
            "Fn::Contains" => {
                let needle = self.text(arg(1))?;
                self.list(arg(0))?.contains(&needle)
            }
            "Fn::EachMemberEquals" => {
                let expected = self.text(arg(1))?;
                self.list(arg(0))?.iter().all(|member| *member == expected)
            }
            "Fn::EachMemberIn" => {
                let allowed = self.list(arg(1))?;
                self.list(arg(0))?.iter().all(|member| allowed.contains(member))
            }
            other => {
                return Err(TemplateError::Unsupported(format!(
                    "{other} in a condition or rule (it needs a live account)"
                )));
            }
        })
    }

    fn list(&self, expression: &Value) -> Result<Vec<String>, TemplateError> {
        Ok(match self.resolve(expression)? {
            Some(Value::Array(items)) => items.iter().map(text_of).collect(),
            Some(other) => vec![text_of(&other)],
            None => Vec::new(),
        })
    }

    pub(crate) fn text(&self, expression: &Value) -> Result<String, TemplateError> {
        Ok(self.resolve(expression)?.map(|value| text_of(&value)).unwrap_or_default())
    }

    /// The value an expression takes; `None` for `AWS::NoValue`.
    pub(crate) fn resolve(&self, expression: &Value) -> Result<Option<Value>, TemplateError> {
        let _level = self.guard.level()?;
        if let Some((function, args)) = single(expression) {
            return self.intrinsic(function, args);
        }
        Ok(Some(match expression {
            Value::Array(items) => {
                let mut out = Vec::new();
                for item in items {
                    out.extend(self.resolve(item)?);
                }
                Value::Array(out)
            }
            Value::Object(fields) => {
                let mut out = Map::new();
                for (key, value) in fields {
                    if let Some(value) = self.resolve(value)? {
                        out.insert(key.clone(), value);
                    }
                }
                Value::Object(out)
            }
            other => other.clone(),
        }))
    }

    fn intrinsic(&self, function: &str, args: &Value) -> Result<Option<Value>, TemplateError> {
        let arg = |i: usize| args.get(i).unwrap_or(&Value::Null);
        Ok(Some(match function {
            "Ref" => return self.reference(args.as_str().unwrap_or_default()),
            "Fn::If" => {
                let branch = if self.holds(&serde_json::json!({"Condition": arg(0)}))? {
                    arg(1)
                } else {
                    arg(2)
                };
                return self.resolve(branch);
            }
            "Fn::GetAtt" => {
                let (logical, attribute) = match args {
                    Value::Array(_) => (self.text(arg(0))?, self.text(arg(1))?),
                    other => {
                        let text = text_of(other);
                        let (l, a) = text.split_once('.').unwrap_or((&text, ""));
                        (l.to_owned(), a.to_owned())
                    }
                };
                Value::String(self.attribute(&logical, &attribute)?)
            }
            "Fn::Sub" => {
                let (text, variables) = match args {
                    Value::Array(_) => (text_of(arg(0)), arg(1).as_object()),
                    other => (text_of(other), None),
                };
                Value::String(self.substitute(&text, variables)?)
            }
            "Fn::Join" => Value::String(self.list(arg(1))?.join(&self.text(arg(0))?)),
            "Fn::Select" => {
                let index: usize = self.text(arg(0))?.parse().unwrap_or(usize::MAX);
                Value::String(self.list(arg(1))?.get(index).cloned().unwrap_or_default())
            }
            "Fn::Split" => {
                let delimiter = self.text(arg(0))?;
                let text = self.text(arg(1))?;
                Value::Array(text.split(delimiter.as_str()).map(|s| s.into()).collect())
            }
            "Fn::FindInMap" => {
                let (map, first, second) =
                    (self.text(arg(0))?, self.text(arg(1))?, self.text(arg(2))?);
                let found = &self.template["Mappings"][&map][&first][&second];
                if found.is_null() {
                    return Err(TemplateError::Unsupported(format!(
                        "Fn::FindInMap finds no {map}.{first}.{second}"
                    )));
                }
                found.clone()
            }
            "Fn::GetAZs" => {
                Value::Array(vec![format!("{REGION}a").into(), format!("{REGION}b").into()])
            }
            "Fn::Base64" => return self.resolve(args),
            "Fn::ToJsonString" => {
                Value::String(self.resolve(args)?.unwrap_or_default().to_string())
            }
            other => Value::String(format!("<{other}>")),
        }))
    }

    fn reference(&self, name: &str) -> Result<Option<Value>, TemplateError> {
        if let Some(value) = self.values.get(name) {
            self.read.borrow_mut().insert(name.to_owned());
            let kind = self.template["Parameters"][name]["Type"].as_str().unwrap_or_default();
            let list = kind == "CommaDelimitedList" || kind.starts_with("List<");
            return Ok(Some(if list {
                Value::Array(value.split(',').map(|s| s.trim().into()).collect())
            } else {
                Value::String(value.clone())
            }));
        }
        Ok(Some(Value::String(match name {
            "AWS::NoValue" => return Ok(None),
            "AWS::StackName" => self.name.clone(),
            "AWS::Region" => REGION.into(),
            "AWS::AccountId" => ACCOUNT.into(),
            "AWS::Partition" => "aws".into(),
            "AWS::URLSuffix" => "amazonaws.com".into(),
            "AWS::StackId" => {
                format!("arn:aws:cloudformation:{REGION}:{ACCOUNT}:stack/{}", self.name)
            }
            logical if self.resource_type(logical) == Some("AWS::SQS::Queue") => {
                format!(
                    "https://sqs.{REGION}.amazonaws.com/{ACCOUNT}/{}",
                    self.physical_name(logical)?
                )
            }
            logical => self.physical_name(logical)?,
        })))
    }

    pub(crate) fn resource_type(&self, logical: &str) -> Option<&str> {
        self.template["Resources"][logical]["Type"].as_str()
    }

    /// The name the resource would get: its own name property, else the stack's and its
    /// logical ID (CloudFormation adds a random suffix after them). A name property doctor
    /// cannot evaluate falls back to that too, unless evaluating it would never end.
    pub(crate) fn physical_name(&self, logical: &str) -> Result<String, TemplateError> {
        let _open = self.guard.open(CycleOf::Resources, logical)?;
        let properties = &self.template["Resources"][logical]["Properties"];
        let text = |key: &str| match self.text(&properties[key]) {
            Err(error) if error.ends_the_evaluation() => Err(error),
            evaluated => Ok(evaluated.unwrap_or_default()),
        };
        for key in
            ["QueueName", "FunctionName", "ServiceName", "TableName", "BucketName", "AlarmName"]
        {
            let name = text(key)?;
            if !name.is_empty() {
                return Ok(name);
            }
        }
        let fifo = text("FifoQueue")? == "true";
        Ok(format!("{}-{logical}{}", self.name, if fifo { ".fifo" } else { "" }))
    }

    fn attribute(&self, logical: &str, attribute: &str) -> Result<String, TemplateError> {
        let Some(kind) = self.resource_type(logical) else {
            return Err(TemplateError::Unsupported(format!(
                "Fn::GetAtt names no resource {logical}"
            )));
        };
        let name = self.physical_name(logical)?;
        Ok(match (kind, attribute) {
            ("AWS::SQS::Queue", "Arn") => format!("arn:aws:sqs:{REGION}:{ACCOUNT}:{name}"),
            ("AWS::SQS::Queue", "QueueUrl") => {
                format!("https://sqs.{REGION}.amazonaws.com/{ACCOUNT}/{name}")
            }
            ("AWS::Lambda::Function" | "AWS::Serverless::Function", "Arn") => {
                format!("arn:aws:lambda:{REGION}:{ACCOUNT}:function:{name}")
            }
            (_, "Arn") => {
                let service = kind.split("::").nth(1).unwrap_or_default().to_lowercase();
                format!("arn:aws:{service}:{REGION}:{ACCOUNT}:{name}")
            }
            (_, "QueueName" | "Name") => name,
            (_, other) => format!("{name}.{other}"),
        })
    }

    fn substitute(
        &self,
        text: &str,
        variables: Option<&Map<String, Value>>,
    ) -> Result<String, TemplateError> {
        let mut out = String::new();
        let mut rest = text;
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let Some(end) = rest[start..].find('}') else { break };
            let inner = &rest[start + 2..start + end];
            rest = &rest[start + end + 1..];
            if let Some(literal) = inner.strip_prefix('!') {
                out.push_str(&format!("${{{literal}}}"));
            } else if let Some(value) = variables.and_then(|v| v.get(inner)) {
                out.push_str(&self.text(value)?);
            } else if let Some((logical, attribute)) = inner.split_once('.') {
                out.push_str(&self.attribute(logical, attribute)?);
            } else {
                out.push_str(&self.reference(inner)?.map(|v| text_of(&v)).unwrap_or_default());
            }
        }
        out.push_str(rest);
        Ok(out)
    }
}

/// `{"Fn::X": args}` or `{"Ref": name}` or `{"Condition": name}`: an intrinsic function.
pub(crate) fn single(expression: &Value) -> Option<(&str, &Value)> {
    let fields = expression.as_object().filter(|fields| fields.len() == 1)?;
    let (key, value) = fields.iter().next()?;
    (key == "Ref" || key == "Condition" || key.starts_with("Fn::")).then_some((key.as_str(), value))
}

/// A value as CloudFormation compares it: text, numbers and booleans as written.
pub(crate) fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        Value::Array(items) => items.iter().map(text_of).collect::<Vec<_>>().join(","),
        other => other.to_string(),
    }
}
