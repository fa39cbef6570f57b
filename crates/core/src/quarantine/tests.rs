use super::*;

fn poisoned(body: &str, tenant: &str) -> QuarantineRecord {
    QuarantineRecord {
        message_id: "m-1".into(),
        source_queue_arn: None,
        error_code: "schema_violation".into(),
        error_detail: format!("tenantId {tenant:?} is odd"),
        schema_version: None,
        operation: None,
        tenant_id: Some(tenant.into()),
        receive_count: None,
        first_seen: None,
        last_seen: "1970-01-01T00:00:00.000Z".into(),
        handler_version: "v".into(),
        remediation_status: "new".into(),
        message_group_id: None,
        body: Some(body.into()),
        body_object: None,
        attributes: Map::new(),
        message_attributes: Map::new(),
    }
}

#[test]
fn a_record_reads_back_as_written_and_a_hand_edited_one_reads_with_its_gaps_empty() {
    let written = poisoned("{\"tenantId\":\"\u{0}\"}", "t\u{fffe}");
    let back: QuarantineRecord = serde_json::from_str(&written.to_sqs_json().unwrap()).unwrap();
    assert_eq!(back, written);
    let edited = r#"{"messageId":"m","errorCode":"e","remediationStatus":"new",
        "errorDetail":null,"lastSeen":null,"attributes":null,"tenantId":null}"#;
    let edited: QuarantineRecord = serde_json::from_str(edited).unwrap();
    assert_eq!((edited.error_detail.as_str(), edited.tenant_id), ("", None));
    let not_a_record = r#"{"messageId":"m","errorCode":"e"}"#;
    assert!(serde_json::from_str::<QuarantineRecord>(not_a_record).is_err());
}

#[test]
fn records_are_acceptable_to_sqs_whatever_the_message_held() {
    let nasty = "a\u{0}b\u{1}\u{B}\u{C}\u{1F}\u{7F}\u{FFFE}\u{FFFF}\u{D7FF}\u{E000}😀\u{10FFFF}";
    let record = poisoned(r#"{"tenantId":"\u0000\uffff"}"#, nasty);
    let json = record.to_sqs_json().unwrap();
    assert!(json.chars().all(sqs_accepts), "{json:?}");
    let back: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(back["tenantId"], nasty, "the decoded field survives the escape");
    assert_eq!(back["body"], r#"{"tenantId":"\u0000\uffff"}"#, "the body byte for byte");
    for (_, value) in record.message_attributes() {
        assert!(value.chars().all(sqs_accepts), "{value:?}");
    }
    assert_eq!(
        record.message_attributes()[1].1,
        "a\u{FFFD}b\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}\u{7F}\u{FFFD}\u{FFFD}\u{D7FF}\u{E000}😀\u{10FFFF}"
    );
}

#[test]
fn plain_records_encode_as_serde_json_does() {
    let record = poisoned("not json", "tenant-a");
    assert_eq!(record.to_sqs_json().unwrap(), serde_json::to_string(&record).unwrap());
}

#[test]
fn the_size_sqs_counts_includes_each_filter_attribute() {
    let record = poisoned("x", "t");
    let expected = 4 + ("errorCode".len() + 6 + 16) + ("tenantId".len() + 6 + 1);
    assert_eq!(record.sqs_size("abcd"), expected);
}
