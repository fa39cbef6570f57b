//! The queue's own settings against its dead-letter queue and its readers.

use super::{
    DEAD_LETTER_NOT_ALLOWED, DEAD_LETTER_QUEUE_MISSING, DEAD_LETTER_RETENTION_SHORT,
    MAX_RECEIVE_COUNT_LOW, NO_DEAD_LETTER_QUEUE, QUEUE_NOBODY_READS, set_attribute,
};
use crate::deployment::{Deployment, Queue, Redrive};
use crate::finding::Finding;

/// SQS's longest retention: 14 days.
const MAX_RETENTION_S: u32 = 1_209_600;

pub(super) fn check(deployment: &Deployment, findings: &mut Vec<Finding>) {
    for queue in deployment.queues.iter().filter(|queue| !queue.missing) {
        let mapped = deployment.mappings_of(queue).next().is_some();
        let read = mapped || deployment.served(queue);
        let dead_letter_of_another = deployment.sources_of(queue).next().is_some();
        match &queue.redrive {
            Some(redrive) => redrive_rules(deployment, queue, redrive, mapped, findings),
            None if read => findings.push(Finding::new(
                &NO_DEAD_LETTER_QUEUE,
                &queue.arn,
                "no redrive policy: a message that always fails is retried until its retention \
                 ends, then lost"
                    .into(),
                set_attribute(
                    &queue.url,
                    "RedrivePolicy",
                    "'{\"deadLetterTargetArn\":\"DLQ_ARN\",\"maxReceiveCount\":\"5\"}'",
                ),
            )),
            None => {}
        }
        if !read && !dead_letter_of_another && deployment.readers_known() && queue.asked {
            findings.push(Finding::new(
                &QUEUE_NOBODY_READS,
                &queue.arn,
                "no event source mapping reads it, and no --service given reads it".into(),
                "give the service that reads it with --service CLUSTER/SERVICE, or delete the \
                 queue if nothing does"
                    .into(),
            ));
        }
    }
}

fn redrive_rules(
    deployment: &Deployment,
    queue: &Queue,
    redrive: &Redrive,
    mapped: bool,
    findings: &mut Vec<Finding>,
) {
    if mapped && redrive.max_receive_count < 5 {
        max_receive_count(queue, redrive, findings);
    }
    let Some(dead_letter) = deployment.queue(&redrive.dead_letter_arn) else {
        // Not read (a denied call is its own finding), so nothing to say of it.
        return;
    };
    if dead_letter.missing {
        findings.push(Finding::new(
            &DEAD_LETTER_QUEUE_MISSING,
            &queue.arn,
            format!(
                "its redrive policy names {}, which does not exist: a message past \
                 maxReceiveCount stays in the queue",
                redrive.dead_letter_arn
            ),
            format!(
                "aws sqs create-queue --queue-name {}",
                redrive.dead_letter_arn.rsplit(':').next().unwrap_or_default()
            ),
        ));
        return;
    }
    if !dead_letter.redrive_allow.allows(&queue.arn) {
        findings.push(
            Finding::new(
                &DEAD_LETTER_NOT_ALLOWED,
                &queue.arn,
                format!(
                    "the redrive allow policy of {} does not admit this queue",
                    dead_letter.name
                ),
                set_attribute(
                    &dead_letter.url,
                    "RedriveAllowPolicy",
                    &format!(
                        "'{{\"redrivePermission\":\"byQueue\",\"sourceQueueArns\":[\"{}\"]}}'",
                        queue.arn
                    ),
                ),
            )
            .on(format!("queue {}", dead_letter.name)),
        );
    }
    // FIFO queues reset a message's enqueue time when it is dead-lettered; standard ones keep it.
    if !queue.fifo && dead_letter.retention_s <= queue.retention_s {
        retention(queue, dead_letter, findings);
    }
}

fn max_receive_count(queue: &Queue, redrive: &Redrive, findings: &mut Vec<Finding>) {
    let fifo = if queue.fifo {
        "; on a FIFO queue every message held back behind a failed one in its group is \
         received again too"
    } else {
        ""
    };
    findings.push(Finding::new(
        &MAX_RECEIVE_COUNT_LOW,
        &queue.arn,
        format!(
            "maxReceiveCount {}: a message throttled or caught in a failed batch is \
             dead-lettered after {} receives{fifo}",
            redrive.max_receive_count, redrive.max_receive_count
        ),
        set_attribute(
            &queue.url,
            "RedrivePolicy",
            &format!(
                "'{{\"deadLetterTargetArn\":\"{}\",\"maxReceiveCount\":\"5\"}}'",
                redrive.dead_letter_arn
            ),
        ),
    ));
}

fn retention(queue: &Queue, dead_letter: &Queue, findings: &mut Vec<Finding>) {
    // The dead-letter queue at SQS's longest; the source a day shorter only when it is
    // there too, as nothing can keep messages longer.
    let raise =
        set_attribute(&dead_letter.url, "MessageRetentionPeriod", &MAX_RETENTION_S.to_string());
    let fix = if queue.retention_s < MAX_RETENTION_S {
        raise
    } else {
        let shorter = (MAX_RETENTION_S - 86_400).to_string();
        format!(
            "{raise} && {}  # this queue a day shorter, 13 days: 14 days is the most SQS \
             keeps, so the dead-letter queue cannot keep messages longer than it",
            set_attribute(&queue.url, "MessageRetentionPeriod", &shorter)
        )
    };
    findings.push(
        Finding::new(
            &DEAD_LETTER_RETENTION_SHORT,
            &queue.arn,
            format!(
                "{} keeps messages {} s, this queue {} s: a dead-lettered message keeps its \
                 first enqueue time, so it can expire in the dead-letter queue before anyone \
                 reads it",
                dead_letter.name, dead_letter.retention_s, queue.retention_s
            ),
            fix,
        )
        .on(format!("queue {}", dead_letter.name)),
    );
}
