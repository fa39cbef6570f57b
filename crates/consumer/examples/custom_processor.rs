//! A batch-consumer with business logic of its own instead of HTTP delivery.
//! Everything else — contract checks, FIFO order, quarantine, deadline guard,
//! partial batch response, backoff, metrics — comes with the engine.
//!
//! Built (not run) by `cargo clippy --all-targets`, so it stays correct.

use std::collections::HashSet;
use std::sync::Mutex;

use backpressure_core::config::Vars;
use backpressure_core::consumer::ConsumerConfig;
use backpressure_core::consumer::engine::{Engine, EngineSettings, Message, Processor};
use backpressure_core::consumer::event::SqsEvent;
use backpressure_core::consumer::outcome::{ErrorCode, Verdict};
use batch_consumer::aws::{SqsQuarantine, SqsVisibility};
use batch_consumer::handler::{Consumer, handle};
use lambda_runtime::{LambdaEvent, service_fn};

/// Posts ledger entries; a duplicate idempotency key is already done.
#[derive(Default)]
struct Ledger {
    posted: Mutex<HashSet<String>>,
}

impl Processor for Ledger {
    async fn process(&self, message: &Message<'_>) -> Verdict {
        if message.request.operation != "ledger.post" {
            // Retrying cannot fix an operation this handler does not know.
            return Verdict::permanent(
                ErrorCode::Custom("unknown_operation".into()),
                format!("operation {:?} is not handled here", message.request.operation),
            );
        }
        let mut posted = self.posted.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        posted.insert(message.request.idempotency_key.clone());
        Verdict::Done
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_runtime::Error> {
    lambda_runtime::tracing::init_default_subscriber();
    let config = ConsumerConfig::from_vars(&Vars::from_process_env())?;
    let sqs = aws_sdk_sqs::Client::new(&aws_config::load_from_env().await);
    let engine = Engine::new(
        Ledger::default(),
        SqsQuarantine::new(
            sqs.clone(),
            config.quarantine_queue.clone(),
            config.quarantine_max_message_bytes,
        ),
        EngineSettings {
            concurrency: config.concurrency,
            deadline_margin: config.deadline_margin,
            handler_version: "ledger/1.0".into(),
        },
    );
    let consumer = Consumer::new(engine, SqsVisibility::new(sqs), config.backoff, config.namespace);
    let consumer = &consumer;
    lambda_runtime::run(service_fn(move |event: LambdaEvent<SqsEvent>| async move {
        handle(consumer, event).await
    }))
    .await
}
