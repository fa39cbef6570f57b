//! What the sqs-backpressure crates truly share, free of the Lambda runtime
//! and (but for the `sqs` feature's batch calls) of the AWS SDK: configuration read from the environment ([`config`]:
//! the table of every variable the programs read, with its range and default;
//! `Vars` and errors that name the variable and its value), queue references
//! ([`queue`]), the AWS API error and its one-line form ([`error`]), where a label is in a
//! message and its exact text ([`field`]), and an
//! invocation's remaining time ([`deadline`]), what SQS accepts in a message
//! and a batch ([`sqs_limits`]) and the one way times are written ([`time`]), a Redis URL without its password ([`redis_url`]), the quarantine record the library writes and the operator's CLI reads ([`quarantine`]), and the envelopes other services wrap messages in ([`envelope`]). Nothing in this crate performs I/O but, with the `sqs` feature, SQS's batch calls read entry by entry (`sqs_calls`), which the library's adapters and the operator's CLI share.
#![warn(missing_docs, unreachable_pub)]

pub mod config;
pub mod deadline;
pub mod envelope;
pub mod error;
pub mod field;
pub mod quarantine;
pub mod queue;
pub mod redis_url;
#[cfg(feature = "sqs")]
pub mod sqs_calls;
pub mod sqs_limits;
pub mod sync;
pub mod time;
