//! The batch engine: every record of an SQS batch ends in exactly one
//! outcome — done, quarantined (write confirmed) or retry — and the response
//! lists exactly the retried messageIds. I/O is behind the `Processor` and
//! `QuarantineStore` traits. Records come in the source-neutral
//! [`SqsRecord`] form that a Lambda event record and a `ReceiveMessage`
//! message both convert into, so a Lambda function and a long-running worker
//! run the same engine.

use backpressure_core::sync::{into_inner, lock};
use std::borrow::Cow;
use std::marker::PhantomData;
use std::panic::AssertUnwindSafe;
use std::sync::Mutex;
use std::sync::atomic::Ordering;
use std::time::Duration;

use futures::{FutureExt, StreamExt, stream};
use tokio::sync::Semaphore;
use tokio::time::{Instant, sleep_until};
use tracing::{error, warn};

use crate::body::Body;
#[cfg(feature = "offloaded-payloads")]
use crate::engine::open::processed_offloads;
#[cfg(feature = "offloaded-payloads")]
use crate::engine::open::read_offloaded;
use crate::engine::open::{Payload, Unopened, open_all};
use crate::idempotency::guard::{BatchClaims, Claimed, Guard};
use crate::outcome::{Outcome, RetryCause};
use crate::processor::{Message, Processor};
use crate::quarantine::QuarantineStore;
use crate::record::{SourceQueue, SqsRecord};
use crate::report::batch_item_failures;
use crate::report::{BatchError, BatchReport, RecordOutcome};
use crate::schedule::{GroupLimits, admit, schedule};
use crate::settled::Settled;

/// How the engine runs a batch.
#[derive(Debug, Clone)]
pub(crate) struct EngineSettings {
    /// Messages in work at once, across every batch the engine runs at a
    /// time (a worker's polls, a Managed Instances function's invocations);
    /// on a FIFO queue each group's messages one after another.
    pub concurrency: usize,
    /// No message starts, and work in flight is cut, when less than this is left.
    pub deadline_margin: Duration,
    /// Written into quarantine records.
    pub handler_version: String,
    /// The envelope every body comes in; `None`: the body is the message.
    pub envelope: Option<backpressure_core::envelope::Envelope>,
    /// Reads payloads offloaded to S3.
    #[cfg(feature = "offloaded-payloads")]
    pub offloaded: Option<crate::offloaded::OffloadedPayloads>,
}

/// Time kept free after the quarantine writes, for the response itself.
const RESPONSE_RESERVE: Duration = Duration::from_millis(100);

/// Runs batches: decode, process (concurrently, FIFO groups in order),
/// quarantine, guard the deadline. Build one per process and reuse it.
#[derive(Debug)]
pub(crate) struct Engine<P, Q, B> {
    processor: P,
    quarantine: Q,
    settings: EngineSettings,
    guard: Option<Guard>,
    group_limits: Option<GroupLimits>,
    /// `settings.concurrency` permits: concurrent batches share the
    /// downstream's limit instead of multiplying it.
    in_work: Semaphore,
    body: PhantomData<fn() -> B>,
}

struct Batch<'e, 's, B> {
    records: &'e [SqsRecord],
    ids: Vec<&'e str>,
    /// Each record's message as published (its body, without an envelope).
    payloads: Vec<Payload<'e>>,
    bodies: Vec<Result<B, Unopened>>,
    claims: Option<BatchClaims>,
    /// Each record's place: `None` until a step settles it.
    slots: Vec<Mutex<Option<Settled>>>,
    fifo: bool,
    processing_deadline: Instant,
    /// Told of each record whose outcome is final and acknowledges it.
    on_acknowledged: &'s (dyn Fn(usize) + Sync),
}

impl<'e, B> Batch<'e, '_, B> {
    /// Each record's outcome; one no step settled (the deadline cut it, or
    /// its quarantine write never started) is retried.
    fn into_report(self, source: Option<SourceQueue>) -> BatchReport<'e> {
        let outcomes: Vec<RecordOutcome<'e>> = self
            .slots
            .into_iter()
            .zip(self.records.iter().zip(self.ids))
            .map(|(slot, (record, message_id))| {
                let outcome = match into_inner(slot) {
                    Some(Settled::Final(outcome)) => outcome,
                    None | Some(Settled::ToQuarantine { .. }) => Outcome::retry(
                        RetryCause::Deadline,
                        "not finished before the deadline guard",
                    ),
                };
                RecordOutcome { record, message_id, outcome }
            })
            .collect();
        let batch_item_failures = batch_item_failures(&outcomes);
        let idempotency_store_errors =
            self.claims.map_or(0, |claims| claims.store_errors.load(Ordering::Relaxed));
        BatchReport {
            outcomes,
            batch_item_failures,
            source,
            visibility_changes: Vec::new(),
            idempotency_store_errors,
        }
    }

    /// Puts `settled` in the record's place, and tells `on_acknowledged`
    /// when it acknowledges the record. A record already acknowledged (done
    /// before its completion was written) is not announced twice.
    fn settle(&self, index: usize, settled: Settled) {
        let newly = {
            let mut held = lock(&self.slots[index]);
            let was = held.as_ref().is_some_and(Settled::acknowledges);
            let now = settled.acknowledges();
            *held = Some(settled);
            now && !was
        };
        if newly {
            (self.on_acknowledged)(index);
        }
    }
}

impl<B: Body, P: Processor<B>, Q: QuarantineStore> Engine<P, Q, B> {
    /// An engine with its processor, its quarantine and its settings.
    pub(crate) fn new(processor: P, quarantine: Q, settings: EngineSettings) -> Self {
        let in_work = Semaphore::new(settings.concurrency.max(1));
        Self {
            processor,
            quarantine,
            settings,
            guard: None,
            group_limits: None,
            in_work,
            body: PhantomData,
        }
    }

    /// Claims each message's idempotency key before its processor runs.
    pub(crate) fn with_idempotency(mut self, mut guard: Guard) -> Self {
        guard.set_side_effect_timeout(self.processor.side_effect_timeout());
        self.guard = Some(guard);
        self
    }

    /// At most `per_group` messages of one `MessageGroupId` in work at once
    /// on standard queues, across every batch of this engine.
    pub(crate) fn with_group_limit(mut self, per_group: usize) -> Self {
        self.group_limits = Some(GroupLimits::new(per_group));
        self
    }

    pub(crate) fn guard(&self) -> Option<&Guard> {
        self.guard.as_ref()
    }

    /// The processor, for the tests that read the state kept in it.
    #[cfg(test)]
    pub(crate) fn processor(&self) -> &P {
        &self.processor
    }

    /// Runs one batch, every record settled before `deadline`, calling
    /// `on_acknowledged` with a record's index as soon as
    /// its outcome acknowledges it (done, or quarantined and confirmed), while
    /// the rest of the batch is still in work: a long-running consumer deletes
    /// it then, so a slow sibling or a drain never sends it round again.
    pub(crate) async fn run<'r, R: AsRef<[SqsRecord]> + ?Sized>(
        &self,
        records: &'r R,
        deadline: Instant,
        on_acknowledged: &(dyn Fn(usize) + Sync),
    ) -> Result<BatchReport<'r>, BatchError> {
        let records = records.as_ref();
        let ids = records
            .iter()
            .enumerate()
            .map(|(position, record)| {
                record.reportable_message_id().ok_or(BatchError::MissingMessageId { position })
            })
            .collect::<Result<Vec<&str>, _>>()
            .inspect_err(|e| error!(error = %e, "cannot report the batch item by item"))?;
        let source = records
            .iter()
            .find_map(|r| r.event_source_arn.as_deref())
            .and_then(SourceQueue::from_arn);
        let fifo = source.as_ref().is_some_and(SourceQueue::is_fifo);
        let now = Instant::now();
        let processing_deadline =
            deadline.checked_sub(self.settings.deadline_margin).unwrap_or(now).max(now);
        let (payloads, bodies) = open_all::<B>(&self.settings, records);
        let claims = match &self.guard {
            Some(guard) => {
                let keys = bodies.iter().filter_map(|b| b.as_ref().ok()?.idempotency_key());
                let queue = source.as_ref().map(|s| s.name.as_str());
                Some(guard.begin_batch(queue, keys, deadline, processing_deadline).await)
            }
            None => None,
        };
        #[cfg_attr(not(feature = "offloaded-payloads"), allow(unused_mut))]
        let mut batch = Batch {
            records,
            ids,
            payloads,
            bodies,
            claims,
            slots: records.iter().map(|_| Mutex::new(None)).collect(),
            fifo,
            processing_deadline,
            on_acknowledged,
        };

        self.work(&batch).await;
        self.quarantine_pending(&batch, deadline).await;
        #[cfg(feature = "offloaded-payloads")]
        if let Some(offloaded) = &self.settings.offloaded {
            let done = batch.slots.iter().map(|slot| {
                matches!(
                    *lock(slot),
                    Some(Settled::Final(Outcome::Done | Outcome::Duplicate { .. }))
                )
            });
            offloaded
                .delete_processed(processed_offloads(done, &mut batch.payloads), deadline)
                .await;
        }
        Ok(batch.into_report(source))
    }

    /// Every message worked on, each FIFO group in order, until all are
    /// settled or the processing deadline cuts the rest.
    async fn work(&self, batch: &Batch<'_, '_, B>) {
        let records = batch.records;
        let fifo = batch.fifo;
        let limits = self.group_limits.as_ref();
        let (order, groups) = schedule(records, fifo, limits);
        let work = stream::iter(groups)
            .map(|group| async {
                let _slot = admit(limits, &records[order[group.start]], fifo).await;
                self.run_group(batch, &order[group]).await;
            })
            .buffer_unordered(self.settings.concurrency.max(1))
            .for_each(|()| async {});
        tokio::select! {
            () = work => {}
            () = sleep_until(batch.processing_deadline) => {
                warn!(margin_ms = self.settings.deadline_margin.as_millis() as u64,
                      "deadline guard: unfinished messages are cut and retried");
            }
        }
    }

    /// One message group in order (FIFO), or one message (standard queue).
    async fn run_group(&self, batch: &Batch<'_, '_, B>, group: &[usize]) {
        for (position, &index) in group.iter().enumerate() {
            if Instant::now() >= batch.processing_deadline {
                return;
            }
            let settled = self.handle(batch, index).await;
            let failed = matches!(&settled, Settled::Final(outcome) if outcome.is_retry());
            batch.settle(index, settled);
            if failed && batch.fifo {
                let blocked_by = batch.ids[index];
                for &later in &group[position + 1..] {
                    *lock(&batch.slots[later]) = Some(Settled::Final(Outcome::retry(
                        RetryCause::GroupBlocked,
                        format!(
                            "message {blocked_by} earlier in its group failed; FIFO order keeps this one back"
                        ),
                    )));
                }
                return;
            }
        }
    }

    /// The message's idempotency claim, when the processor has a store: none
    /// without a key the policy lets through, or the settlement that stands
    /// in for processing (a duplicate, a contended or unreadable key).
    async fn claim<'g>(
        &'g self,
        batch: &'g Batch<'_, '_, B>,
        index: usize,
        key: Option<&str>,
        text: &str,
    ) -> Result<Option<(&'g Guard, &'g BatchClaims, Claimed)>, Settled> {
        let (Some(guard), Some(claims)) = (&self.guard, &batch.claims) else { return Ok(None) };
        let record = &batch.records[index];
        let entry = record.receipt_handle.as_deref().unwrap_or(batch.ids[index]);
        let claim = guard.begin(claims, key, text, batch.ids[index], entry).await?;
        Ok(claim.map(|claim| (guard, claims, claim)))
    }

    async fn handle(&self, batch: &Batch<'_, '_, B>, index: usize) -> Settled {
        let record = &batch.records[index];
        let message_id = batch.ids[index];
        let body = record.body.as_deref().unwrap_or_default();
        let payload = &batch.payloads[index];
        #[cfg(feature = "offloaded-payloads")]
        let read: (String, B);
        let (text, request): (&str, &B) = match &batch.bodies[index] {
            Ok(request) => (&payload.text, request),
            #[cfg(feature = "offloaded-payloads")]
            Err(Unopened::Unread) => {
                match read_offloaded(&self.settings, payload, batch.processing_deadline).await {
                    Ok(fetched) => {
                        read = fetched;
                        (&read.0, &read.1)
                    }
                    Err(unopened) => return self.unopened(batch, index, unopened).await,
                }
            }
            Err(unopened) => return self.unopened(batch, index, unopened.clone()).await,
        };
        let message = Message {
            message_id,
            body,
            payload: text,
            delivery: payload.delivery.as_ref(),
            decoded: request,
            record,
            deadline: batch.processing_deadline,
            claim_lapse: None,
        };
        let labels = self.processor.labels(&message);
        let quarantine_labels = || match &labels {
            Some(labels) => labels.clone(),
            None => request.labels(),
        };
        let key = match &labels {
            Some(labels) => labels.idempotency_key.as_deref().map(Cow::Borrowed),
            None => request.idempotency_key(),
        };
        let claim = match self.claim(batch, index, key.as_deref(), text).await {
            Ok(claim) => claim,
            Err(Settled::ToQuarantine { code, detail, .. }) => {
                return self.permanent(batch, index, code, detail, quarantine_labels()).await;
            }
            Err(settled) => return settled,
        };
        let message =
            Message { claim_lapse: claim.as_ref().map(|(_, _, claim)| claim.lapse()), ..message };
        // Called inside the future, so a closure that panics before its own
        // future exists is caught too.
        let work = AssertUnwindSafe(async {
            // The semaphore is never closed, so a permit always comes.
            let _permit = self.in_work.acquire().await.ok();
            self.processor.process(&message).await
        })
        .catch_unwind();
        let verdict = match claim {
            None => work.await,
            Some((guard, claims, claim)) => {
                let done = || batch.settle(index, Settled::Final(Outcome::Done));
                match guard.run(claims, claim, work, done).await {
                    Some(verdict) => verdict,
                    None => {
                        return Settled::Final(Outcome::retry(
                            RetryCause::Deadline,
                            "its idempotency claim's lease lapsed unrenewed before the work finished",
                        ));
                    }
                }
            }
        };
        self.settle_verdict(batch, index, verdict, quarantine_labels).await
    }
}

pub(crate) mod open;
mod quarantining;
mod verdict;

#[cfg(test)]
mod tests;
