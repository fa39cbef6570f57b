//! A documented rule, and what it found: one line a person reads, and the fix to paste.

use serde::Serialize;

/// How bad a finding is. Ordered: the worst last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Against AWS's advice: works today, fails under load or faults.
    Warning,
    /// Loses, repeats or stalls messages as deployed.
    Broken,
}

impl Severity {
    pub fn label(self) -> &'static str {
        match self {
            Self::Warning => "warning",
            Self::Broken => "BROKEN",
        }
    }
}

/// One documented rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Rule {
    pub id: &'static str,
    pub severity: Severity,
    /// The threshold, as a person says it.
    pub threshold: &'static str,
    /// The AWS page the threshold comes from.
    pub source: &'static str,
    /// Which peer checks it today: cdk-nag, AWS Config, or none.
    pub peers: &'static str,
}

/// One rule broken by one resource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Finding {
    /// The rule's id, as docs/doctor.md lists it.
    pub rule: &'static str,
    pub severity: Severity,
    /// The queue the finding is about, or that the mapping or function reads: findings are
    /// grouped by it.
    pub queue: String,
    /// The resource at fault when it is not the queue itself (a mapping, a function, an alarm).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// What was measured, with the values.
    pub measured: String,
    /// What to run or set, to paste.
    pub fix: String,
}

impl Finding {
    pub(crate) fn new(rule: &Rule, queue: &str, measured: String, fix: String) -> Self {
        Self {
            rule: rule.id,
            severity: rule.severity,
            queue: queue.to_owned(),
            resource: None,
            measured,
            fix,
        }
    }

    pub(crate) fn on(mut self, resource: impl Into<String>) -> Self {
        self.resource = Some(resource.into());
        self
    }
}
