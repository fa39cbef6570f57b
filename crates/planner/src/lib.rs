//! The capacity planner: a seeded, second-by-second simulation of an SQS
//! queue, the ECS workers draining it, backlog-publisher's maths (core's own
//! functions) and Application Auto Scaling's documented rules, to compare
//! scaling policies on a traffic trace and choose `TargetBacklogPerTask`
//! before production does.

pub mod args;
pub mod check;
pub mod commands;
pub mod defaults;
pub mod deployable;
pub mod existing;
pub mod lambda;
pub mod parallel;
pub mod plot;
pub mod random;
pub mod recommend;
pub mod report;
pub mod sim;
pub mod stats;
pub mod trace;

pub use sim::policy::{Consumer, Policy};
pub use sim::{Scenario, run};
