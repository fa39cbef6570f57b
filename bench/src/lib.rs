//! The benchmark and soak harness behind `make bench` and `make soak`: start
//! and invoke the functions (and their Python anchors) through the Lambda
//! Runtime API host of the end-to-end crate, and the latency model that
//! stands in for AWS when fan-out is measured.

pub mod args;
mod bare;
pub use bare::bare_move;
pub mod fixtures;
pub mod latency_model;
pub mod proc_stats;
