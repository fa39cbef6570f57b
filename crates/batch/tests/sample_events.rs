//! The sample events must stay shaped exactly as Lambda delivers SQS events,
//! which `aws_lambda_events` models, and our response as Lambda reads it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use aws_lambda_events::sqs::{SqsBatchResponse, SqsEvent as AwsSqsEvent};
use backpressure_core::consumer::event::SqsEvent;
use backpressure_core::consumer::response::BatchResponse;

#[test]
fn sample_events_are_sqs_events() {
    for (text, fifo) in [
        (include_str!("../../../events/sqs-standard.json"), false),
        (include_str!("../../../events/sqs-fifo.json"), true),
    ] {
        let aws: AwsSqsEvent = serde_json::from_str(text).unwrap();
        let ours: SqsEvent = serde_json::from_str(text).unwrap();
        assert_eq!(aws.records.len(), ours.records.len());
        for (theirs, mine) in aws.records.iter().zip(&ours.records) {
            assert_eq!(theirs.message_id, mine.message_id);
            assert_eq!(theirs.body, mine.body);
            assert_eq!(theirs.event_source.as_deref(), Some("aws:sqs"));
            let md5 = format!("{:032x}", md5_of(theirs.body.as_deref().unwrap()));
            assert_eq!(
                theirs.md5_of_body.as_deref(),
                Some(md5.as_str()),
                "md5OfBody matches the body"
            );
            assert_eq!(mine.message_group_id().is_some(), fifo);
        }
    }
}

#[test]
fn our_response_is_what_lambda_reads() {
    let response = BatchResponse::new(&["a".to_owned(), "b".to_owned()]);
    let text = serde_json::to_string(&response).unwrap();
    let parsed: SqsBatchResponse = serde_json::from_str(&text).unwrap();
    let ids: Vec<_> =
        parsed.batch_item_failures.iter().map(|f| f.item_identifier.as_str()).collect();
    assert_eq!(ids, ["a", "b"]);
    assert_eq!(text, r#"{"batchItemFailures":[{"itemIdentifier":"a"},{"itemIdentifier":"b"}]}"#);
}

/// MD5 (RFC 1321), enough to check the sample files' md5OfBody.
fn md5_of(input: &str) -> u128 {
    const S: [u32; 64] = [
        7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 5, 9, 14, 20, 5, 9, 14, 20, 5,
        9, 14, 20, 5, 9, 14, 20, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 6, 10,
        15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
    ];
    let k: Vec<u32> =
        (0..64).map(|i| ((i as f64 + 1.0).sin().abs() * 4_294_967_296.0) as u32).collect();
    let mut message = input.as_bytes().to_vec();
    let bit_len = (message.len() as u64).wrapping_mul(8);
    message.push(0x80);
    while message.len() % 64 != 56 {
        message.push(0);
    }
    message.extend_from_slice(&bit_len.to_le_bytes());
    let (mut a0, mut b0, mut c0, mut d0) =
        (0x6745_2301_u32, 0xefcd_ab89_u32, 0x98ba_dcfe_u32, 0x1032_5476_u32);
    for chunk in message.chunks(64) {
        let m: Vec<u32> =
            chunk.chunks(4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]])).collect();
        let (mut a, mut b, mut c, mut d) = (a0, b0, c0, d0);
        for i in 0..64 {
            let (f, g) = match i / 16 {
                0 => ((b & c) | (!b & d), i),
                1 => ((d & b) | (!d & c), (5 * i + 1) % 16),
                2 => (b ^ c ^ d, (3 * i + 5) % 16),
                _ => (c ^ (b | !d), (7 * i) % 16),
            };
            let f = f.wrapping_add(a).wrapping_add(k[i]).wrapping_add(m[g]);
            a = d;
            d = c;
            c = b;
            b = b.wrapping_add(f.rotate_left(S[i]));
        }
        a0 = a0.wrapping_add(a);
        b0 = b0.wrapping_add(b);
        c0 = c0.wrapping_add(c);
        d0 = d0.wrapping_add(d);
    }
    let bytes: Vec<u8> = [a0, b0, c0, d0].iter().flat_map(|w| w.to_le_bytes()).collect();
    bytes.iter().fold(0_u128, |acc, b| (acc << 8) | u128::from(*b))
}
