//! The end-to-end tests: the functions, the library's example and the worker
//! as binaries against the emulators, the template, the fault matrix. One test
//! binary: each would otherwise link its own copy of the AWS SDK.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

mod consumer;
mod deployed;
mod docs_held_to_code;
mod doctor;
mod envelopes;
mod envelopes_own_types;
mod fair_queues;
mod fault_matrix;
mod hostile_input;
mod idempotency;
mod idempotency_redis_faults;
mod idempotency_store_faults;
mod idempotency_stores;
mod idempotency_worker;
mod library;
mod library_worker;
mod managed_instances;
mod operator_cli;
mod operator_cli_boundaries;
mod operator_cli_canary;
mod operator_cli_disk;
mod operator_cli_dlq;
mod operator_cli_errors;
mod operator_cli_faults;
mod operator_cli_fields;
mod operator_cli_fifo;
mod operator_cli_fifo_held;
mod operator_cli_hostile;
mod operator_cli_receive_ahead;
mod operator_cli_resume;
mod operator_cli_rotate_faults;
mod planner_vs_worker;
mod publisher;
mod publisher_load;
mod quarantine_overflow;
mod quarantine_overflow_faults;
mod raw_forwarder;
mod raw_keys;
mod reliability;
mod stalled_peer_faults;
mod template;
mod template_dashboard;
mod template_doctor;
mod template_iam;
mod template_interface;
mod template_managed;
mod template_overflow;
mod template_samconfig;
mod template_topology;
mod template_worker;
mod template_yours;
mod trust_store;
mod variables;
mod worker;
mod worker_cli;
mod worker_drain;
mod worker_faults;
mod worker_hostile_input;
mod worker_overflow;
mod worker_setup;
mod worker_signing;
mod your_worker_first_run;
