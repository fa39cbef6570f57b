//! Reading one sample for every target: each queue once, each cluster's
//! services in calls of ten, all concurrently. A failure is kept per target,
//! so one bad target never hides or corrupts another's figures. The
//! dead-letter queue is auxiliary: when it cannot be read, the scaling
//! figures still stand and only `DlqBacklog` is missing.

use std::collections::HashMap;
use std::sync::Arc;

use crate::backlog::Readings;
use crate::redrive::{RedrivePolicyError, dead_letter_target_arn};
use crate::services::{
    DescribedServices, MAX_SERVICES_PER_DESCRIBE, QueueAttributes, ServiceLookupError,
};
use crate::{QueueCounts, ServiceCounts, Target};
use backpressure_core::error::ApiError;
use backpressure_core::queue::{QueueRef, QueueRefError};
use futures::future::join_all;

use crate::aws::{EcsServices, SqsQueues};

/// Why one target could not be read. Shared failures (a queue or a
/// `DescribeServices` call used by several targets) are reference-counted.
#[derive(Debug, Clone, thiserror::Error)]
pub enum TargetError {
    #[error("reading queue {queue} failed")]
    Queue {
        queue: String,
        #[source]
        source: Arc<ApiError>,
    },
    #[error("describing services of cluster {cluster} failed")]
    DescribeServices {
        cluster: String,
        #[source]
        source: Arc<ApiError>,
    },
    #[error("service {service} of cluster {cluster} cannot be counted")]
    Service {
        cluster: String,
        service: String,
        #[source]
        source: ServiceLookupError,
    },
}

/// Why a queue's dead-letter backlog is unknown.
#[derive(Debug, Clone, thiserror::Error)]
pub enum DeadLetterError {
    #[error("queue {queue} has a RedrivePolicy naming no usable dead-letter queue")]
    Policy {
        queue: String,
        #[source]
        source: Arc<RedriveError>,
    },
    #[error("reading dead-letter queue {arn} of queue {queue} failed")]
    Read {
        queue: String,
        arn: String,
        #[source]
        source: Arc<ApiError>,
    },
}

impl DeadLetterError {
    /// The dead-letter queue's ARN, when the redrive policy named a usable one.
    pub fn arn(&self) -> Option<&str> {
        match self {
            Self::Read { arn, .. } => Some(arn),
            Self::Policy { .. } => None,
        }
    }
}

/// One target's reads: the figures, and why `DlqBacklog` is missing if it is.
#[derive(Debug, Clone)]
pub struct TargetReading {
    pub readings: Readings,
    pub dead_letter_error: Option<DeadLetterError>,
}

#[derive(Debug, thiserror::Error)]
pub enum RedriveError {
    #[error(transparent)]
    Policy(#[from] RedrivePolicyError),
    #[error(transparent)]
    Arn(#[from] QueueRefError),
}

type QueueResult = Result<QueueAttributes, Arc<ApiError>>;
type DescribeResult = Result<Arc<DescribedServices>, Arc<ApiError>>;

/// Reads every target once. The result is in the order of `targets`.
pub async fn read_targets(
    queues: &SqsQueues,
    services: &EcsServices,
    targets: &[Target],
) -> Vec<Result<TargetReading, TargetError>> {
    let (queue_reads, service_reads) =
        futures::join!(read_queues(queues, targets), describe_services(services, targets));
    targets
        .iter()
        .map(|target| {
            let (counts, dead_letter) = queue_reads
                .get(target.queue.url())
                .cloned()
                .unwrap_or_else(|| unreachable_read(&target.queue))?;
            let service = service_counts(&service_reads, target)?;
            let (dlq_visible, dead_letter_error) = match dead_letter {
                None => (None, None),
                Some(Ok(visible)) => (Some(visible), None),
                Some(Err(error)) => (None, Some(error)),
            };
            Ok(TargetReading {
                readings: Readings { queue: counts, service, dlq_visible },
                dead_letter_error,
            })
        })
        .collect()
}

/// A queue's counts and, when it has a redrive policy, its dead-letter backlog.
type QueueReading = Result<(QueueCounts, Option<Result<u64, DeadLetterError>>), TargetError>;

/// Every queue in `read_targets` is read, so a missing entry cannot happen;
/// reporting it as a failed read keeps even that impossible case honest.
fn unreachable_read(queue: &QueueRef) -> QueueReading {
    Err(TargetError::Queue {
        queue: queue.name().to_owned(),
        source: Arc::new(ApiError::new("GetQueueAttributes", "the queue was not read")),
    })
}

/// Each distinct queue once, then each distinct dead-letter queue once.
async fn read_queues(queues: &SqsQueues, targets: &[Target]) -> HashMap<String, QueueReading> {
    let mut distinct: Vec<&QueueRef> = targets.iter().map(|t| &t.queue).collect();
    distinct.sort_by(|a, b| a.url().cmp(b.url()));
    distinct.dedup();
    let reads = attributes_of(queues, distinct.iter().copied()).await;

    let dead_letter: HashMap<&str, Result<(String, QueueRef), Arc<RedriveError>>> = reads
        .iter()
        .filter_map(|(queue, read)| {
            let policy = read.as_ref().ok()?.redrive_policy.as_deref()?;
            let dlq = dead_letter_target_arn(policy)
                .map_err(RedriveError::from)
                .and_then(|arn| {
                    let dlq = queue.dead_letter_queue(&arn).map_err(RedriveError::from)?;
                    Ok((arn, dlq))
                })
                .map_err(Arc::new);
            Some((queue.url(), dlq))
        })
        .collect();
    let mut dlqs: Vec<&QueueRef> =
        dead_letter.values().filter_map(|d| d.as_ref().ok().map(|(_, dlq)| dlq)).collect();
    dlqs.sort_by(|a, b| a.url().cmp(b.url()));
    dlqs.dedup();
    let dlq_reads: HashMap<&str, QueueResult> = attributes_of(queues, dlqs.iter().copied())
        .await
        .into_iter()
        .map(|(q, r)| (q.url(), r))
        .collect();

    reads
        .iter()
        .map(|(queue, read)| {
            let name = || queue.name().to_owned();
            let reading = match read {
                Err(source) => Err(TargetError::Queue { queue: name(), source: source.clone() }),
                Ok(attributes) => {
                    let dead_letter = dead_letter
                        .get(queue.url())
                        .map(|redrive| dead_letter_backlog(queue, redrive, &dlq_reads));
                    Ok((attributes.counts, dead_letter))
                }
            };
            (queue.url().to_owned(), reading)
        })
        .collect()
}

/// The visible backlog of `queue`'s dead-letter queue, from its redrive
/// policy and the dead-letter queues' reads.
fn dead_letter_backlog(
    queue: &QueueRef,
    redrive: &Result<(String, QueueRef), Arc<RedriveError>>,
    dlq_reads: &HashMap<&str, QueueResult>,
) -> Result<u64, DeadLetterError> {
    let queue_name = queue.name().to_owned();
    let (arn, dlq) = redrive.as_ref().map_err(|source| DeadLetterError::Policy {
        queue: queue_name.clone(),
        source: source.clone(),
    })?;
    match dlq_reads.get(dlq.url()) {
        Some(Ok(attributes)) => Ok(attributes.counts.visible),
        read => Err(DeadLetterError::Read {
            queue: queue_name,
            arn: arn.clone(),
            // Every usable dead-letter queue is read, so `None` cannot happen;
            // reporting it as a failed read keeps even that case honest.
            source: read.and_then(|r| r.as_ref().err()).cloned().unwrap_or_else(|| {
                Arc::new(ApiError::new("GetQueueAttributes", "the dead-letter queue was not read"))
            }),
        }),
    }
}

async fn attributes_of<'q>(
    queues: &SqsQueues,
    refs: impl Iterator<Item = &'q QueueRef>,
) -> Vec<(&'q QueueRef, QueueResult)> {
    join_all(refs.map(|queue| async move {
        (queue, queues.queue_attributes(queue).await.map_err(Arc::new))
    }))
    .await
}

/// `DescribeServices` per cluster, ten services a call, all calls concurrent.
async fn describe_services(
    services: &EcsServices,
    targets: &[Target],
) -> HashMap<(String, String), DescribeResult> {
    let mut by_cluster: HashMap<&str, Vec<String>> = HashMap::new();
    for target in targets {
        let names = by_cluster.entry(&target.cluster).or_default();
        if !names.contains(&target.service) {
            names.push(target.service.clone());
        }
    }
    let calls = by_cluster.iter().flat_map(|(cluster, names)| {
        names.chunks(MAX_SERVICES_PER_DESCRIBE).map(move |chunk| async move {
            let described =
                services.describe_services(cluster, chunk).await.map(Arc::new).map_err(Arc::new);
            chunk.iter().map(move |name| ((cluster.to_string(), name.clone()), described.clone()))
        })
    });
    join_all(calls).await.into_iter().flatten().collect()
}

fn service_counts(
    reads: &HashMap<(String, String), DescribeResult>,
    target: &Target,
) -> Result<ServiceCounts, TargetError> {
    let key = (target.cluster.clone(), target.service.clone());
    let described = match reads.get(&key) {
        Some(Ok(described)) => described,
        Some(Err(source)) => {
            return Err(TargetError::DescribeServices {
                cluster: target.cluster.clone(),
                source: source.clone(),
            });
        }
        None => {
            return Err(TargetError::Service {
                cluster: target.cluster.clone(),
                service: target.service.clone(),
                source: ServiceLookupError::Missing { reason: "not described".to_owned() },
            });
        }
    };
    described.counts_for(&target.service).map_err(|source| TargetError::Service {
        cluster: target.cluster.clone(),
        service: target.service.clone(),
        source,
    })
}
