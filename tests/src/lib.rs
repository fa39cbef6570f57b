//! Helpers for the end-to-end tests and the demo: a Lambda Runtime API host
//! and fixtures on the emulated AWS services.

pub mod downstream;
pub mod ecs_agent;
pub mod fault_proxy;
pub mod fixtures;
pub mod idempotency_table;
pub mod log_view;
pub mod process;
pub mod redis_server;
pub mod runtime_host;
pub mod tcp_fault;
pub mod template_defaults;
pub mod tls_front;
