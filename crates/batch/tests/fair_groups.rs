//! Fair shares per `MessageGroupId` on a standard queue, through the batch
//! processor: one noisy tenant cannot take every slot.
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use backpressure_batch::{
    BatchProcessor, JsonBody, Message, Verdict, record::SqsRecord, report::Outcome,
};
use tokio::time::Instant;

#[derive(serde::Deserialize)]
struct Work {}
impl JsonBody for Work {}

fn record(id: &str, group: &str) -> SqsRecord {
    SqsRecord::new(id)
        .with_body("{}")
        .with_attribute("MessageGroupId", group)
        .with_source_arn("arn:aws:sqs:us-east-1:123456789012:tenants")
}

#[derive(Default)]
struct Seen {
    started: Vec<String>,
    running: HashMap<String, usize>,
    most: HashMap<String, usize>,
}

async fn run(per_group: Option<usize>) -> (Seen, Vec<Outcome>) {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let watching = seen.clone();
    let slow = move |message: &Message<'_, Work>| {
        let (seen, id) = (watching.clone(), message.message_id.to_owned());
        let group = message.record.message_group_id().unwrap().to_owned();
        async move {
            {
                let mut seen = seen.lock().unwrap();
                seen.started.push(id);
                let running = seen.running.entry(group.clone()).or_default();
                *running += 1;
                let now = *running;
                let most = seen.most.entry(group.clone()).or_default();
                *most = (*most).max(now);
            }
            tokio::time::sleep(Duration::from_millis(40)).await;
            *seen.lock().unwrap().running.get_mut(&group).unwrap() -= 1;
            Verdict::Done
        }
    };
    let mut builder = BatchProcessor::builder(slow);
    if let Some(per_group) = per_group {
        builder = builder.max_in_flight_per_group(per_group);
    }
    let batch = builder.build().unwrap();
    let mut records: Vec<SqsRecord> = (0..18).map(|i| record(&format!("a{i}"), "noisy")).collect();
    records.push(record("b0", "quiet-b"));
    records.push(record("c0", "quiet-c"));
    let report = batch.process(&records, Instant::now() + Duration::from_secs(30)).await.unwrap();
    let outcomes = report.outcomes.iter().map(|o| o.outcome.clone()).collect();
    let seen = std::mem::take(&mut *seen.lock().unwrap());
    (seen, outcomes)
}

#[tokio::test]
async fn a_noisy_group_holds_at_most_its_share_and_the_quiet_ones_start_first() {
    let (seen, outcomes) = run(Some(2)).await;
    assert!(outcomes.iter().all(|o| *o == Outcome::Done), "nothing lost: {outcomes:?}");
    assert_eq!(seen.most["noisy"], 2, "at most 2 of the noisy group at once");
    let first_four: Vec<&str> = seen.started.iter().take(4).map(String::as_str).collect();
    assert!(first_four.contains(&"b0") && first_four.contains(&"c0"), "{first_four:?}");
    let noisy: Vec<&String> = seen.started.iter().filter(|id| id.starts_with('a')).collect();
    let arrival: Vec<String> = (0..18).map(|i| format!("a{i}")).collect();
    assert_eq!(noisy, arrival.iter().collect::<Vec<_>>(), "the group's own order kept");

    let (unlimited, _) = run(None).await;
    assert_eq!(unlimited.most["noisy"], 18, "without the limit the noisy group takes every slot");
}
