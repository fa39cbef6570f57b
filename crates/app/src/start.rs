//! The consumer start-up batch-consumer and sqs-worker share: from a
//! [`ConsumerConfig`] to a [`Builder`] with the quarantine queue (and its S3
//! overflow), the source queue's visibility, the engine's settings, the
//! handler version and the idempotency store. Only the processor, the claim
//! lease and when AWS is first reached differ between them.

#[cfg(feature = "dynamodb")]
use aws_sdk_dynamodb::Client as DynamoDbClient;
#[cfg(any(feature = "s3-overflow", feature = "offloaded-payloads"))]
use aws_sdk_s3::Client as S3Client;
use aws_sdk_sqs::Client as SqsClient;
use backpressure_core::config::Vars;
use backpressure_core::config::variables::{
    IDEMPOTENCY_KEY_PREFIX, IDEMPOTENCY_MISSING_KEY, IDEMPOTENCY_REDIS_URL, IDEMPOTENCY_TABLE,
    IDEMPOTENCY_TTL_SECONDS, QUARANTINE_OVERFLOW_BUCKET,
};
use backpressure_startup::sdk::SdkConfig;
use tracing::{info, warn};

use backpressure_batch::BatchProcessor;
use backpressure_batch::Builder;
#[cfg(feature = "offloaded-payloads")]
use backpressure_batch::envelope::OffloadedPayloads;
#[cfg(any(feature = "dynamodb", feature = "redis"))]
use backpressure_batch::idempotency::Idempotency;
use backpressure_batch::idempotency::StoreError;
#[cfg(feature = "s3-overflow")]
use backpressure_batch::quarantine::S3Overflow;
use backpressure_batch::quarantine::SqsQuarantine;
use backpressure_batch::quarantine::{QuarantineError, QuarantineRecord, QuarantineStore};

use crate::config::ConsumerConfig;
use crate::idempotency::StoreChoice;

/// The AWS clients a consumer calls; clones share them. Each opens its first
/// connection at its first call.
#[derive(Debug, Clone)]
pub struct ConsumerClients {
    /// The quarantine queue's and the source queue's client.
    pub sqs: SqsClient,
    /// The client of the quarantine overflow bucket and of offloaded payloads.
    #[cfg(any(feature = "s3-overflow", feature = "offloaded-payloads"))]
    pub s3: S3Client,
    /// The idempotency table's client.
    #[cfg(feature = "dynamodb")]
    pub dynamodb: DynamoDbClient,
}

impl ConsumerClients {
    /// Clients of one SDK configuration.
    pub fn new(sdk: &SdkConfig) -> Self {
        Self {
            sqs: SqsClient::new(sdk),
            #[cfg(any(feature = "s3-overflow", feature = "offloaded-payloads"))]
            s3: S3Client::new(sdk),
            #[cfg(feature = "dynamodb")]
            dynamodb: DynamoDbClient::new(sdk),
        }
    }
}

/// The quarantine queue as batch-consumer and sqs-worker write to it: a record too
/// large for the queue is logged with the variable that keeps its body in S3.
#[derive(Debug)]
pub struct ConsumerQuarantine(SqsQuarantine);

impl QuarantineStore for ConsumerQuarantine {
    async fn store(&self, records: &[QuarantineRecord]) -> Vec<Result<(), QuarantineError>> {
        let results = self.0.store(records).await;
        for (record, result) in records.iter().zip(&results) {
            if let Err(QuarantineError::TooLarge { overflow: false, .. }) = result {
                warn!(
                    message_id = %record.message_id,
                    "set {} to keep a body too large for the quarantine queue in S3",
                    QUARANTINE_OVERFLOW_BUCKET.name
                );
            }
        }
        results
    }
}

/// When the consumer first reaches AWS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reach {
    /// At the first call a batch needs: a Lambda init opens no connection
    /// and reads nothing.
    OnFirstUse,
    /// At start-up: the quarantine queue's `MaximumMessageSize` is read and
    /// the idempotency table checked, so a long-lived task that cannot reach
    /// them stops at once instead of retrying its first poison messages.
    AtStart,
}

/// What [`Reach::AtStart`] could not read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReachError {
    /// The quarantine queue's `MaximumMessageSize`.
    #[error(
        "cannot read the quarantine queue {queue} (or give its MaximumMessageSize in QUARANTINE_MAX_MESSAGE_BYTES)"
    )]
    QuarantineQueue {
        /// The queue's URL.
        queue: String,
        /// Why.
        #[source]
        source: QuarantineError,
    },
    /// The idempotency store (`IDEMPOTENCY_TABLE` or `IDEMPOTENCY_REDIS_URL`).
    #[error("cannot reach the idempotency store, the {store}")]
    IdempotencyStore {
        /// The table, or the Redis URL without its password.
        store: String,
        /// Why.
        #[source]
        source: StoreError,
    },
    /// The idempotency store asked for is not in this build.
    #[error("this build has no {store}: build backpressure-app with the feature `{feature}`")]
    NotBuilt {
        /// The store asked for.
        store: String,
        /// The feature that builds it.
        feature: &'static str,
    },
}

/// Warns of each idempotency variable set while neither `IDEMPOTENCY_TABLE`
/// nor `IDEMPOTENCY_REDIS_URL` is: it does nothing, for idempotency is off.
pub(crate) fn warn_of_idempotency_without_table<F: Fn(&str) -> Option<String>>(vars: &Vars<F>) {
    if vars.get(IDEMPOTENCY_TABLE.name).is_some() || vars.get(IDEMPOTENCY_REDIS_URL.name).is_some()
    {
        return;
    }
    for name in
        [IDEMPOTENCY_TTL_SECONDS.name, IDEMPOTENCY_MISSING_KEY.name, IDEMPOTENCY_KEY_PREFIX.name]
    {
        if vars.get(name).is_some() {
            warn!(
                variable = name,
                "set, but neither IDEMPOTENCY_TABLE nor IDEMPOTENCY_REDIS_URL is: idempotency is off"
            );
        }
    }
}

impl ConsumerConfig {
    /// The quarantine queue (its size limit given, or read from it, at start when `reach`
    /// says) with its S3 overflow for records too large for it.
    async fn quarantine(
        &self,
        clients: &ConsumerClients,
        reach: Reach,
    ) -> Result<SqsQuarantine, ReachError> {
        let queue = self.quarantine_queue.clone();
        let quarantine = match self.quarantine_max_message_bytes {
            Some(limit) => SqsQuarantine::new(clients.sqs.clone(), queue, limit),
            None => SqsQuarantine::reading_limit(clients.sqs.clone(), queue),
        };
        if reach == Reach::AtStart {
            let limit = quarantine.max_message_bytes().await.map_err(|source| {
                ReachError::QuarantineQueue {
                    queue: self.quarantine_queue.url().to_owned(),
                    source,
                }
            })?;
            info!(quarantine_max_message_bytes = limit, "quarantine queue read");
        }
        #[cfg(feature = "s3-overflow")]
        let quarantine = match &self.quarantine_overflow_bucket {
            Some(bucket) => quarantine.overflow(S3Overflow::new(clients.s3.clone(), bucket, "")),
            None => quarantine,
        };
        Ok(quarantine)
    }

    /// The batch processor's builder as batch-consumer and sqs-worker run it:
    /// `processor` with this configuration's quarantine queue (the queue's
    /// `MaximumMessageSize` from `QUARANTINE_MAX_MESSAGE_BYTES` or read from
    /// the queue; bodies too large for it to `QUARANTINE_OVERFLOW_BUCKET`),
    /// the source queue's visibility, its concurrency, margin, backoff and
    /// metrics, `handler_version` in quarantine records, and the idempotency
    /// store (whose claims last until the batch's deadline, or under a worker
    /// one visibility timeout at a time, renewed on its heartbeat).
    pub async fn consumer<P, B>(
        &self,
        processor: P,
        clients: &ConsumerClients,
        reach: Reach,
        handler_version: String,
    ) -> Result<Builder<P, ConsumerQuarantine, B>, ReachError> {
        let quarantine = self.quarantine(clients, reach).await?;
        let mut builder = BatchProcessor::builder(processor)
            .quarantine(ConsumerQuarantine(quarantine))
            .retries(clients.sqs.clone(), self.backoff)
            .concurrency(self.concurrency)
            .deadline_margin(self.deadline_margin)
            .metrics_namespace(self.namespace.clone())
            .handler_version(handler_version);
        if let Some(per_group) = self.max_in_flight_per_group {
            builder = builder.max_in_flight_per_group(per_group);
        }
        if let Some(envelope) = self.envelope {
            builder = builder.envelope(envelope);
        }
        #[cfg(feature = "offloaded-payloads")]
        if let Some(offloaded) = self.offloaded {
            let mut payloads = OffloadedPayloads::new(clients.s3.clone())
                .max_bytes(offloaded.max_bytes)
                .first_byte_timeout(offloaded.first_byte_timeout)
                .read_timeout(offloaded.read_timeout);
            if offloaded.delete_when_processed {
                payloads = payloads.delete_when_processed();
            }
            builder = builder.offloaded_payloads(payloads);
        }
        let Some(idempotency) = &self.idempotency else { return Ok(builder) };
        #[cfg(any(feature = "dynamodb", feature = "redis"))]
        let unreachable =
            |source| ReachError::IdempotencyStore { store: idempotency.store.describe(), source };
        match &idempotency.store {
            #[cfg(feature = "dynamodb")]
            StoreChoice::DynamoDb { table } => {
                let store = Idempotency::dynamodb(clients.dynamodb.clone(), table);
                if reach == Reach::AtStart {
                    store.check().await.map_err(unreachable)?;
                }
                Ok(builder.idempotency(idempotency.settings(store)))
            }
            #[cfg(feature = "redis")]
            StoreChoice::Redis { url } => {
                let store =
                    Idempotency::redis(url, "", self.api_call_timeout).map_err(unreachable)?;
                if reach == Reach::AtStart {
                    store.check().await.map_err(unreachable)?;
                }
                Ok(builder.idempotency(idempotency.settings(store)))
            }
            // The configuration refuses a store this build has not; this is its second line.
            #[allow(unreachable_patterns)]
            other => {
                let feature =
                    if matches!(other, StoreChoice::Redis { .. }) { "redis" } else { "dynamodb" };
                Err(ReachError::NotBuilt { store: other.describe(), feature })
            }
        }
    }
}
