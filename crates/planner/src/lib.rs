//! The capacity planner: a seeded, second-by-second simulation of an SQS
//! queue, the ECS workers draining it, backlog-publisher's maths (core's own
//! functions) and Application Auto Scaling's documented rules, to compare
//! scaling policies on a traffic trace and choose `TargetBacklogPerTask`
//! before production does.

pub mod args;
pub mod autoscaling;
pub mod cloudwatch;
pub mod commands;
pub mod csv_trace;
pub mod defaults;
pub mod deployable;
pub mod fidelity;
pub mod fidelity_report;
pub mod fleet;
pub mod held_out;
pub mod held_out_report;
pub mod lambda;
pub mod parallel;
pub mod plot;
pub mod policy;
pub mod publisher;
pub mod queue;
pub mod random;
pub mod recommend;
pub mod report;
pub mod report_json;
pub mod report_recommend;
pub mod sim;
pub mod stats;
pub mod trace;

pub use policy::{Consumer, Policy};
pub use sim::{Scenario, run};
