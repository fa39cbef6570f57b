//! sqs-worker on hostile input, end to end: bodies SQS accepts but the next
//! system may not (large, deeply nested, every JSON escape, every Unicode
//! plane, characters SQS refuses written as escapes, a byte-order mark) and
//! message attributes of every data type, received through ReceiveMessage.
//! Each message ends in exactly one place: delivered and deleted, or
//! quarantined and deleted; nothing is left on the queue.

use std::collections::BTreeSet;

use aws_sdk_sqs::primitives::Blob;
use aws_sdk_sqs::types::{MessageAttributeValue, SendMessageBatchRequestEntry};
use e2e_tests::process::field;
use serde_json::{Value, json};

use crate::worker_setup::{SETTLED, setup};

fn work(key: &str, extra: &[(&str, Value)]) -> String {
    let mut body = json!({"schemaVersion": "1", "operation": "ledger.post", "tenantId": "t",
                          "idempotencyKey": key});
    for (name, value) in extra {
        body[*name] = value.clone();
    }
    body.to_string()
}

/// One character from each Unicode plane that has assigned characters.
const PLANES: &str = "A\u{1F600}\u{20000}\u{30000}\u{E0041}\u{F0000}\u{100000}";

#[tokio::test]
async fn every_hostile_message_is_delivered_or_quarantined_and_none_is_left() {
    let setup = setup().await;
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let escapes = r#""\" \\ \/ \b \f \n \r \t \u00e9 \ud83d\ude00 \u0000""#;
    let delivered_keys = ["huge", "deep", "escapes", "planes", "attributes"];
    let bodies = [
        work("huge", &[("pad", json!("x".repeat(200_000)))]),
        work("deep", &[("payload", json!("placeholder"))]).replace("\"placeholder\"", &deep),
        format!(
            r#"{{"schemaVersion":"1","operation":"ledger.post","tenantId":"t","idempotencyKey":"escapes","note":{escapes}}}"#
        ),
        work("planes", &[("note", json!(PLANES))]),
        work("attributes", &[]),
        // Quarantined, one for each reason the body cannot be worked.
        "x".repeat(200_000),
        "[".repeat(100_000),
        format!("not json {PLANES}"),
        r#"{"schemaVersion":"1","operation":"ledger.post","tenantId":"t\u0000\u0001\uffff","idempotencyKey":"k\u000b1"}"#.to_owned(),
        format!("\u{FEFF}{}", work("bom", &[])),
        "null".to_owned(),
    ];
    let attribute = |data_type: &str, text: Option<&str>, binary: Option<&[u8]>| {
        MessageAttributeValue::builder()
            .data_type(data_type)
            .set_string_value(text.map(str::to_owned))
            .set_binary_value(binary.map(Blob::new))
            .build()
            .unwrap()
    };
    let entries: Vec<SendMessageBatchRequestEntry> = bodies
        .iter()
        .enumerate()
        .map(|(i, body)| {
            let mut entry =
                SendMessageBatchRequestEntry::builder().id(format!("h{i}")).message_body(body);
            if i == 4 {
                entry = entry
                    .message_attributes("s", attribute("String", Some("text"), None))
                    .message_attributes("n", attribute("Number", Some("-1.5e3"), None))
                    .message_attributes("b", attribute("Binary", None, Some(&[0, 1, 2, 255])))
                    .message_attributes("sc", attribute("String.custom", Some("x"), None))
                    .message_attributes("bg", attribute("Binary.gif", None, Some(b"GIF89a")));
            }
            entry.build().unwrap()
        })
        .collect();
    // One at a time: a batch call carries at most 256 KiB in all.
    for entry in entries {
        setup.send_entries(vec![entry]).await;
    }

    let mut worker = setup.start(&[]);
    setup
        .wait_until("every deliverable message", |s| {
            delivered_keys.iter().all(|key| s.delivered().contains_key(*key))
        })
        .await;
    setup.wait_counts((0, 0)).await;
    worker.signal("TERM").await.unwrap();
    assert_eq!(worker.exit(SETTLED).await.unwrap().code(), Some(0), "{:#?}", worker.lines());

    let delivered: BTreeSet<String> = setup.delivered().into_keys().collect();
    assert_eq!(delivered, delivered_keys.iter().map(|k| (*k).to_owned()).collect());
    assert!(setup.delivered().values().all(|n| *n == 1), "each delivered once");
    let quarantined = setup.aws.quarantined(&setup.quarantine_url, 6).await.unwrap();
    assert_eq!(quarantined.len(), 6, "the six that cannot be worked");
    let summary = worker.lines().into_iter().find(|l| l.contains("worker stopped")).unwrap();
    assert_eq!((field(&summary, "received"), field(&summary, "deleted")), (Some(11), Some(11)));
    // No message body in the logs (personal data): the large one would show.
    assert!(worker.lines().iter().all(|l| !l.contains(&"x".repeat(100))), "a body was logged");
}
