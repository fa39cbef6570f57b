//! The processor's answer, or its panic, as its message's settlement.

use std::any::Any;

use tracing::{error, warn};

use super::{Batch, Engine};
use crate::body::{Body, Labels};
use crate::outcome::{Outcome, RetryCause, Verdict};
use crate::processor::{Processor, panic_message};
use crate::quarantine::QuarantineStore;
use crate::settled::Settled;

impl<B: Body, P: Processor<B>, Q: QuarantineStore> Engine<P, Q, B> {
    /// Done, retried with the processor's detail, quarantined (with
    /// `labels`), or retried after a panic: only this message.
    pub(super) async fn settle_verdict(
        &self,
        batch: &Batch<'_, '_, B>,
        index: usize,
        verdict: Result<Verdict, Box<dyn Any + Send>>,
        labels: impl FnOnce() -> Labels,
    ) -> Settled {
        let message_id = batch.ids[index];
        match verdict {
            Ok(Verdict::Done | Verdict::DoneWith { .. }) => Settled::Final(Outcome::Done),
            Ok(Verdict::Retry { detail, retry_after }) => {
                warn!(message_id, detail = %detail, "message will be retried");
                Settled::Final(Outcome::Retry { cause: RetryCause::Processor, detail, retry_after })
            }
            Ok(Verdict::Permanent { code, detail }) => {
                self.permanent(batch, index, code, detail, labels()).await
            }
            Err(panic) => {
                let detail = panic_message(panic.as_ref());
                error!(message_id, panic = %detail, "the processor panicked; the message will be retried");
                Settled::Final(Outcome::retry(
                    RetryCause::Panicked,
                    format!("the processor panicked: {detail}"),
                ))
            }
        }
    }
}
