//! A template with a parameter set's values, as an answer to "what would this
//! set deploy": the same evaluation `doctor --template` makes, for the
//! template's own tests and for anyone asking before a deploy.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::stack::Stack;
use super::{ParameterSet, TemplateError, parameters};

/// `template.yaml` (or any template) with a parameter set's values, each
/// parameter's default for the rest: its Conditions and Rules evaluated as
/// CloudFormation evaluates them.
#[derive(Debug, Clone)]
pub struct TemplatePlan {
    template: Value,
    values: BTreeMap<String, String>,
}

impl TemplatePlan {
    /// Reads `template` (the text of `file`) and takes `values`. A name that
    /// is not one of its parameters, or a parameter left without a value, is
    /// an error naming it: CloudFormation refuses such a set before its rules.
    pub fn new(
        file: &str,
        template: &str,
        values: &BTreeMap<String, String>,
    ) -> Result<Self, TemplateError> {
        let template = super::read(file, template)?;
        let declared = template["Parameters"].as_object().cloned().unwrap_or_default();
        let set = ParameterSet { stack_name: None, values: values.clone() };
        let mut unused_findings = Vec::new();
        let resolved = parameters::resolve(&declared, &set, &mut unused_findings);
        let unknown = values.keys().filter(|name| !declared.contains_key(*name));
        let unset = declared.keys().filter(|name| !resolved.contains_key(*name));
        let problems: Vec<String> = unknown
            .map(|name| format!("{name} is not a parameter"))
            .chain(unset.map(|name| format!("{name} has no value")))
            .collect();
        if !problems.is_empty() {
            return Err(TemplateError::Unsupported(problems.join("; ")));
        }
        Ok(Self { template, values: resolved })
    }

    fn stack(&self) -> Stack<'_> {
        Stack::new(&self.template, self.values.clone(), "STACK")
    }

    /// The value a parameter takes: given, or its default.
    pub fn value(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }

    /// Whether the template's condition `name` holds.
    pub fn condition(&self, name: &str) -> Result<bool, TemplateError> {
        self.stack().condition(name)
    }

    /// The names of the template's Rules that refuse the set, in the
    /// template's order, each once.
    pub fn refused_rules(&self) -> Result<Vec<String>, TemplateError> {
        let mut names: Vec<String> = Vec::new();
        for (rule, _, _) in self.stack().refused()? {
            if !names.contains(&rule) {
                names.push(rule);
            }
        }
        Ok(names)
    }

    /// The logical IDs of the resources the set deploys.
    pub fn resources(&self) -> Result<BTreeSet<String>, TemplateError> {
        let stack = self.stack();
        Ok(stack.resources()?.into_iter().map(|(logical, _)| logical.to_owned()).collect())
    }
}
