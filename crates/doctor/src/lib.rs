//! `sqs-backpressure doctor`'s checks: what is deployed around a queue (its
//! dead-letter queue, the event source mappings that read it, their functions,
//! the alarms on it) against AWS's documented rules. Reading ([`read`]) is
//! apart from the rules ([`rules::check`]), which take plain data.

mod deployment;
mod finding;
pub mod read;
mod report;
pub mod rules;
mod template;

pub use deployment::{
    Alarm, Deployment, Follows, Function, Mapping, Policy, PolicyMetric, Pollers, PublisherTarget,
    Queue, RECENT_HOURS, Redrive, RedriveAllow, Scaling, Service, Unreadable, Wiring,
};
pub use finding::{Finding, Severity};
pub use report::{Change, Offline};
pub use report::{EXIT_BROKEN, EXIT_CLEAN, EXIT_INCOMPLETE, EXIT_WARNINGS, Report};
pub use rules::{REFUSED, RULES, Rule};
pub use template::{CycleOf, ParameterSet, TemplateError, TemplatePlan, check_template};

/// Checks `deployment` against every rule.
pub fn check(deployment: &Deployment) -> Report {
    Report::new(deployment, rules::check(deployment))
}
