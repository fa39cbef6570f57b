//! A body that is plainly another service's wrapper, with no envelope set:
//! its quarantine detail names the wrapper and the setting that opens it.

use super::*;

fn wrapped(body: String) -> SqsRecord {
    let mut record = record(0, Behaviour::Ok, None, STANDARD);
    record.body = Some(body);
    record
}

#[tokio::test]
async fn a_wrapper_no_envelope_was_set_for_is_named_with_the_setting() {
    let inside = json!({"schemaVersion": "1", "operation": "ok", "tenantId": "t",
                        "idempotencyKey": "k"})
    .to_string();
    let sns = json!({"Type": "Notification", "MessageId": "sns-1",
                     "TopicArn": "arn:aws:sns:us-east-1:123456789012:orders",
                     "Message": inside, "Timestamp": "2026-12-07T00:00:00.000Z"})
    .to_string();
    let bridge = json!({"version": "0", "id": "e-1", "detail-type": "Order", "source": "shop",
                        "account": "123456789012", "time": "2026-12-07T00:00:00Z",
                        "region": "us-east-1", "resources": [], "detail": {"a": 1}})
    .to_string();
    for (body, named) in [
        (sns, "the body is an SNS notification: set ENVELOPE=sns"),
        (bridge, "the body is an EventBridge event: set ENVELOPE=eventbridge"),
    ] {
        let engine = engine(&[], 4);
        let records = [wrapped(body)];
        let report = engine.run(&records, far_deadline(), &|_| {}).await.unwrap();
        assert!(
            matches!(report.outcomes[0].outcome, Outcome::Quarantined { .. }),
            "{:?}",
            report.outcomes[0].outcome
        );
        let stored = lock(&engine.quarantine.stored);
        assert!(stored[0].error_detail.contains(named), "{}", stored[0].error_detail);
    }
    // A body that is no wrapper keeps its detail as it was.
    let engine = engine(&[], 4);
    let records = [record(0, Behaviour::Garbage, None, STANDARD)];
    engine.run(&records, far_deadline(), &|_| {}).await.unwrap();
    let stored = lock(&engine.quarantine.stored);
    assert!(!stored[0].error_detail.contains("ENVELOPE="), "{}", stored[0].error_detail);
}
