//! How long a replay's canary must wait before its check can tell anything.
//! A replayed message that still fails comes back to a dead-letter queue
//! only after its queue's `maxReceiveCount` receives, each up to a
//! visibility timeout apart: a check before then finds nothing, and would
//! say the canary passed.

use aws_sdk_sqs::types::QueueAttributeName;
use serde_json::Value;

use super::consumer_backoff::{ConsumerBackoff, Reader};
use crate::aws::queue::Queue;
use crate::terminal::error::CliError;

/// The longest a consumer's long poll waits before it receives a message
/// that became visible: SQS's most, 20 s.
const POLL_MARGIN_S: u64 = 20;

/// What the canary's target says of how soon a failure comes back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CanaryWait {
    /// A failure comes back here within `least` seconds, for `why`.
    Tells { least: u64, why: String },
    /// A failure never comes back here, for `why`.
    CannotTell { why: String },
}

/// From the target queue's redrive policy and visibility timeout: how soon a
/// message that fails there comes back to `source_arn`.
pub(crate) fn least_wait(
    target: &str,
    redrive_policy: Option<&str>,
    visibility_timeout_s: u64,
    source_arn: &str,
) -> CanaryWait {
    let policy: Option<Value> = redrive_policy.and_then(|p| serde_json::from_str(p).ok());
    let dead_letter = policy.as_ref().and_then(|p| p["deadLetterTargetArn"].as_str());
    let count = policy.as_ref().and_then(|p| {
        let count = &p["maxReceiveCount"];
        count.as_u64().or_else(|| count.as_str()?.parse().ok())
    });
    match (dead_letter, count) {
        (Some(arn), Some(count)) if arn == source_arn => CanaryWait::Tells {
            least: count * visibility_timeout_s + POLL_MARGIN_S,
            why: format!(
                "a message that fails on {target} comes back here only after its maxReceiveCount \
                 of {count} receives, each up to its visibility timeout of {visibility_timeout_s} s \
                 apart, and a consumer's long poll of up to {POLL_MARGIN_S} s"
            ),
        },
        (Some(arn), _) => CanaryWait::CannotTell {
            why: format!("a message that fails on {target} goes to {arn}, not back here"),
        },
        (None, _) => CanaryWait::CannotTell {
            why: format!("{target} has no redrive policy: a message that fails stays there"),
        },
    }
}

/// Reads `target`'s redrive policy and visibility timeout, and `source`'s ARN; then, when a
/// failure comes back, the retry backoff of the function its event source mapping invokes. With
/// a note for a person when that function could not be read.
pub(crate) async fn read(
    target: &Queue,
    source: &Queue,
    lambda: &aws_sdk_lambda::Client,
) -> Result<(CanaryWait, Option<String>), CliError> {
    let attributes = |queue: &Queue, names: Vec<QueueAttributeName>| {
        let asked = queue.client.get_queue_attributes().queue_url(&queue.url);
        let url = queue.url.clone();
        async move {
            let answer = asked.set_attribute_names(Some(names)).send().await;
            answer
                .map(|output| output.attributes.unwrap_or_default())
                .map_err(|e| CliError::sqs("GetQueueAttributes", &url, e))
        }
    };
    let of_target = attributes(
        target,
        vec![
            QueueAttributeName::RedrivePolicy,
            QueueAttributeName::VisibilityTimeout,
            QueueAttributeName::QueueArn,
        ],
    )
    .await?;
    let of_source = attributes(source, vec![QueueAttributeName::QueueArn]).await?;
    let visibility = of_target
        .get(&QueueAttributeName::VisibilityTimeout)
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    let source_arn = of_source.get(&QueueAttributeName::QueueArn).cloned().unwrap_or_default();
    let policy = of_target.get(&QueueAttributeName::RedrivePolicy).map(String::as_str);
    let wait = least_wait(&target.url, policy, visibility, &source_arn);
    let target_arn = of_target.get(&QueueAttributeName::QueueArn).cloned().unwrap_or_default();
    // Our engine delays a retried message itself only on a standard queue.
    if !matches!(wait, CanaryWait::Tells { .. }) || target_arn.ends_with(".fifo") {
        return Ok((wait, None));
    }
    let count = max_receive_count(policy).unwrap_or(0);
    Ok(match super::consumer_backoff::read(lambda, &target_arn).await {
        Ok(Reader::Engine(backoff)) => {
            (with_backoff(&target.url, count, visibility, &backoff), None)
        }
        Ok(Reader::Other) => (wait, None),
        Ok(Reader::Unmapped) => {
            // An ECS worker on the engine is the likeliest reader left: count its backoff.
            let worker = ConsumerBackoff::engine_default("a worker on this project's engine");
            let note = unmapped_note(&target.url, &worker);
            (with_backoff(&target.url, count, visibility, &worker), Some(note))
        }
        Err(unread) => (wait, Some(unread_note(&unread))),
    })
}

/// Said before the canary when no event source mapping reads its queue.
fn unmapped_note(target: &str, worker: &ConsumerBackoff) -> String {
    format!(
        "note: no event source mapping reads {target}: the canary's wait counts a worker on this \
         project's engine at its default backoff (RETRY_BASE_SECONDS {}, RETRY_MAX_SECONDS {}), \
         and it tells only if a consumer receives the replayed messages within it (give \
         --canary-wait for one that holds them longer)",
        worker.base, worker.max
    )
}

fn max_receive_count(policy: Option<&str>) -> Option<u64> {
    let policy: Value = serde_json::from_str(policy?).ok()?;
    let count = &policy["maxReceiveCount"];
    count.as_u64().or_else(|| count.as_str()?.parse().ok())
}

/// The least wait when the consumer holds each retried message for its backoff: each receive
/// is the longer of the visibility timeout (a batch that failed whole) and the backoff.
fn with_backoff(
    target: &str,
    count: u64,
    visibility: u64,
    backoff: &ConsumerBackoff,
) -> CanaryWait {
    let held: u64 = (0..count)
        .map(|n| visibility.max(backoff.max.min(backoff.base.saturating_mul(1 << n.min(31)))))
        .sum();
    CanaryWait::Tells {
        least: held + POLL_MARGIN_S,
        why: format!(
            "a message that fails on {target} comes back here only after its maxReceiveCount of \
             {count} receives, each held the longer of its visibility timeout of {visibility} s \
             and the retry backoff of {} (RETRY_BASE_SECONDS {}, RETRY_MAX_SECONDS {}), and a \
             consumer's long poll of up to {POLL_MARGIN_S} s",
            backoff.function, backoff.base, backoff.max
        ),
    }
}

/// Said before the canary when its consumer could not be read: the wait may be too short.
fn unread_note(unread: &str) -> String {
    format!(
        "note: the canary's wait counts the visibility timeout alone: the retry backoff of the \
         queue's consumer could not be read ({unread}), and a consumer that holds a retry \
         longer than the visibility timeout needs a longer --canary-wait"
    )
}

/// The wait to use: `given` when it can tell (or `unproven` says go on
/// anyway), else the least that can, when `given` is unset. A wait that
/// cannot tell, and was not allowed to, is a usage error saying the number.
pub(crate) fn decide(
    known: Option<CanaryWait>,
    given: Option<u64>,
    unproven: bool,
) -> Result<(u64, bool), CliError> {
    let default = 60;
    match known {
        None => Ok((given.unwrap_or(default), true)),
        Some(CanaryWait::Tells { least, .. }) if given.is_none_or(|wait| wait >= least) => {
            Ok((given.unwrap_or(least), true))
        }
        Some(_) if unproven => Ok((given.unwrap_or(default), false)),
        Some(CanaryWait::Tells { least, why }) => Err(CliError::Usage(format!(
            "--canary-wait {} s cannot tell whether the canary failed: {why}: give --canary-wait \
             {least} or more (leave it out for that), or --canary-unproven to replay after a \
             wait that proves nothing",
            given.unwrap_or_default()
        ))),
        Some(CanaryWait::CannotTell { why }) => Err(CliError::Usage(format!(
            "a canary here cannot tell whether it failed: {why}; give --canary-unproven to \
             replay after a wait that proves nothing, or replay without --canary"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DLQ: &str = "arn:aws:sqs:us-east-1:123456789012:orders-dlq";

    #[test]
    fn the_least_wait_is_every_receive_a_visibility_timeout_apart_and_a_poll() {
        let policy = format!(r#"{{"deadLetterTargetArn":"{DLQ}","maxReceiveCount":"5"}}"#);
        let wait = least_wait("orders", Some(&policy), 30, DLQ);
        assert!(matches!(wait, CanaryWait::Tells { least: 170, .. }), "{wait:?}");
        let elsewhere = least_wait("orders", Some(&policy), 30, "arn:aws:sqs:us-east-1:1:other");
        assert!(matches!(elsewhere, CanaryWait::CannotTell { .. }), "{elsewhere:?}");
        assert!(matches!(least_wait("orders", None, 30, DLQ), CanaryWait::CannotTell { .. }));
    }

    #[test]
    fn a_consumer_holding_retries_for_its_backoff_lengthens_the_least_wait() {
        let ours = |base, max| ConsumerBackoff { function: "orders-fn".into(), base, max };
        // 300, 600, then capped at 900, each above the 30 s visibility timeout; and a poll.
        let wait = with_backoff("orders", 3, 30, &ours(300, 900));
        assert!(matches!(wait, CanaryWait::Tells { least: 1820, .. }), "{wait:?}");
        // 10, 20, 40 s: each below a 185 s visibility timeout, which then holds each receive.
        let wait = with_backoff("orders", 3, 185, &ours(10, 900));
        assert!(matches!(wait, CanaryWait::Tells { least: 575, .. }), "{wait:?}");
        let note = unread_note("lambda:ListEventSourceMappings: AccessDenied");
        assert!(note.contains("could not be read (lambda:ListEventSourceMappings: AccessDenied)"));
    }

    #[test]
    fn a_wait_too_short_is_refused_with_the_number_and_the_default_is_the_least() {
        let tells = || Some(CanaryWait::Tells { least: 170, why: "five receives".into() });
        assert_eq!(decide(tells(), None, false).unwrap(), (170, true));
        assert_eq!(decide(tells(), Some(200), false).unwrap(), (200, true));
        let refused = decide(tells(), Some(10), false).unwrap_err().to_string();
        assert!(refused.contains("give --canary-wait 170 or more"), "{refused}");
        assert_eq!(decide(tells(), Some(10), true).unwrap(), (10, false));
        let never = || Some(CanaryWait::CannotTell { why: "no redrive policy".into() });
        assert!(decide(never(), None, false).is_err());
        assert_eq!(decide(never(), None, true).unwrap(), (60, false));
        assert_eq!(decide(None, Some(5), false).unwrap(), (5, true), "not known up front");
    }
}
