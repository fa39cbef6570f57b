//! The engine's quarantine step: a permanent failure becomes a record, and
//! its slot is final only once the quarantine store confirmed the write.

use std::time::SystemTime;

use tokio::time::{Instant, timeout_at};
use tracing::{error, warn};

use super::{Batch, Engine, RESPONSE_RESERVE, lock};
use crate::body::{Body, Labels};
use crate::outcome::{ErrorCode, Outcome};
use crate::processor::Processor;
use crate::quarantine::{QuarantineError, QuarantineRecord, QuarantineStore, record_for};
use crate::settled::Settled;
use backpressure_core::error::error_chain;

impl<B: Body, P: Processor<B>, Q: QuarantineStore> Engine<P, Q, B> {
    /// A permanent failure is quarantined at once on FIFO queues (the rest of
    /// its group waits for the write) and after processing on standard queues
    /// (in batches of ten).
    pub(super) async fn permanent(
        &self,
        batch: &Batch<'_, '_, B>,
        index: usize,
        code: ErrorCode,
        detail: String,
        labels: Labels,
    ) -> Settled {
        warn!(message_id = batch.ids[index], error_code = %code, detail = %detail, "permanent failure");
        if !batch.fifo {
            return Settled::ToQuarantine { code, detail, labels };
        }
        let record = self.quarantine_record(batch, index, &code, &detail, &labels);
        let result = self.quarantine.store(std::slice::from_ref(&record)).await.into_iter().next();
        let result = result.unwrap_or(Err(QuarantineError::Unreported));
        self.confirmed(batch.ids[index], code, &detail, result)
    }

    fn quarantine_record(
        &self,
        batch: &Batch<'_, '_, B>,
        index: usize,
        code: &ErrorCode,
        detail: &str,
        labels: &Labels,
    ) -> QuarantineRecord {
        let record = &batch.records[index];
        let version = &self.settings.handler_version;
        record_for(record, code, detail, labels, version, SystemTime::now())
    }

    /// `detail` is the processor's own account of the failure, kept ahead of
    /// why the write failed: an embedder reading the outcome needs both.
    fn confirmed(
        &self,
        message_id: &str,
        code: ErrorCode,
        detail: &str,
        result: Result<(), QuarantineError>,
    ) -> Settled {
        match result {
            Ok(()) => Settled::Final(Outcome::Quarantined { code }),
            Err(e) => {
                error!(message_id, error_code = %code, error = %error_chain(&e),
                       "quarantine write not confirmed; the message will be retried");
                let detail = match detail {
                    "" => format!("{code}, not quarantined: {e}"),
                    detail => format!("{detail} (not quarantined: {e})"),
                };
                Settled::Final(Outcome::QuarantineFailed { detail, code })
            }
        }
    }

    /// Standard queues: the permanent failures, written in batches once
    /// processing is over, bounded by the invocation's deadline.
    pub(super) async fn quarantine_pending(&self, batch: &Batch<'_, '_, B>, deadline: Instant) {
        // Which slot and code each record belongs to, kept apart so the records
        // (which carry whole bodies) are built once and never copied.
        let mut pending = Vec::new();
        let mut records = Vec::new();
        for (index, slot) in batch.slots.iter().enumerate() {
            if let Some(Settled::ToQuarantine { code, detail, labels }) = &*lock(slot) {
                records.push(self.quarantine_record(batch, index, code, detail, labels));
                pending.push((index, code.clone(), detail.clone()));
            }
        }
        if pending.is_empty() {
            return;
        }
        let reserve_deadline = deadline.checked_sub(RESPONSE_RESERVE).unwrap_or(deadline);
        let results = timeout_at(reserve_deadline, self.quarantine.store(&records))
            .await
            .unwrap_or_else(|_| vec![Err(QuarantineError::Deadline); records.len()]);
        let mut results = results.into_iter();
        for (index, code, detail) in pending {
            let result = results.next().unwrap_or(Err(QuarantineError::Unreported));
            batch.settle(index, self.confirmed(batch.ids[index], code, &detail, result));
        }
    }
}
