use crate::record::SqsRecord;
use aws_sdk_sqs::types::{Message, MessageAttributeValue};
use serde_json::{Map, Value, json};

/// A message from `ReceiveMessage` as the engine's record, shaped as Lambda
/// would have delivered it: system attributes by name, message attributes as
/// `{"stringValue"|"binaryValue", "dataType"}`, and the queue's ARN (which
/// tells a FIFO queue from a standard one). Ask `ReceiveMessage` for the
/// `All` system attributes so receive counts, timestamps and FIFO groups are there.
pub fn record_from_message(message: Message, queue_arn: &str, region: &str) -> SqsRecord {
    let attributes = message
        .attributes
        .unwrap_or_default()
        .into_iter()
        .map(|(name, value)| (name.as_str().to_owned(), Value::String(value)))
        .collect::<Map<String, Value>>();
    let message_attributes = message
        .message_attributes
        .unwrap_or_default()
        .into_iter()
        .map(|(name, value)| (name, attribute_json(value)))
        .collect::<Map<String, Value>>();
    SqsRecord {
        message_id: message.message_id,
        receipt_handle: message.receipt_handle,
        body: message.body,
        attributes,
        message_attributes,
        md5_of_body: message.md5_of_body,
        event_source: Some("aws:sqs".to_owned()),
        event_source_arn: Some(queue_arn.to_owned()),
        aws_region: Some(region.to_owned()),
    }
}

fn attribute_json(value: MessageAttributeValue) -> Value {
    let mut json = json!({"dataType": value.data_type});
    if let Some(text) = value.string_value {
        json["stringValue"] = Value::String(text);
    }
    if let Some(blob) = value.binary_value {
        json["binaryValue"] = Value::String(base64(blob.as_ref()));
    }
    json
}

/// Lambda delivers binary attributes base64-encoded; so does this.
fn base64(bytes: &[u8]) -> String {
    aws_smithy_types::base64::encode(bytes)
}

#[cfg(test)]
mod tests {
    use aws_sdk_sqs::types::MessageSystemAttributeName;

    use super::*;

    #[test]
    fn a_received_message_reads_like_a_lambda_record() {
        let message = Message::builder()
            .message_id("m-1")
            .receipt_handle("rh-1")
            .body(r#"{"a":1}"#)
            .attributes(MessageSystemAttributeName::ApproximateReceiveCount, "3")
            .attributes(MessageSystemAttributeName::MessageGroupId, "g")
            .attributes(
                MessageSystemAttributeName::AwsTraceHeader,
                "Root=1-5759e988-bd862e3fe1be46a994272793",
            )
            .message_attributes(
                "tenantId",
                MessageAttributeValue::builder()
                    .data_type("String")
                    .string_value("t-1")
                    .build()
                    .unwrap(),
            )
            .build();
        let record = record_from_message(
            message,
            "arn:aws:sqs:eu-west-1:123456789012:work.fifo",
            "eu-west-1",
        );
        assert_eq!(record.reportable_message_id(), Some("m-1"));
        assert_eq!(record.receive_count(), Some(3));
        assert_eq!(record.message_group_id(), Some("g"));
        assert_eq!(record.message_attribute("tenantId"), Some("t-1"));
        assert_eq!(record.trace_context().unwrap().trace_id(), "5759e988bd862e3fe1be46a994272793");
        assert_eq!(
            record.event_source_arn.as_deref(),
            Some("arn:aws:sqs:eu-west-1:123456789012:work.fifo")
        );
    }
}
