//! The library as a newcomer uses it: a closure for a processor, `?` in it,
//! and no quarantine configured.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use backpressure_batch::report::Outcome;
use backpressure_batch::{BatchProcessor, ErrorCode, Message, Verdict, record::SqsRecord};
use serde::Deserialize;
use tokio::time::Instant;

#[derive(Debug, Clone, Deserialize)]
struct Order {
    id: String,
    cents: i64,
}

impl backpressure_batch::JsonBody for Order {}

fn record(id: &str, body: &str) -> SqsRecord {
    SqsRecord::new(id).with_body(body).with_source_arn("arn:aws:sqs:us-east-1:123456789012:orders")
}

/// What a processor's client call may report.
fn charge(order: &Order) -> Result<(), Verdict> {
    match order.cents {
        0 => Err(Verdict::permanent(ErrorCode::Custom("zero_amount".into()), "nothing to charge")),
        c if c < 0 => Err(Verdict::retry("the payment service is unavailable")),
        _ => Ok(()),
    }
}

#[tokio::test]
async fn a_closure_with_question_marks_is_a_processor_and_without_quarantine_a_poison_message_is_left_to_the_redrive_policy()
 {
    let processor = |message: &Message<'_, Order>| {
        let order = message.decoded.clone();
        async move {
            charge(&order)?;
            assert!(!order.id.is_empty());
            Ok::<(), Verdict>(())
        }
    };
    let batch = BatchProcessor::builder(processor).build().unwrap();
    let records = [
        record("paid", r#"{"id":"o-1","cents":100}"#),
        record("zero", r#"{"id":"o-2","cents":0}"#),
        record("later", r#"{"id":"o-3","cents":-1}"#),
        record("garbled", "not json"),
    ];
    let deadline = Instant::now() + Duration::from_secs(10);
    let report = batch.process(&records, deadline).await.unwrap();
    let outcomes: Vec<(&str, &Outcome)> =
        report.outcomes.iter().map(|o| (o.message_id, &o.outcome)).collect();
    assert_eq!(outcomes[0], ("paid", &Outcome::Done));
    let Outcome::QuarantineFailed { code, detail } = outcomes[1].1 else { panic!("{outcomes:?}") };
    assert_eq!(code.as_str(), "zero_amount");
    // The processor's own detail first, then why it stays on the queue.
    assert_eq!(
        detail,
        "nothing to charge (not quarantined: no quarantine is configured: the message is left \
         to the queue's redrive policy)"
    );
    assert!(matches!(outcomes[2].1, Outcome::Retry { .. }), "{outcomes:?}");
    assert!(
        matches!(outcomes[3].1, Outcome::QuarantineFailed { code, .. } if *code == ErrorCode::InvalidJson),
        "{outcomes:?}"
    );
    assert_eq!(report.batch_item_failures, ["zero", "later", "garbled"]);
}
