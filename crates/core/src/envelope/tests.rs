use super::*;

const SNS: &str = r#"{"Type":"Notification","MessageId":"m-1","TopicArn":"arn:aws:sns:eu-west-1:1:orders",
  "Subject":"new","Message":"{\"orderId\":\"o-7\"}","Timestamp":"2026-12-07T10:00:00.000Z",
  "MessageAttributes":{"tenant":{"Type":"String","Value":"acme"}}}"#;

#[test]
fn an_sns_notification_opens_to_the_published_text_and_its_metadata() {
    let opened = Envelope::Sns.open(SNS).unwrap();
    assert_eq!(opened.payload, r#"{"orderId":"o-7"}"#);
    let Delivery::Sns { message_id, topic_arn, subject, attributes, .. } = &opened.delivery else {
        panic!("{:?}", opened.delivery)
    };
    assert_eq!(message_id.as_deref(), Some("m-1"));
    assert_eq!(topic_arn.as_deref(), Some("arn:aws:sns:eu-west-1:1:orders"));
    assert_eq!(subject.as_deref(), Some("new"));
    assert_eq!(attributes.get("tenant").map(String::as_str), Some("acme"));
    assert_eq!(opened.delivery.id(), Some("m-1"));
    let raw = Envelope::SnsRaw.open(r#"{"orderId":"o-7"}"#).unwrap();
    assert_eq!(raw.payload, r#"{"orderId":"o-7"}"#);
    assert_eq!(raw.delivery.id(), None, "raw delivery does not pass SNS's id on");
}

#[test]
fn a_body_that_is_not_its_envelope_says_what_is_missing() {
    let error = |envelope: Envelope, body: &str| envelope.open(body).unwrap_err().to_string();
    assert!(error(Envelope::Sns, r#"{"orderId":"o-7"}"#).contains("missing field `Type`"));
    assert!(
        error(Envelope::Sns, "<html>")
            .ends_with("with raw message delivery on, the envelope is sns-raw")
    );
    let confirmation = SNS.replace("\"Notification\"", "\"SubscriptionConfirmation\"");
    assert!(error(Envelope::Sns, &confirmation).contains("SubscriptionConfirmation"));
    assert!(error(Envelope::EventBridge, SNS).contains("missing field `id`"));
    assert!(error(Envelope::S3, SNS).contains("no Records array"));
    assert!(error(Envelope::S3, r#"{"Records":{}}"#).contains("no Records array"));
}

#[test]
fn an_eventbridge_detail_is_its_json_text_as_the_event_has_it() {
    let event = r#"{"version":"0","id":"e-1","detail-type":"Order Placed","source":"com.example",
      "account":"1","time":"2026-12-07T10:00:00Z","region":"eu-west-1","resources":[],
      "detail":{"orderId":"o-7","cents":1.10}}"#;
    let opened = Envelope::EventBridge.open(event).unwrap();
    assert_eq!(opened.payload, r#"{"orderId":"o-7","cents":1.10}"#);
    assert!(matches!(opened.payload, Cow::Borrowed(_)), "no copy of the detail");
    assert_eq!(opened.delivery.id(), Some("e-1"));
    assert!(
        matches!(&opened.delivery, Delivery::EventBridge { detail_type, .. } if detail_type == "Order Placed")
    );
}

#[test]
fn an_s3_notification_is_its_own_message_and_its_test_event_has_none() {
    let put = r#"{"Records":[{"eventName":"ObjectCreated:Put","s3":{"bucket":{"name":"b"},"object":{"key":"k"}}}]}"#;
    let opened = Envelope::S3.open(put).unwrap();
    assert_eq!(opened.payload, put);
    assert!(!opened.delivery.is_test_event());
    let test = r#"{"Service":"Amazon S3","Event":"s3:TestEvent","Time":"2014-10-13T15:57:02.089Z","Bucket":"b"}"#;
    assert!(Envelope::S3.open(test).unwrap().delivery.is_test_event());
}

#[test]
fn detection_names_the_envelope_a_body_is_in() {
    assert_eq!(Envelope::detect(SNS), Some(Envelope::Sns));
    let event = r#"{"id":"e","source":"s","detail-type":"t","detail":{}}"#;
    assert_eq!(Envelope::detect(event), Some(Envelope::EventBridge));
    assert_eq!(Envelope::detect(r#"{"Records":[]}"#), Some(Envelope::S3));
    assert_eq!(Envelope::detect(r#"{"orderId":"o-7"}"#), None);
    assert_eq!(Envelope::detect(""), None);
}

#[test]
fn detecting_opens_what_it_detects_and_nothing_else() {
    let fixtures = [
        (SNS, Some(Envelope::Sns)),
        (
            r#"{"id":"e","source":"s","detail-type":"t","detail":{"a":1}}"#,
            Some(Envelope::EventBridge),
        ),
        (r#"{"Service":"Amazon S3","Event":"s3:TestEvent"}"#, Some(Envelope::S3)),
        (r#"{"note":"a \"TopicArn\" in a string","Type":"Notification"}"#, None),
        (r#"{"Records":"not an array"}"#, None),
        ("not json", None),
    ];
    for (body, expected) in fixtures {
        let found = Envelope::detect_and_open(body);
        assert_eq!(found.as_ref().map(|(envelope, _)| *envelope), expected, "{body}");
        if let Some((envelope, opened)) = found {
            assert_eq!(opened, envelope.open(body).unwrap(), "{body}");
        }
    }
}

#[test]
fn names_parse_both_ways_and_a_bad_one_says_what_to_give() {
    for envelope in [Envelope::Sns, Envelope::SnsRaw, Envelope::EventBridge, Envelope::S3] {
        assert_eq!(Envelope::parse(envelope.name()), Ok(Some(envelope)));
    }
    assert_eq!(Envelope::parse("none"), Ok(None));
    assert_eq!(Envelope::parse(""), Ok(None));
    assert_eq!(Envelope::parse("SNS").unwrap_err(), ENVELOPE_FORMS);
}

#[test]
fn both_extended_clients_pointers_are_read_and_nothing_else_is() {
    let java = r#"["software.amazon.payloadoffloading.PayloadS3Pointer",{"s3BucketName":"big","s3Key":"k-1"}]"#;
    let python = r#"["software.amazon.payloadoffloading.PayloadS3Pointer", {"s3BucketName": "big", "s3Key": "k-1"}]"#;
    let legacy =
        r#"["com.amazon.sqs.javamessaging.MessageS3Pointer",{"s3BucketName":"big","s3Key":"k-1"}]"#;
    for text in [java, python, legacy] {
        let pointer = S3Pointer::parse(text).unwrap();
        assert_eq!(pointer.uri(), "s3://big/k-1");
    }
    assert_eq!(S3Pointer::parse(r#"["other.Class",{"s3BucketName":"b","s3Key":"k"}]"#), None);
    assert_eq!(S3Pointer::parse(r#"{"orderId":"o-7"}"#), None);
    let no_key = r#"["software.amazon.payloadoffloading.PayloadS3Pointer",{"s3BucketName":"b"}]"#;
    assert_eq!(S3Pointer::parse(no_key), None);
}
