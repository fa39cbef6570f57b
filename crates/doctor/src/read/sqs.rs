//! The queues: their URLs from what a person typed, their attributes, and the
//! dead-letter queues their redrive policies name.

use std::collections::HashMap;

use aws_sdk_sqs::Client;
use aws_sdk_sqs::types::QueueAttributeName;
use backpressure_core::queue::QueueArn;
use serde_json::Value;

use super::{Limiters, Scope, slot, unreadable};
use crate::deployment::{Deployment, Queue, Redrive, RedriveAllow, Unreadable};

/// The URLs of the queues of `scope`. A name or ARN that cannot be resolved is unreadable.
pub(super) async fn queue_urls(
    client: &Client,
    limiters: &Limiters,
    scope: &Scope,
    deployment: &mut Deployment,
) -> Vec<String> {
    match scope {
        Scope::All => {
            let mut urls = Vec::new();
            let mut pages = client.list_queues().max_results(1000).into_paginator().send();
            loop {
                slot(&limiters.sqs).await;
                match pages.next().await {
                    None => break,
                    Some(Ok(page)) => urls.extend(page.queue_urls().iter().cloned()),
                    Some(Err(error)) => {
                        deployment.unreadable.push(unreadable("sqs:ListQueues", "*", &error));
                        break;
                    }
                }
            }
            urls
        }
        Scope::Queues(given) => {
            let mut urls = Vec::new();
            for queue in given {
                if queue.starts_with("https://") || queue.starts_with("http://") {
                    urls.push(queue.clone());
                    continue;
                }
                let (name, owner) = match QueueArn::parse(queue) {
                    Ok(arn) => (arn.name().to_owned(), Some(arn.account().to_owned())),
                    Err(_) => (queue.clone(), None),
                };
                slot(&limiters.sqs).await;
                let asked = client.get_queue_url().queue_name(&name);
                match asked.set_queue_owner_aws_account_id(owner).send().await {
                    Ok(found) => urls.extend(found.queue_url().map(str::to_owned)),
                    Err(error) => {
                        deployment.unreadable.push(unreadable("sqs:GetQueueUrl", queue, &error));
                    }
                }
            }
            urls
        }
    }
}

/// Each queue's attributes, in the order given.
pub(super) async fn read_queues(
    client: &Client,
    limiters: &Limiters,
    urls: &[String],
    deployment: &mut Deployment,
    progress: &(dyn Fn(&str) + Sync),
) {
    for (done, url) in urls.iter().enumerate() {
        if done > 0 && done % 100 == 0 {
            progress(&format!("{done} of {} queues read", urls.len()));
        }
        match attributes(client, limiters, url).await {
            Ok(Some(queue)) => deployment.queues.push(queue),
            // Deleted since it was listed.
            Ok(None) => {}
            Err(read) => deployment.unreadable.push(read),
        }
    }
}

/// The dead-letter queues the queues name, read once each (not asked about, only followed).
pub(super) async fn follow_dead_letter_queues(
    client: &Client,
    limiters: &Limiters,
    deployment: &mut Deployment,
) {
    let named: Vec<String> = deployment
        .queues
        .iter()
        .filter_map(|queue| queue.redrive.as_ref().map(|r| r.dead_letter_arn.clone()))
        .collect();
    for arn in named {
        if deployment.queue(&arn).is_some() {
            continue;
        }
        let Ok(parsed) = QueueArn::parse(&arn) else {
            let message = "not a queue ARN".to_owned();
            deployment.unreadable.push(Unreadable::new("sqs:GetQueueUrl", &arn, message));
            continue;
        };
        slot(&limiters.sqs).await;
        let asked = client.get_queue_url().queue_name(parsed.name());
        let found = asked.queue_owner_aws_account_id(parsed.account()).send().await;
        let url = match found {
            Ok(found) => found.queue_url().unwrap_or_default().to_owned(),
            Err(error) if error.as_service_error().is_some_and(|e| e.is_queue_does_not_exist()) => {
                let mut missing = Queue::new(&arn, "", parsed.name());
                missing.missing = true;
                missing.asked = false;
                deployment.queues.push(missing);
                continue;
            }
            Err(error) => {
                deployment.unreadable.push(unreadable("sqs:GetQueueUrl", &arn, &error));
                continue;
            }
        };
        match attributes(client, limiters, &url).await {
            Ok(Some(mut queue)) => {
                queue.asked = false;
                deployment.queues.push(queue);
            }
            Ok(None) => {
                let mut missing = Queue::new(&arn, &url, parsed.name());
                missing.missing = true;
                missing.asked = false;
                deployment.queues.push(missing);
            }
            Err(read) => deployment.unreadable.push(read),
        }
    }
}

/// One queue's attributes; `None` when it no longer exists.
async fn attributes(
    client: &Client,
    limiters: &Limiters,
    url: &str,
) -> Result<Option<Queue>, Unreadable> {
    slot(&limiters.sqs).await;
    let asked =
        client.get_queue_attributes().queue_url(url).attribute_names(QueueAttributeName::All);
    match asked.send().await {
        Ok(answer) => Ok(Some(queue_of(url, answer.attributes().cloned().unwrap_or_default()))),
        Err(error) if error.as_service_error().is_some_and(|e| e.is_queue_does_not_exist()) => {
            Ok(None)
        }
        Err(error) => Err(unreadable("sqs:GetQueueAttributes", url, &error)),
    }
}

fn queue_of(url: &str, attributes: HashMap<QueueAttributeName, String>) -> Queue {
    let text = |name: QueueAttributeName| attributes.get(&name).map(String::as_str);
    let number = |name: QueueAttributeName| text(name).and_then(|v| v.parse::<u32>().ok());
    let arn = text(QueueAttributeName::QueueArn).unwrap_or_default();
    let name = arn.rsplit(':').next().filter(|n| !n.is_empty());
    let name = name.unwrap_or_else(|| url.rsplit('/').next().unwrap_or(url));
    let mut queue = Queue::new(arn, url, name);
    if let Some(seconds) = number(QueueAttributeName::VisibilityTimeout) {
        queue.visibility_timeout_s = seconds;
    }
    if let Some(seconds) = number(QueueAttributeName::MessageRetentionPeriod) {
        queue.retention_s = seconds;
    }
    if let Some(bytes) = number(QueueAttributeName::MaximumMessageSize) {
        queue.max_message_bytes = bytes;
    }
    queue.fifo = text(QueueAttributeName::FifoQueue) == Some("true") || name.ends_with(".fifo");
    queue.redrive = text(QueueAttributeName::RedrivePolicy).and_then(redrive_of);
    queue.redrive_allow =
        text(QueueAttributeName::RedriveAllowPolicy).map_or(RedriveAllow::AllowAll, allow_of);
    queue
}

/// `{"deadLetterTargetArn": …, "maxReceiveCount": 5}` (the count a number or a string).
fn redrive_of(policy: &str) -> Option<Redrive> {
    let policy: Value = serde_json::from_str(policy).ok()?;
    let dead_letter_arn = policy.get("deadLetterTargetArn")?.as_str()?.to_owned();
    let count = policy.get("maxReceiveCount")?;
    let max_receive_count = count
        .as_u64()
        .or_else(|| count.as_str().and_then(|text| text.parse().ok()))
        .and_then(|count| u32::try_from(count).ok())?;
    Some(Redrive { dead_letter_arn, max_receive_count })
}

/// `{"redrivePermission": "allowAll" | "denyAll" | "byQueue", "sourceQueueArns": […]}`.
fn allow_of(policy: &str) -> RedriveAllow {
    let Ok(policy) = serde_json::from_str::<Value>(policy) else { return RedriveAllow::AllowAll };
    match policy.get("redrivePermission").and_then(Value::as_str) {
        Some("denyAll") => RedriveAllow::DenyAll,
        Some("byQueue") => RedriveAllow::ByQueue(
            policy
                .get("sourceQueueArns")
                .and_then(Value::as_array)
                .map(|arns| arns.iter().filter_map(Value::as_str).map(str::to_owned).collect())
                .unwrap_or_default(),
        ),
        _ => RedriveAllow::AllowAll,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_redrive_policy_reads_its_count_as_a_number_or_as_text() {
        let arn = "arn:aws:sqs:us-east-1:123456789012:dlq";
        for policy in [
            format!(r#"{{"deadLetterTargetArn":"{arn}","maxReceiveCount":3}}"#),
            format!(r#"{{"deadLetterTargetArn":"{arn}","maxReceiveCount":"3"}}"#),
        ] {
            let redrive = redrive_of(&policy);
            assert_eq!(
                redrive,
                Some(Redrive { dead_letter_arn: arn.into(), max_receive_count: 3 })
            );
        }
        assert_eq!(redrive_of("{}"), None);
        assert_eq!(redrive_of("not json"), None);
    }

    #[test]
    fn a_redrive_allow_policy_admits_what_it_names() {
        let by_queue = allow_of(r#"{"redrivePermission":"byQueue","sourceQueueArns":["a"]}"#);
        assert!(by_queue.allows("a") && !by_queue.allows("b"));
        assert!(!allow_of(r#"{"redrivePermission":"denyAll"}"#).allows("a"));
        assert!(allow_of(r#"{"redrivePermission":"allowAll"}"#).allows("a"));
    }
}
