use super::*;

#[test]
fn decodes_the_documented_sample_and_keeps_attributes() {
    let event: SqsEvent = serde_json::from_str(
        r#"{"Records":[{"messageId":"059f36b4-87a3-44ab-83d2-661975830a7d",
          "receiptHandle":"AQEBwJnKyrHigUMZj6rYigCgxlaS3SLy0a",
          "body":"{\"a\":1}",
          "attributes":{"ApproximateReceiveCount":"3","SentTimestamp":"1545082649183",
                        "SenderId":"AIDAIENQZJOLO23YVJ4VO","ApproximateFirstReceiveTimestamp":"1545082649185"},
          "messageAttributes":{"tenantId":{"stringValue":"t-1","dataType":"String"}},
          "md5OfBody":"e4e68fb7bd0e697a0ae8f1bb342846b3","eventSource":"aws:sqs",
          "eventSourceARN":"arn:aws:sqs:us-east-2:123456789012:my-queue","awsRegion":"us-east-2"}]}"#,
    )
    .unwrap();
    let record = &event.records[0];
    assert_eq!(record.usable_message_id(), Some("059f36b4-87a3-44ab-83d2-661975830a7d"));
    assert_eq!(record.receive_count(), Some(3));
    assert_eq!(record.sent_timestamp_ms(), Some(1_545_082_649_183));
    assert_eq!(record.message_attribute("tenantId"), Some("t-1"));
    assert_eq!(record.body.as_deref(), Some(r#"{"a":1}"#));
}

#[test]
fn a_record_missing_fields_still_decodes() {
    let event: SqsEvent = serde_json::from_str(r#"{"Records":[{}, {"messageId":" "}]}"#).unwrap();
    assert_eq!(event.records.len(), 2);
    assert_eq!(event.records[0].usable_message_id(), None);
    assert_eq!(event.records[1].usable_message_id(), None);
}

#[test]
fn a_wrongly_typed_field_reads_as_absent_and_spares_the_other_records() {
    let event: SqsEvent = serde_json::from_str(
        r#"{"Records":[
            {"messageId":"a","body":42,"attributes":null,"messageAttributes":"x","eventSourceARN":7},
            {"messageId":"b","body":"{}","attributes":{"ApproximateReceiveCount":5},"messageAttributes":[]},
            {"messageId":"c","body":"ok","attributes":{"ApproximateReceiveCount":"2"}}
        ]}"#,
    )
    .unwrap();
    let [a, b, c] = &event.records[..] else { panic!("{event:?}") };
    assert_eq!((a.usable_message_id(), a.body.as_deref()), (Some("a"), None));
    assert!(a.attributes.is_empty() && a.message_attributes.is_empty());
    assert_eq!(a.event_source_arn, None);
    assert_eq!(b.receive_count(), None, "a number where SQS sends a string");
    assert_eq!(c.receive_count(), Some(2));
}

#[test]
fn a_repeated_member_keeps_its_last_value_instead_of_failing_the_event() {
    let text = r#"{"Records":[{"messageId":"a","body":42,"body":"x","attributes":{},"attributes":null},
                               {"messageId":"b","body":"y"}]}"#;
    let event: SqsEvent = serde_json::from_str(text).unwrap();
    assert_eq!(event.records[0].body.as_deref(), Some("x"));
    assert!(event.records[0].attributes.is_empty());
    assert_eq!(event.records[1].body.as_deref(), Some("y"));
    assert!(matches!(serde_json::from_str(text).unwrap(), IncomingEvent::Sqs(_)));
}

#[test]
fn what_is_not_an_sqs_event_says_so() {
    for text in [r#"{"detail-type":"Scheduled Event"}"#, "[]", "42", r#"{"Records": 5}"#] {
        let error = serde_json::from_str::<SqsEvent>(text).unwrap_err().to_string();
        assert!(
            error.contains("not an SQS event") || error.contains("not SQS records"),
            "{text}: {error}"
        );
    }
}

#[test]
fn an_incoming_event_is_sqs_or_says_what_it_is() {
    let sqs: IncomingEvent =
        serde_json::from_str(r#"{"Records":[{"messageId":"a"}],"x":1}"#).unwrap();
    assert!(matches!(sqs, IncomingEvent::Sqs(e) if e.records.len() == 1));
    for (text, says) in [
        (r#"{"detail-type":"Scheduled Event"}"#, "without Records"),
        ("[1,2]", "an array"),
        ("42", "a number"),
        ("null", "null"),
        (r#"{"Records": 5}"#, "a number, not an array"),
        (r#"{"Records": {"a":[1]}}"#, "an object, not an array"),
        (r#"{"Records": [{"messageId":"a"}, 7]}"#, "record 1 is a number"),
        (r#"{"Records": [null]}"#, "record 0 is null"),
        (r#"{"Records": 1, "Records": []}"#, "a number, not an array"),
    ] {
        match serde_json::from_str::<IncomingEvent>(text).unwrap() {
            IncomingEvent::NotSqs(what) => assert!(what.contains(says), "{text}: {what}"),
            other => panic!("{text}: {other:?}"),
        }
    }
    assert!(serde_json::from_str::<IncomingEvent>("{not json").is_err());
}

#[test]
fn source_queue_from_the_arn() {
    let queue = SourceQueue::from_arn("arn:aws:sqs:eu-west-1:123456789012:orders.fifo").unwrap();
    assert!(queue.is_fifo());
    assert_eq!(queue.url(), "https://sqs.eu-west-1.amazonaws.com/123456789012/orders.fifo");
    let china = SourceQueue::from_arn("arn:aws-cn:sqs:cn-north-1:123456789012:q").unwrap();
    assert_eq!(china.url(), "https://sqs.cn-north-1.amazonaws.com.cn/123456789012/q");
    assert!(!china.is_fifo());
    assert_eq!(SourceQueue::from_arn("arn:aws:sns:eu-west-1:1:topic"), None);
    assert_eq!(SourceQueue::from_arn("not an arn"), None);
}
