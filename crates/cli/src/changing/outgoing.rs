//! The message a replay sends: the original body and attributes, the
//! original message group on every destination (on a standard queue it is a
//! fair queue's tenant, and carries no order), and for a FIFO destination a
//! deduplication id derived from the original message id.

use aws_sdk_sqs::types::SendMessageBatchRequestEntry;

use crate::reading::entry::Entry;

/// The send entry for `entry` (its batch id is `id`), or why it cannot be sent.
pub(crate) fn send_entry(
    entry: &Entry,
    id: usize,
    fifo: bool,
) -> Result<SendMessageBatchRequestEntry, String> {
    if let Some(problem) = &entry.body_problem {
        return Err(format!("the body kept in S3 cannot be replayed: {problem}"));
    }
    if let (Some(object), None) = (&entry.body_object, &entry.body) {
        return Err(format!("the body kept in {} was not read", object.uri()));
    }
    let body = entry.body.as_deref().filter(|b| !b.is_empty()).ok_or("no body to replay")?;
    let mut builder = SendMessageBatchRequestEntry::builder().id(id.to_string()).message_body(body);
    for (name, attribute) in &entry.message_attributes {
        builder = builder.message_attributes(
            name,
            attribute.to_sdk().map_err(|e| format!("attribute {name}: {e}"))?,
        );
    }
    if fifo && entry.group_id.is_none() {
        return Err("the destination is a FIFO queue and the message has no group id: give --to a standard queue".into());
    }
    if let Some(group) = &entry.group_id {
        builder = builder.message_group_id(group);
    }
    if fifo {
        builder = builder.message_deduplication_id(deduplication_id(&entry.original_message_id));
    }
    builder.build().map_err(|e| e.to_string())
}

/// A size that SQS counts against its limits: the body plus each attribute's
/// name, type and value.
pub(crate) fn sqs_size(entry: &Entry) -> usize {
    entry.body.as_deref().map_or(0, str::len)
        + entry
            .message_attributes
            .iter()
            .map(|(name, a)| {
                name.len()
                    + a.data_type.len()
                    + a.string_value.as_deref().map_or(0, str::len)
                    + a.binary_value.as_deref().map_or(0, |b| b.len() * 3 / 4)
            })
            .sum::<usize>()
}

/// The same for every replay of one original message, so SQS drops a repeat
/// sent within its five-minute deduplication window: at most 128 characters
/// of `!`–`~`, as SQS requires.
pub(crate) fn deduplication_id(original_message_id: &str) -> String {
    let cleaned: String = format!("replay-{original_message_id}")
        .chars()
        .map(|c| if ('!'..='~').contains(&c) { c } else { '_' })
        .take(128)
        .collect();
    cleaned
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::collections::BTreeMap;

    use super::*;
    use crate::reading::attribute::Attribute;
    use crate::reading::entry::Kind;

    fn entry(body: Option<&str>, group: Option<&str>) -> Entry {
        let mut attributes = BTreeMap::new();
        attributes.insert(
            "bin".to_owned(),
            Attribute {
                data_type: "Binary.gz".into(),
                string_value: None,
                binary_value: Some("AAH/".into()),
            },
        );
        attributes.insert(
            "n".to_owned(),
            Attribute {
                data_type: "Number".into(),
                string_value: Some("12".into()),
                binary_value: None,
            },
        );
        Entry {
            envelope: None,
            inside: None,
            queue_message_id: "q".into(),
            received_id: "q".into(),
            receipt_handle: "rh".into(),
            kind: Kind::Quarantine,
            original_message_id: "0b6a4b4e-4d4c-4f57-9d6d-1a2b3c4d5e6f".into(),
            error_code: None,
            error_detail: None,
            tenant_id: None,
            operation: None,
            idempotency_key: None,
            source_queue_arn: None,
            group_id: group.map(Into::into),
            at: None,
            body: body.map(Into::into),
            body_object: None,
            body_problem: None,
            message_attributes: attributes,
            queue_body: String::new(),
            queue_attributes: BTreeMap::new(),
            queue_message_attributes: BTreeMap::new(),
            origin: crate::reading::origin::Origin::default(),
        }
    }

    #[test]
    fn the_original_goes_out_with_its_attributes_group_and_a_stable_dedup_id() {
        let sent = send_entry(&entry(Some("{\"a\":1}"), Some("g-1")), 3, true).unwrap();
        assert_eq!(sent.id(), "3");
        assert_eq!(sent.message_body(), "{\"a\":1}");
        assert_eq!(sent.message_group_id(), Some("g-1"));
        assert_eq!(
            sent.message_deduplication_id(),
            Some("replay-0b6a4b4e-4d4c-4f57-9d6d-1a2b3c4d5e6f")
        );
        let attributes = sent.message_attributes().unwrap();
        assert_eq!(attributes["bin"].binary_value().unwrap().as_ref(), [0, 1, 255]);
        assert_eq!(attributes["bin"].data_type(), "Binary.gz");
        assert_eq!(attributes["n"].string_value(), Some("12"));

        let fair = send_entry(&entry(Some("x"), Some("g-1")), 0, false).unwrap();
        assert_eq!(fair.message_group_id(), Some("g-1"), "a fair queue's tenant is kept");
        assert_eq!(fair.message_deduplication_id(), None, "deduplication is FIFO's only");
        let standard = send_entry(&entry(Some("x"), None), 0, false).unwrap();
        assert_eq!(standard.message_group_id(), None);
    }

    #[test]
    fn what_cannot_be_sent_says_why() {
        assert!(send_entry(&entry(None, None), 0, false).unwrap_err().contains("no body"));
        assert!(send_entry(&entry(Some(""), None), 0, false).unwrap_err().contains("no body"));
        assert!(send_entry(&entry(Some("x"), None), 0, true).unwrap_err().contains("group"));
        let mut bad = entry(Some("x"), None);
        bad.message_attributes.get_mut("bin").unwrap().binary_value = Some("%%".into());
        assert!(send_entry(&bad, 0, false).unwrap_err().contains("attribute bin"));
    }

    #[test]
    fn dedup_ids_keep_to_what_sqs_accepts() {
        let long = "é".repeat(300);
        let id = deduplication_id(&long);
        assert_eq!(id.chars().count(), 128);
        assert!(id.chars().all(|c| ('!'..='~').contains(&c)));
        assert_eq!(deduplication_id("a b"), "replay-a_b");
    }
}
