//! `doctor --template --parameters`: a parameter set checked before it is
//! deployed. The template's parameter constraints and Rules are evaluated as
//! CloudFormation evaluates them, the resources it would create go through
//! the same rules as a live deployment, and what it would change of what
//! already runs is listed.

mod changes;
mod cycles;
mod document;
mod guard;
mod parameters;
mod plan;
mod resources;
mod stack;
#[cfg(test)]
mod tests;
mod unused;

pub use parameters::ParameterSet;
pub use plan::TemplatePlan;

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
    /// CloudFormation refuses the template before it creates anything ("Circular dependency
    /// between resources"); `path` starts and ends with the same name.
    #[error("{}", cycle_sentence(*.of, .path))]
    Cycle { of: CycleOf, path: Vec<String> },
    /// Doctor's own bound, so that a long acyclic chain cannot exhaust the thread's stack.
    #[error(
        "the template nests its conditions, references and functions more than {limit} deep{}: \
         doctor does not evaluate it",
        .from.as_ref().map(|from| format!(", from {from}")).unwrap_or_default()
    )]
    TooDeep { limit: usize, from: Option<String> },
}

impl TemplateError {
    /// Whether evaluating on would meet the same element again: an error a resource's name
    /// may not swallow (a name that cannot be evaluated otherwise falls back to the default).
    pub(crate) fn ends_the_evaluation(&self) -> bool {
        matches!(self, Self::Cycle { .. } | Self::TooDeep { .. })
    }
}

/// Which of the template's elements refer to each other in a cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CycleOf {
    Conditions,
    Resources,
}

impl CycleOf {
    pub(crate) fn one(self) -> &'static str {
        match self {
            Self::Conditions => "condition",
            Self::Resources => "resource",
        }
    }

    fn many(self) -> &'static str {
        match self {
            Self::Conditions => "conditions",
            Self::Resources => "resources",
        }
    }
}

fn cycle_sentence(of: CycleOf, path: &[String]) -> String {
    let arrows = path.join(" → ");
    match path {
        [only, _] => format!("the template's {} {only} refers to itself: {arrows}", of.one()),
        _ => format!("the template's {} refer to each other in a cycle: {arrows}", of.many()),
    }
}

/// `text`, the template in `file`, read: a CloudFormation template whose
/// conditions and resources refer to each other in no cycle.
fn read(file: &str, text: &str) -> Result<serde_json::Value, TemplateError> {
    let template = document::parse(text)
        .map_err(|source| TemplateError::Template { file: file.into(), source })?;
    if let Some(reason) = document::not_a_template(&template) {
        return Err(TemplateError::NotATemplate { file: file.into(), reason });
    }
    cycles::refuse(&template)?;
    Ok(template)
}

/// Checks what `template` (the text of `template_file`) would deploy with `set`.
pub fn check_template(
    template_file: &str,
    template: &str,
    parameters_file: &str,
    set: &ParameterSet,
) -> Result<Report, TemplateError> {
    let template = read(template_file, template)?;
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
    let given = set.values.keys().filter(|name| declared.contains_key(*name)).collect();
    findings.extend(unused::unused_parameters(&stack, &given));
    let created = changes::created(&stack)?;
    let mut report = Report::new(&planned.deployment, findings);
    // A set that creates nothing left every rule nothing to look at: no pass.
    if created.is_empty() && report.findings.is_empty() {
        report.exit = crate::report::EXIT_INCOMPLETE;
    }
    Ok(report.offline(offline(created, changes::changes(&stack)?)))
}
