//! The alarms on the queues: what a poison message leaves out of each metric.

use super::{AGE_ONLY_ALARM, DEAD_LETTER_UNALARMED};
use crate::deployment::{Alarm, Deployment, Queue};
use crate::finding::Finding;

const DEPTH: &str = "ApproximateNumberOfMessagesVisible";
const AGE: &str = "ApproximateAgeOfOldestMessage";

pub(super) fn check(deployment: &Deployment, findings: &mut Vec<Finding>) {
    if !deployment.alarms_known() {
        return;
    }
    for queue in deployment.queues.iter().filter(|queue| !queue.missing) {
        let alarms: Vec<&Alarm> = deployment.alarms_of(queue).collect();
        let is_dead_letter = deployment.sources_of(queue).next().is_some();
        if is_dead_letter && !watches_depth(&alarms) {
            let sent = alarms
                .iter()
                .any(|alarm| alarm.metrics.iter().any(|metric| metric == "NumberOfMessagesSent"));
            let measured = if sent {
                "its alarms read NumberOfMessagesSent, which does not count the messages a \
                 redrive policy moves in: a dead-lettered message raises nothing"
            } else {
                "no alarm on its depth: a dead-lettered message raises nothing"
            };
            findings.push(Finding::new(
                &DEAD_LETTER_UNALARMED,
                &queue.arn,
                measured.into(),
                depth_alarm(queue),
            ));
        }
        let age_only = !alarms.is_empty()
            && alarms.iter().all(|alarm| alarm.metrics.iter().all(|metric| metric == AGE));
        if age_only && !poison_surfaces(deployment, queue) {
            findings.push(Finding::new(
                &AGE_ONLY_ALARM,
                &queue.arn,
                "its only alarms read ApproximateAgeOfOldestMessage, which leaves out messages \
                 received three times or more: a message that keeps failing makes the queue look \
                 younger, not older"
                    .into(),
                depth_alarm(queue),
            ));
        }
    }
}

fn watches_depth(alarms: &[&Alarm]) -> bool {
    alarms.iter().any(|alarm| alarm.metrics.iter().any(|metric| metric == DEPTH))
}

/// Whether a message that keeps failing ends in a dead-letter queue someone is alarmed on.
fn poison_surfaces(deployment: &Deployment, queue: &Queue) -> bool {
    let Some(redrive) = &queue.redrive else { return false };
    let Some(dead_letter) = deployment.queue(&redrive.dead_letter_arn) else { return false };
    !dead_letter.missing && watches_depth(&deployment.alarms_of(dead_letter).collect::<Vec<_>>())
}

fn depth_alarm(queue: &Queue) -> String {
    format!(
        "aws cloudwatch put-metric-alarm --alarm-name {name}-depth --namespace AWS/SQS \
         --metric-name {DEPTH} --dimensions Name=QueueName,Value={name} --statistic Maximum \
         --period 60 --evaluation-periods 1 --threshold 0 --comparison-operator \
         GreaterThanThreshold --alarm-actions TOPIC_ARN",
        name = queue.name
    )
}
