//! `doctor --template --parameters`: a parameter set checked before it is
//! deployed. The template's parameter constraints and Rules are evaluated as
//! CloudFormation evaluates them, the resources it would create go through
//! the same rules as a live deployment, and what it would change of what
//! already runs is listed.

mod changes;
mod document;
mod parameters;
mod resources;
mod stack;
#[cfg(test)]
mod tests;

pub use parameters::ParameterSet;

use crate::finding::Finding;
use crate::report::{Offline, Report};
use crate::rules::TEMPLATE_RULE_REFUSES;

/// Why a template or a parameter set could not be checked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TemplateError {
    #[error("{file} is not a CloudFormation template doctor can read ({source})")]
    Template {
        file: String,
        #[source]
        source: serde_norway::Error,
    },
    #[error("{file} is not a samconfig file doctor can read ({})", .source.message())]
    Samconfig {
        file: String,
        #[source]
        source: toml::de::Error,
    },
    #[error("{file} is not a parameters JSON doctor can read ({source})")]
    ParametersJson {
        file: String,
        #[source]
        source: serde_json::Error,
    },
    #[error(
        "{file} holds neither {{\"Key\": \"Value\"}} nor [{{\"ParameterKey\": ..., \
         \"ParameterValue\": ...}}]"
    )]
    ParametersShape { file: String },
    #[error("the template cannot be evaluated offline: {0}")]
    Unsupported(String),
    #[error("{file} is not a CloudFormation template: {reason}")]
    NotATemplate { file: String, reason: String },
}

/// Checks what `template` (the text of `template_file`) would deploy with `set`.
pub fn check_template(
    template_file: &str,
    template: &str,
    parameters_file: &str,
    set: &ParameterSet,
) -> Result<Report, TemplateError> {
    let template = document::parse(template)
        .map_err(|source| TemplateError::Template { file: template_file.into(), source })?;
    if let Some(reason) = document::not_a_template(&template) {
        return Err(TemplateError::NotATemplate { file: template_file.into(), reason });
    }
    let declared = template["Parameters"].as_object().cloned().unwrap_or_default();
    let mut findings = Vec::new();
    let values = parameters::resolve(&declared, set, &mut findings);
    let offline = |creates, changes| Offline {
        template: template_file.to_owned(),
        parameters: parameters_file.to_owned(),
        creates,
        changes,
    };
    if values.len() < declared.len() {
        // A parameter without a value leaves the conditions undecided: nothing more to say.
        let report = Report::new(&Default::default(), findings);
        return Ok(report.offline(offline(Vec::new(), Vec::new())));
    }
    let stack = stack::Stack::new(&template, values, set.stack_name.as_deref().unwrap_or("STACK"));
    for (rule, values, description) in stack.refused()? {
        findings.push(
            Finding::new(
                &TEMPLATE_RULE_REFUSES,
                "template",
                format!(
                    "refuses {values}: CloudFormation stops the deploy before it creates anything"
                ),
                description,
            )
            .on(format!("rule {rule}")),
        );
    }
    if !findings.is_empty() {
        // CloudFormation refuses the set before it creates anything: nothing more to check.
        let report = Report::new(&Default::default(), findings);
        return Ok(report.offline(offline(Vec::new(), Vec::new())));
    }
    let planned = resources::plan(&stack)?;
    for mut finding in crate::rules::check(&planned.deployment) {
        finding.fix = planned.template_fix(&stack, &finding.fix);
        findings.push(finding);
    }
    let report = Report::new(&planned.deployment, findings);
    Ok(report.offline(offline(changes::created(&stack)?, changes::changes(&stack)?)))
}
