//! The queues: their URLs from what a person typed, their attributes, and the
//! dead-letter queues their redrive policies name.

use std::collections::HashMap;

use aws_sdk_sqs::Client;
use aws_sdk_sqs::config::Region;
use aws_sdk_sqs::types::QueueAttributeName;
use backpressure_core::queue::QueueArn;
use serde_json::Value;

use super::{Limiters, Scope, slot, unreadable};
use crate::deployment::{Deployment, Queue, Redrive, RedriveAllow, Unreadable};

/// A queue to read: its URL, and the ARN it was given by, which its
/// attributes must then name.
pub(super) struct Located {
    url: String,
    given_arn: Option<String>,
}

impl Located {
    fn url(url: String) -> Self {
        Self { url, given_arn: None }
    }
}

/// The queues of `scope`. A name or ARN that cannot be resolved is unreadable.
pub(super) async fn queue_urls(
    client: &Client,
    limiters: &Limiters,
    scope: &Scope,
    deployment: &mut Deployment,
) -> Vec<Located> {
    match scope {
        Scope::All => {
            let mut urls = Vec::new();
            let mut pages = client.list_queues().max_results(1000).into_paginator().send();
            loop {
                slot(&limiters.sqs).await;
                match pages.next().await {
                    None => break,
                    Some(Ok(page)) => {
                        urls.extend(page.queue_urls().iter().cloned().map(Located::url));
                    }
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
                    urls.push(Located::url(queue.clone()));
                    continue;
                }
                let (name, owner, given_arn) = match QueueArn::parse(queue) {
                    Ok(arn) if !in_region_of(client, &arn) => {
                        deployment.unreadable.push(elsewhere(client, &arn));
                        continue;
                    }
                    Ok(arn) => {
                        (arn.name().to_owned(), Some(arn.account().to_owned()), Some(queue.clone()))
                    }
                    Err(_) => (queue.clone(), None, None),
                };
                slot(&limiters.sqs).await;
                let asked = client.get_queue_url().queue_name(&name);
                match asked.set_queue_owner_aws_account_id(owner).send().await {
                    Ok(found) => {
                        urls.extend(found.queue_url().map(|url| Located {
                            url: url.to_owned(),
                            given_arn: given_arn.clone(),
                        }))
                    }
                    Err(error) => {
                        deployment.unreadable.push(unreadable("sqs:GetQueueUrl", queue, &error));
                    }
                }
            }
            urls
        }
    }
}

/// Whether `client` asks the region `arn` is in.
fn in_region_of(client: &Client, arn: &QueueArn) -> bool {
    client.config().region().is_some_and(|region| region.as_ref() == arn.region())
}

/// A queue given in another region than the one read: not read, and said so.
fn elsewhere(client: &Client, arn: &QueueArn) -> Unreadable {
    let here = client.config().region().map_or("no region".to_owned(), |r| r.to_string());
    let detail = format!(
        "the queue is in {}, and this run reads {here} (a run reads one region): run doctor \
         again with --queue {} on its own",
        arn.region(),
        arn.as_str()
    );
    Unreadable::new("sqs:GetQueueUrl", arn.as_str(), detail)
}

/// SQS answered for `arn` with another queue (a same-named one of another
/// account or region): the one named was not read.
fn answered_for_another(arn: &str, answered: &str) -> Unreadable {
    let detail = format!("SQS answered with {answered} instead, so this queue was not checked");
    Unreadable::new("sqs:GetQueueUrl", arn, detail)
}

/// `client` asking `region` instead.
fn in_region(client: &Client, region: &str) -> Client {
    let config = client.config().to_builder().region(Region::new(region.to_owned())).build();
    Client::from_conf(config)
}

/// Each queue's attributes, in the order given.
pub(super) async fn read_queues(
    client: &Client,
    limiters: &Limiters,
    urls: &[Located],
    deployment: &mut Deployment,
    progress: &(dyn Fn(&str) + Sync),
) {
    for (done, Located { url, given_arn }) in urls.iter().enumerate() {
        if done > 0 && done % 100 == 0 {
            progress(&format!("{done} of {} queues read", urls.len()));
        }
        match attributes(client, limiters, url).await {
            Ok(Some(queue)) if given_arn.as_ref().is_some_and(|arn| *arn != queue.arn) => {
                let arn = given_arn.as_deref().unwrap_or_default();
                deployment.unreadable.push(answered_for_another(arn, &queue.arn));
            }
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
    // Each dead-letter queue with the account of the queue that names it.
    let named: Vec<(String, String)> = deployment
        .queues
        .iter()
        .filter_map(|queue| {
            let account = QueueArn::parse(&queue.arn).ok()?.account().to_owned();
            Some((queue.redrive.as_ref()?.dead_letter_arn.clone(), account))
        })
        .collect();
    for (arn, source_account) in named {
        if deployment.queue(&arn).is_some() {
            continue;
        }
        let Ok(parsed) = QueueArn::parse(&arn) else {
            let message = "not a queue ARN".to_owned();
            deployment.unreadable.push(Unreadable::new("sqs:GetQueueUrl", &arn, message));
            continue;
        };
        // Read where the ARN says, in whichever region and account that is.
        let regional;
        let client = if in_region_of(client, &parsed) {
            client
        } else {
            regional = in_region(client, parsed.region());
            &regional
        };
        slot(&limiters.sqs).await;
        let asked = client.get_queue_url().queue_name(parsed.name());
        let found = asked.queue_owner_aws_account_id(parsed.account()).send().await;
        let url = match found {
            Ok(found) => found.queue_url().unwrap_or_default().to_owned(),
            // SQS answers alike for another account's queue this identity
            // may not see: not knowing which, it is no pass and no finding.
            Err(error)
                if error.as_service_error().is_some_and(|e| e.is_queue_does_not_exist())
                    && parsed.account() != source_account =>
            {
                deployment.unreadable.push(unreadable("sqs:GetQueueUrl", &arn, &error));
                continue;
            }
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
            // An answer for another queue (a same-named one of this account,
            // say) is no reading of the one named.
            Ok(Some(queue)) if queue.arn != arn => {
                deployment.unreadable.push(answered_for_another(&arn, &queue.arn));
            }
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

/// Every queue named by ARN (given, or a dead-letter queue a redrive policy
/// names) is read, or recorded unreadable: one SQS answered for with
/// another queue (a same-named one of another account or region) would
/// otherwise be checked by no rule, and pass.
pub(super) fn never_unaccounted(scope: &Scope, deployment: &mut Deployment) {
    let given = match scope {
        Scope::Queues(given) => given.iter().filter(|q| q.starts_with("arn:")).cloned().collect(),
        Scope::All => Vec::new(),
    };
    let dead_letters =
        deployment.queues.iter().filter_map(|q| Some(q.redrive.as_ref()?.dead_letter_arn.clone()));
    let named: Vec<String> = dead_letters.chain(given).collect();
    for arn in named {
        let accounted = deployment.queue(&arn).is_some()
            || deployment.unreadable.iter().any(|read| read.resource == arn);
        if !accounted {
            let detail = "SQS answered for another queue, so this one was not checked".to_owned();
            deployment.unreadable.push(Unreadable::new("sqs:GetQueueAttributes", &arn, detail));
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
