//! What doctor prints: a table grouped by queue, worst first, or JSON with a
//! stable schema; and the exit code that sums it up.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use crate::deployment::{Deployment, Unreadable};
use crate::finding::{Finding, Severity};

/// Exit code: every rule holds.
pub const EXIT_CLEAN: u8 = 0;
/// Exit code: warnings only.
pub const EXIT_WARNINGS: u8 = 3;
/// Exit code: a rule is broken (whatever else).
pub const EXIT_BROKEN: u8 = 4;
/// Exit code: a read failed, so not everything was checked (and no rule is broken).
pub const EXIT_INCOMPLETE: u8 = 5;

/// The JSON schema's version: a field is only ever added.
const SCHEMA: u32 = 1;

/// A check's whole result.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Report {
    pub schema: u32,
    pub read: Counts,
    pub findings: Vec<Finding>,
    pub unreadable: Vec<UnreadableOut>,
    /// Offline only: the template and parameter set checked, and what the stack would do.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offline: Option<Offline>,
    pub exit: u8,
}

/// What a template would deploy with a parameter set.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Offline {
    pub template: String,
    pub parameters: String,
    /// How many resources of each type the stack creates.
    pub creates: Vec<(String, usize)>,
    /// What it would change of what already runs.
    pub changes: Vec<Change>,
}

/// One change to something that already runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Change {
    /// The template's logical ID of the resource that makes the change.
    pub resource: String,
    pub change: String,
    /// The parameters that decide whether the stack makes it.
    pub decided_by: Vec<String>,
}

/// How much was read.
#[derive(Debug, Clone, Copy, Serialize)]
#[non_exhaustive]
pub struct Counts {
    pub queues: usize,
    pub mappings: usize,
    pub functions: usize,
    pub alarms: usize,
    /// ECS services read, given or found through a publisher.
    pub services: usize,
    /// Deployed backlog-publisher functions found.
    pub publishers: usize,
}

/// A failed read, as the JSON gives it.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct UnreadableOut {
    pub action: &'static str,
    pub resource: String,
    pub message: String,
}

impl From<&Unreadable> for UnreadableOut {
    fn from(read: &Unreadable) -> Self {
        Self { action: read.action, resource: read.resource.clone(), message: read.message.clone() }
    }
}

impl Report {
    pub fn new(deployment: &Deployment, findings: Vec<Finding>) -> Self {
        let worst = findings.iter().map(|finding| finding.severity).max();
        let exit = match worst {
            Some(Severity::Broken) => EXIT_BROKEN,
            _ if !deployment.unreadable.is_empty() => EXIT_INCOMPLETE,
            Some(Severity::Warning) => EXIT_WARNINGS,
            None => EXIT_CLEAN,
        };
        Self {
            schema: SCHEMA,
            read: Counts {
                queues: deployment.queues.iter().filter(|queue| !queue.missing).count(),
                mappings: deployment.mappings.len(),
                functions: deployment.functions.len(),
                alarms: deployment.alarms.len(),
                services: deployment.services.len(),
                publishers: deployment
                    .publisher_targets
                    .iter()
                    .map(|target| target.function.as_str())
                    .collect::<std::collections::BTreeSet<_>>()
                    .len(),
            },
            findings,
            unreadable: deployment.unreadable.iter().map(UnreadableOut::from).collect(),
            offline: None,
            exit,
        }
    }

    pub(crate) fn offline(mut self, offline: Offline) -> Self {
        self.offline = Some(offline);
        self
    }

    /// The table: a summary line, then each queue's findings (worst queue first), then the
    /// reads that failed.
    pub fn render(&self) -> String {
        let broken = self.count(Severity::Broken);
        let warnings = self.count(Severity::Warning);
        let mut out = match &self.offline {
            Some(offline) => offline.render(broken, warnings),
            None => {
                let Counts { queues, mappings, functions, alarms, services, publishers } =
                    self.read;
                format!(
                    "doctor: read {queues} queue(s), {mappings} mapping(s), {functions} \
                     function(s), {alarms} alarm(s), {services} ECS service(s), {publishers} \
                     backlog-publisher(s): {broken} broken, {warnings} warning(s), {} read(s) \
                     failed\n",
                    self.unreadable.len()
                )
            }
        };
        let mut by_queue: BTreeMap<&str, Vec<&Finding>> = BTreeMap::new();
        for finding in &self.findings {
            by_queue.entry(finding.queue.as_str()).or_default().push(finding);
        }
        let mut groups: Vec<(&str, Vec<&Finding>)> = by_queue.into_iter().collect();
        groups.sort_by_key(|(_, findings)| {
            std::cmp::Reverse(findings.iter().map(|f| f.severity).max())
        });
        let width = self.findings.iter().map(|finding| finding.rule.len()).max().unwrap_or(0);
        for (queue, findings) in groups {
            match queue {
                "template" => out.push_str("\nthe parameter set and the template's Rules\n"),
                "" => out.push_str("\nnot tied to a queue read here\n"),
                _ => {
                    let name = queue.rsplit(':').next().unwrap_or(queue);
                    let _ = write!(out, "\n{name}  ({queue})\n");
                }
            }
            for finding in findings {
                let on = finding.resource.as_deref().map(|r| format!("{r}: ")).unwrap_or_default();
                let _ = writeln!(
                    out,
                    "  {:<7}  {:<width$}  {on}{}\n  {:<7}  {:<width$}  fix: {}",
                    finding.severity.label(),
                    finding.rule,
                    finding.measured,
                    "",
                    "",
                    finding.fix
                );
            }
        }
        if !self.unreadable.is_empty() {
            // A denial is the identity's to mend; anything else (no such queue, a network
            // fault, an answer the SDK could not parse) is not a permission.
            let denied = |read: &UnreadableOut| {
                ["AccessDenied", "not authorized", "UnauthorizedOperation"]
                    .iter()
                    .any(|word| read.message.contains(word))
            };
            let policy = if self.unreadable.iter().any(denied) {
                " (docs/doctor.md has the whole policy)"
            } else {
                ""
            };
            let _ = writeln!(out, "\nnot checked, a read failed{policy}:");
            for read in &self.unreadable {
                let hint = if denied(read) {
                    format!(" (the identity needs {})", read.action)
                } else {
                    String::new()
                };
                let _ =
                    writeln!(out, "  {} on {}: {}{hint}", read.action, read.resource, read.message);
            }
        }
        let checked_nothing = self.offline.as_ref().is_some_and(|o| o.creates.is_empty());
        if self.findings.is_empty() && self.unreadable.is_empty() && !checked_nothing {
            out.push_str("every rule holds\n");
        }
        out
    }

    pub(crate) fn count(&self, severity: Severity) -> usize {
        self.findings.iter().filter(|finding| finding.severity == severity).count()
    }
}

impl Offline {
    /// The summary line, then what the stack would change of what already runs.
    fn render(&self, broken: usize, warnings: usize) -> String {
        if self.creates.is_empty() && broken == 0 {
            return format!(
                "doctor: {} with {} creates nothing: every resource's Condition is false with \
                 this set, so no rule had anything to check\n",
                self.template, self.parameters
            );
        }
        if self.creates.is_empty() {
            return format!(
                "doctor: {} with {}: CloudFormation refuses the set before it creates anything: \
                 {broken} broken\n",
                self.template, self.parameters
            );
        }
        let total: usize = self.creates.iter().map(|(_, count)| count).sum();
        let mut out = format!(
            "doctor: {} with {} creates {total} resource(s): {broken} broken, {warnings} \
             warning(s)\n",
            self.template, self.parameters
        );
        if self.changes.is_empty() {
            out.push_str("it changes nothing that already runs\n");
        } else {
            out.push_str("\nwhat it changes of what already runs:\n");
            for change in &self.changes {
                let _ = writeln!(out, "  {}: {}", change.resource, change.change);
                if !change.decided_by.is_empty() {
                    let _ = writeln!(
                        out,
                        "  {:width$}  decided by {}",
                        "",
                        change.decided_by.join(", "),
                        width = change.resource.len()
                    );
                }
            }
        }
        out
    }
}
