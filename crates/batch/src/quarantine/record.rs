//! A poison message as its quarantine record.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use backpressure_core::quarantine::QuarantineRecord;
use backpressure_core::time::{checked_rfc3339, rfc3339};

use crate::body::Labels;
use crate::outcome::ErrorCode;
use crate::record::SqsRecord;

/// The quarantine record of `record`, given up on at `now` with `code` and
/// `detail` by `handler_version`, labelled with `labels` (its key is not
/// written: the record keeps the body it is in).
pub fn record_for(
    record: &SqsRecord,
    code: &ErrorCode,
    detail: &str,
    labels: &Labels,
    handler_version: &str,
    now: SystemTime,
) -> QuarantineRecord {
    QuarantineRecord {
        message_id: record.message_id.clone().unwrap_or_default(),
        source_queue_arn: record.event_source_arn.clone(),
        error_code: code.as_str().to_owned(),
        error_detail: detail.to_owned(),
        schema_version: labels.schema_version.clone(),
        operation: labels.operation.clone(),
        tenant_id: labels.tenant_id.clone(),
        receive_count: record.receive_count(),
        first_seen: record
            .sent_timestamp_ms()
            .and_then(|ms| checked_rfc3339(UNIX_EPOCH + Duration::from_millis(ms))),
        last_seen: rfc3339(now),
        handler_version: handler_version.to_owned(),
        remediation_status: "new".to_owned(),
        message_group_id: record.message_group_id().map(str::to_owned),
        body: record.body.clone(),
        body_object: None,
        attributes: record.attributes.clone(),
        message_attributes: record.message_attributes.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_carries_the_original_and_the_diagnosis() {
        let record: SqsRecord = serde_json::from_value(serde_json::json!({
            "messageId": "m-1",
            "body": "not json",
            "attributes": {"ApproximateReceiveCount": "2", "SentTimestamp": "1545082649183", "MessageGroupId": "g"},
            "messageAttributes": {"trace": {"stringValue": "x", "dataType": "String"}},
            "eventSourceARN": "arn:aws:sqs:us-east-1:1:q.fifo"
        }))
        .unwrap();
        let labels = Labels::default().tenant_id(Some("t-9".into()));
        let (code, detail) = (&ErrorCode::InvalidJson, "the body is not JSON");
        let quarantined =
            record_for(&record, code, detail, &labels, "your-consumer/0.1.0", UNIX_EPOCH);
        let json = serde_json::to_value(&quarantined).unwrap();
        assert_eq!(json["messageId"], "m-1");
        assert_eq!(json["sourceQueueArn"], "arn:aws:sqs:us-east-1:1:q.fifo");
        assert_eq!(json["errorCode"], "invalid_json");
        assert_eq!(json["errorDetail"], "the body is not JSON");
        assert_eq!(json["tenantId"], "t-9");
        assert_eq!(json["receiveCount"], 2);
        assert_eq!(json["firstSeen"], "2018-12-17T21:37:29.183Z");
        assert_eq!(json["lastSeen"], "1970-01-01T00:00:00.000Z");
        assert_eq!(json["remediationStatus"], "new");
        assert_eq!(json["messageGroupId"], "g");
        assert_eq!(json["body"], "not json");
        assert_eq!(json["messageAttributes"]["trace"]["stringValue"], "x");
        let attributes = quarantined.message_attributes();
        let attributes: Vec<(&str, &str)> =
            attributes.iter().map(|(n, v)| (*n, v.as_ref())).collect();
        assert_eq!(attributes, [("errorCode", "invalid_json"), ("tenantId", "t-9")]);
    }
}
