//! [`Builder`]: how a [`BatchProcessor`] is put together, and why it may not be.

use std::marker::PhantomData;
use std::time::Duration;

#[cfg(feature = "sqs")]
use crate::backoff::Backoff;
#[cfg(feature = "sqs")]
use crate::backoff::policy::VisibilityPolicy;
use crate::batch_processor::BatchProcessor;
use crate::body::Body;
use crate::engine::{Engine, EngineSettings};
use crate::idempotency::Idempotency;
use crate::idempotency::guard::Guard;
#[cfg(feature = "offloaded-payloads")]
use crate::offloaded::OffloadedPayloads;
use crate::processor::Processor;
use crate::quarantine::NoQuarantine;
use crate::quarantine::QuarantineStore;
#[cfg(feature = "sqs")]
use crate::sqs::SqsVisibility;
use backpressure_core::envelope::Envelope;

/// Why a [`BatchProcessor`] cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// Zero messages in flight (in all, or per group) would process nothing.
    #[error("concurrency (and the per-group limit, when set) must be at least 1")]
    ZeroConcurrency,
}

/// Builds a [`BatchProcessor`]; see [`BatchProcessor::builder`].
#[derive(Debug)]
pub struct Builder<P, Q, B> {
    processor: P,
    quarantine: Q,
    settings: EngineSettings,
    #[cfg(feature = "sqs")]
    backoff: Option<Backoff>,
    #[cfg(feature = "sqs")]
    fifo_at_once: bool,
    #[cfg(feature = "sqs")]
    visibility: Option<SqsVisibility>,
    namespace: Option<String>,
    guard: Option<Guard>,
    per_group: Option<usize>,
    body: PhantomData<fn() -> B>,
}

impl<P, B> BatchProcessor<P, NoQuarantine, B> {
    /// A builder around `processor`, with the defaults: 32 messages (or FIFO
    /// groups) in flight, a 2 s deadline margin, no quarantine (a permanent
    /// failure is then reported as a batch item failure, and the queue's
    /// redrive policy moves it to the dead-letter queue after
    /// `maxReceiveCount`), no backoff, no metrics. The body type is inferred
    /// from the processor's `Processor<B>` implementation.
    pub fn builder(processor: P) -> Builder<P, NoQuarantine, B> {
        Builder::new(processor)
    }
}

impl<P, B> Builder<P, NoQuarantine, B> {
    pub(crate) fn new(processor: P) -> Self {
        Self {
            processor,
            quarantine: NoQuarantine,
            settings: EngineSettings {
                concurrency: 32,
                deadline_margin: Duration::from_secs(2),
                handler_version: format!("backpressure-batch/{}", env!("CARGO_PKG_VERSION")),
                envelope: None,
                #[cfg(feature = "offloaded-payloads")]
                offloaded: None,
            },
            #[cfg(feature = "sqs")]
            backoff: None,
            #[cfg(feature = "sqs")]
            fifo_at_once: false,
            #[cfg(feature = "sqs")]
            visibility: None,
            namespace: None,
            guard: None,
            per_group: None,
            body: PhantomData,
        }
    }
}

impl<P, Q, B> Builder<P, Q, B> {
    /// Where poison messages go: [`crate::quarantine::SqsQuarantine`] in production. Without
    /// one, a permanent failure is reported as a batch item failure and the
    /// queue's redrive policy takes it after `maxReceiveCount`.
    pub fn quarantine<Q2>(self, quarantine: Q2) -> Builder<P, Q2, B> {
        Builder {
            processor: self.processor,
            quarantine,
            settings: self.settings,
            #[cfg(feature = "sqs")]
            backoff: self.backoff,
            #[cfg(feature = "sqs")]
            fifo_at_once: self.fifo_at_once,
            #[cfg(feature = "sqs")]
            visibility: self.visibility,
            namespace: self.namespace,
            guard: self.guard,
            per_group: self.per_group,
            body: PhantomData,
        }
    }

    /// Every body comes in `envelope` (an SNS notification, an EventBridge
    /// event, an S3 notification): the body type decodes the message inside
    /// ([`crate::Message::payload`]), and the processor has the envelope's
    /// own fields at hand ([`crate::Message::delivery`]). A body that is not
    /// the envelope is quarantined as `invalid_envelope`; a message inside it
    /// that does not decode keeps its own code (`invalid_json`, …), its
    /// detail saying where it was. S3's test event is acknowledged unprocessed
    /// ([`crate::report::Outcome::Skipped`]).
    pub fn envelope(mut self, envelope: Envelope) -> Self {
        self.settings.envelope = Some(envelope);
        self
    }

    /// Reads payloads an SQS (or SNS) Extended Client offloaded to S3
    /// before they are decoded; see [`OffloadedPayloads`].
    #[cfg(feature = "offloaded-payloads")]
    #[cfg_attr(docsrs, doc(cfg(feature = "offloaded-payloads")))]
    pub fn offloaded_payloads(mut self, payloads: OffloadedPayloads) -> Self {
        self.settings.offloaded = Some(payloads);
        self
    }

    /// Claims each message's idempotency key ([`crate::Body::idempotency_key`])
    /// in `store` before its processor runs; see [`crate::idempotency`].
    pub fn idempotency(mut self, idempotency: Idempotency) -> Self {
        self.guard = Some(Guard::new(idempotency));
        self
    }

    /// Standard queues: retried messages come back after an exponential,
    /// jittered delay (`backoff`) instead of the queue's full visibility
    /// timeout, their visibility changed with `sqs`. A zero `backoff.base`
    /// leaves every retry to the visibility timeout.
    #[cfg(feature = "sqs")]
    #[cfg_attr(docsrs, doc(cfg(feature = "sqs")))]
    pub fn retries(mut self, sqs: aws_sdk_sqs::Client, backoff: Backoff) -> Self {
        self.backoff = Some(backoff);
        self.visibility = Some(SqsVisibility::new(sqs));
        self
    }

    /// FIFO queues: a retried message, and the rest of its group after it,
    /// visible again at once instead of after the queue's visibility timeout,
    /// with `sqs`: for the worker, which holds each group only while a batch of
    /// it is in work.
    #[cfg(feature = "sqs")]
    pub(crate) fn fifo_retries_at_once(mut self, sqs: aws_sdk_sqs::Client) -> Self {
        self.fifo_at_once = true;
        if self.visibility.is_none() {
            self.visibility = Some(SqsVisibility::new(sqs));
        }
        self
    }

    /// Messages in work at once, across every batch this processor runs at
    /// a time (a worker's polls, a Managed Instances function's concurrent
    /// invocations), so concurrent batches never multiply the load on the
    /// downstream; on a FIFO queue, each group's messages one after another.
    pub fn concurrency(mut self, concurrency: usize) -> Self {
        self.settings.concurrency = concurrency;
        self
    }

    /// No message starts, and work in flight is cut and retried, when less
    /// than this is left before the deadline.
    pub fn deadline_margin(mut self, margin: Duration) -> Self {
        self.settings.deadline_margin = margin;
        self
    }

    /// Written into every quarantine record, to tell which code gave up on a message.
    pub fn handler_version(mut self, version: impl Into<String>) -> Self {
        self.settings.handler_version = version.into();
        self
    }

    /// Standard queues whose messages carry a `MessageGroupId` (SQS fair
    /// queues: a group per tenant): at most this many messages of one group
    /// in work at once, across every batch of this processor, the other
    /// groups' messages started first. FIFO queues are unaffected.
    pub fn max_in_flight_per_group(mut self, per_group: usize) -> Self {
        self.per_group = Some(per_group);
        self
    }

    /// Emit the batch's counts as CloudWatch Embedded Metric Format documents
    /// on stdout, in this namespace.
    pub fn metrics_namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = Some(namespace.into());
        self
    }

    /// A worker's claims: leased for its visibility timeout, held in its
    /// lease table and renewed on its heartbeat, whatever lease the
    /// [`Idempotency`] settings gave.
    #[cfg(feature = "worker")]
    pub(crate) fn claims_renewed(
        mut self,
        lease: Duration,
        table: std::sync::Arc<crate::worker::leases::Leases>,
    ) -> Self {
        if let Some(guard) = self.guard.as_mut() {
            guard.renew_in(lease, table);
        }
        self
    }

    /// The namespace of the EMF metrics, when set.
    #[cfg(feature = "worker")]
    pub(crate) fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }

    /// The deadline margin: a worker's message timeout must exceed it.
    #[cfg(feature = "worker")]
    pub(crate) fn margin(&self) -> Duration {
        self.settings.deadline_margin
    }
}

impl<B: Body, P: Processor<B>, Q: QuarantineStore> Builder<P, Q, B> {
    /// The processor, or why the settings cannot work.
    pub fn build(self) -> Result<BatchProcessor<P, Q, B>, BuildError> {
        if self.settings.concurrency == 0 || self.per_group == Some(0) {
            return Err(BuildError::ZeroConcurrency);
        }
        #[cfg(feature = "sqs")]
        let policy = VisibilityPolicy {
            backoff: self.backoff.filter(|b| b.is_enabled()),
            fifo_at_once: self.fifo_at_once,
        };
        #[cfg(feature = "sqs")]
        // The client comes with every setting that needs it (`retries`, the worker's FIFO
        // release), so a policy is never without one.
        let visibility = match (policy.backoff.is_some() || policy.fifo_at_once, self.visibility) {
            // Retries contended by another consumer's claim wait out its lease.
            (false, Some(visibility)) if self.guard.is_some() => Some((policy, visibility)),
            (_, Some(visibility)) if policy.backoff.is_some() || policy.fifo_at_once => {
                Some((policy, visibility))
            }
            _ => None,
        };
        let mut engine = Engine::new(self.processor, self.quarantine, self.settings);
        if let Some(per_group) = self.per_group {
            engine = engine.with_group_limit(per_group);
        }
        Ok(BatchProcessor {
            engine: match self.guard {
                Some(guard) => engine.with_idempotency(guard),
                None => engine,
            },
            #[cfg(feature = "sqs")]
            visibility,
            namespace: self.namespace,
        })
    }
}
