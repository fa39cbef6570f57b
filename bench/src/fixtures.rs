//! Generated SQS events for the benchmarks: the same
//! batch for the criterion bench, the throughput runs and every anchor, so
//! their numbers compare like with like.

use serde_json::{Value, json};

/// Lambda's synchronous invocation payload limit, 6 MB.
pub const PAYLOAD_LIMIT: usize = 6_291_456;

/// A standard-queue event of `messages` valid work requests, each body about
/// 600 bytes; 5,000 of them come to about 6 MB, Lambda's payload limit.
/// `batch` with each body wrapped as `envelope` delivers it: an SNS
/// notification (its signature and URLs as long as SNS's), or an EventBridge
/// event with the body as its `detail`.
pub fn wrapped(mut batch: Value, envelope: &str) -> Value {
    let records = batch["Records"].as_array_mut().into_iter().flatten();
    for (i, record) in records.enumerate() {
        let body = record["body"].as_str().unwrap_or_default().to_owned();
        let wrapped = match envelope {
            "sns" => json!({
                "Type": "Notification",
                "MessageId": format!("d88d4479-6ec0-54fe-b63f-{i:012}"),
                "TopicArn": "arn:aws:sns:us-east-1:123456789012:load-topic",
                "Message": body,
                "Timestamp": "2026-12-07T10:00:00.000Z",
                "SignatureVersion": "1",
                "Signature": "x".repeat(344),
                "SigningCertURL": "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-0000000000000000000000000000000000.pem",
                "UnsubscribeURL": "https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=arn:aws:sns:us-east-1:123456789012:load-topic:00000000-0000-0000-0000-000000000000"
            }),
            _ => json!({
                "version": "0",
                "id": format!("6a7e8feb-b491-4cf7-a9f1-{i:012}"),
                "detail-type": "Invoice Created",
                "source": "com.example.billing",
                "account": "123456789012",
                "time": "2026-12-07T10:00:00Z",
                "region": "us-east-1",
                "resources": [],
                "detail": serde_json::from_str::<Value>(&body).unwrap_or_default(),
            }),
        };
        record["body"] = Value::String(wrapped.to_string());
    }
    batch
}

pub fn work_batch(messages: usize) -> Value {
    let note = "x".repeat(500);
    let records: Vec<Value> = (0..messages)
        .map(|i| {
            let body = json!({
                "schemaVersion": "1",
                "operation": "invoice.create",
                "tenantId": format!("tenant-{}", i % 50),
                "idempotencyKey": format!("load-{i}"),
                "note": note,
            })
            .to_string();
            json!({
                "messageId": format!("00000000-0000-4000-8000-{i:012}"),
                "receiptHandle": format!("AQEB{i:0>120}"),
                "body": body,
                "attributes": {
                    "ApproximateReceiveCount": "1",
                    "SentTimestamp": "1764500000000",
                    "SenderId": "AROAIWPX5BD2BHG722MW4:sender",
                    "ApproximateFirstReceiveTimestamp": "1764500000042"
                },
                "messageAttributes": {},
                "md5OfBody": "00000000000000000000000000000000",
                "eventSource": "aws:sqs",
                "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:load-work",
                "awsRegion": "us-east-1"
            })
        })
        .collect();
    json!({ "Records": records })
}

#[cfg(test)]
mod tests {
    use super::*;
    use backpressure_app::WorkRequest;
    use backpressure_batch::record::SqsEvent;

    #[test]
    fn five_thousand_messages_fit_the_payload_limit_and_keep_the_contract() {
        let text = work_batch(5_000).to_string();
        assert!(text.len() <= PAYLOAD_LIMIT, "{} bytes", text.len());
        assert!(text.len() > PAYLOAD_LIMIT * 9 / 10, "{} bytes", text.len());
        let event: SqsEvent = serde_json::from_str(&text).unwrap();
        assert_eq!(event.records.len(), 5_000);
        for record in &event.records {
            WorkRequest::parse(record.body.as_deref().unwrap()).unwrap();
        }
    }
}
