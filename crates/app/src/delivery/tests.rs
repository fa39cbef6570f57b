//! The forwarder's requests: headers, retry-after, and what is never sent.

use super::*;
use backpressure_core::field::Selector;

#[test]
fn retry_after_in_both_forms() {
    assert_eq!(parse_retry_after("30"), Some(Duration::from_secs(30)));
    let later = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(120));
    let parsed = parse_retry_after(&later).unwrap();
    assert!(parsed > Duration::from_secs(100) && parsed <= Duration::from_secs(120), "{parsed:?}");
    assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), Some(Duration::ZERO));
    assert_eq!(parse_retry_after("soon"), None);
}

/// A request is never started when it could still be under way as the
/// message's claim lapses: nothing listens at port 9, so a request tried
/// would say it could not reach the downstream.
#[tokio::test]
async fn no_request_starts_that_could_outlast_its_claim() {
    let downstream = Downstream {
        url: "http://127.0.0.1:9/work".into(),
        timeout: Duration::from_secs(1),
        max_rps: None,
    };
    let delivery = RawDelivery::from(HttpDelivery::new(&downstream).unwrap());
    assert_eq!(delivery.side_effect_timeout(), Some(Duration::from_secs(1)));
    let record = SqsRecord::new("m-1").with_body("{}");
    let body = <RawBody as backpressure_batch::Body>::decode("{}").unwrap();
    let (delivery, record, body) = (&delivery, &record, &body);
    let send = |claim_lapse: Instant| {
        let message = Message {
            message_id: "m-1",
            body: "{}",
            payload: "{}",
            delivery: None,
            decoded: body,
            record,
            deadline: Instant::now() + Duration::from_secs(30),
            claim_lapse: Some(claim_lapse),
        };
        async move {
            match delivery.process(&message).await {
                Verdict::Retry { detail, .. } => detail,
                other => panic!("{other:?}"),
            }
        }
    };
    let refused = send(Instant::now() + Duration::from_millis(500)).await;
    assert!(refused.contains("not POSTed"), "{refused}");
    assert!(refused.contains("within the request's 1000 ms (DOWNSTREAM_TIMEOUT_MS)"), "{refused}");
    let tried = send(Instant::now() + Duration::from_secs(5)).await;
    assert!(tried.starts_with("the downstream could not be reached"), "{tried}");
}

#[test]
fn a_raw_label_or_content_type_a_header_cannot_carry_is_named_not_sent() {
    let downstream = Downstream {
        url: "http://127.0.0.1:9/work".into(),
        timeout: Duration::from_secs(1),
        max_rps: None,
    };
    let key = RawLabels { key: Selector::Pointer("/key".into()), tenant: None };
    let delivery = HttpDelivery::new(&downstream).unwrap().raw_labels(key);
    let request = |record: &SqsRecord| {
        let text = record.body.as_deref().unwrap_or_default();
        let body = <RawBody as backpressure_batch::Body>::decode(text).unwrap();
        let message = Message {
            message_id: "m-1",
            body: text,
            payload: text,
            delivery: None,
            decoded: &body,
            record,
            deadline: Instant::now() + Duration::from_secs(5),
            claim_lapse: None,
        };
        delivery.raw_request(&message).map(|r| r.headers().clone())
    };
    let bad_key = SqsRecord::new("m-1").with_body(r#"{"key":"a\nb"}"#);
    let error = request(&bad_key).unwrap_err();
    assert_eq!(error, "the idempotency key contains characters an HTTP header cannot carry");
    let bad_type: SqsRecord = serde_json::from_value(serde_json::json!({
        "messageId": "m-1", "body": "x",
        "messageAttributes": {"contentType": {"stringValue": "a\u{7f}", "dataType": "String"}}
    }))
    .unwrap();
    assert!(request(&bad_type).unwrap_err().starts_with("the content type"));
    let plain = request(&SqsRecord::new("m-1").with_body("<html>502</html>")).unwrap();
    assert_eq!(plain[CONTENT_TYPE], "text/plain; charset=utf-8");
    assert!(plain.get(IDEMPOTENCY_KEY).is_none(), "no key in a body that is not JSON");
    assert_eq!(plain[CORRELATION_ID], "m-1");
}
