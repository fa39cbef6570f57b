//! Before a body is decoded: its envelope opened ([`Envelope`]) and a
//! payload offloaded to S3 fetched, so the body type sees the message as its
//! producer published it. What cannot be opened is settled here: quarantined
//! when it never can be, retried when it may be later, skipped when there is
//! nothing in it (S3's test event). An offloaded payload is read when its
//! message's turn comes, not before the batch starts: a slow object then
//! holds only its own message.

use std::borrow::Cow;

#[cfg(feature = "offloaded-payloads")]
use backpressure_core::envelope::S3Pointer;
use backpressure_core::envelope::{Delivery, Envelope};

#[cfg(feature = "offloaded-payloads")]
use tokio::time::Instant;
use tracing::warn;

use super::{Batch, Engine, EngineSettings};
use crate::body::{Body, ContractViolation};
use crate::outcome::{ErrorCode, Outcome, RetryCause};
use crate::processor::Processor;
use crate::quarantine::QuarantineStore;
use crate::record::SqsRecord;
use crate::settled::Settled;

/// A record's message as published, and what its envelope said of it.
#[derive(Debug)]
pub(crate) struct Payload<'e> {
    pub(crate) text: Cow<'e, str>,
    pub(crate) delivery: Option<Delivery>,
    /// The S3 object the text was read from, for its deletion once processed.
    #[cfg(feature = "offloaded-payloads")]
    pub(crate) offloaded: Option<S3Pointer>,
}

/// Why a record has no message to decode.
#[derive(Debug, Clone)]
pub(crate) enum Unopened {
    /// It never will have: quarantined.
    Quarantine(ContractViolation),
    /// Not now (its offloaded payload could not be read): retried.
    Retry(String),
    /// There is nothing in it to process: acknowledged.
    Skip,
    /// Its payload is in S3 ([`Payload::offloaded`]), read when its turn comes.
    #[cfg(feature = "offloaded-payloads")]
    Unread,
}

/// Opens `record`'s envelope; the body itself without one.
fn open(envelope: Option<Envelope>, record: &SqsRecord) -> (Payload<'_>, Option<Unopened>) {
    let body = record.body.as_deref().unwrap_or_default();
    let payload = |text, delivery| Payload {
        text,
        delivery,
        #[cfg(feature = "offloaded-payloads")]
        offloaded: None,
    };
    let Some(envelope) = envelope else { return (payload(Cow::Borrowed(body), None), None) };
    match envelope.open(body) {
        Ok(opened) => {
            let mut delivery = opened.delivery;
            if delivery.is_test_event() {
                return (payload(Cow::Borrowed(body), Some(delivery)), Some(Unopened::Skip));
            }
            // Raw delivery passes SNS's message attributes on as the message's own.
            if let (Envelope::SnsRaw, Delivery::Sns { attributes, .. }) = (envelope, &mut delivery)
            {
                attributes.extend(record.message_attributes.keys().filter_map(|name| {
                    Some((name.clone(), record.message_attribute(name)?.to_owned()))
                }));
            }
            (payload(opened.payload, Some(delivery)), None)
        }
        Err(error) => {
            let violation = ContractViolation::new(ErrorCode::InvalidEnvelope, error.to_string());
            (payload(Cow::Borrowed(body), None), Some(Unopened::Quarantine(violation)))
        }
    }
}

/// A violation found inside an envelope, its detail saying so: the code is
/// the payload's own (`invalid_json`, `schema_violation`, …), the envelope's
/// failure being `invalid_envelope`.
fn inside(envelope: Option<Envelope>, mut violation: ContractViolation) -> ContractViolation {
    let layer = match envelope {
        Some(Envelope::Sns) => "the SNS Message",
        Some(Envelope::EventBridge) => "the EventBridge detail",
        _ => return violation,
    };
    violation.detail = format!("in {layer}: {}", violation.detail);
    violation
}

/// Decodes `text`; a violation inside an envelope says so, and so does one
/// of a body that is plainly another service's wrapper no envelope was set for.
fn decode<B: Body>(envelope: Option<Envelope>, text: &str) -> Result<B, Unopened> {
    B::decode(text).map_err(|violation| {
        let violation = match envelope {
            None => unset_wrapper(violation, text),
            Some(_) => inside(envelope, violation),
        };
        Unopened::Quarantine(violation)
    })
}

/// A violation of a body that is another service's wrapper (an SNS
/// notification, an EventBridge event, an S3 notification) with no envelope
/// set: the detail names the wrapper and the setting that opens it, since
/// every message of such a queue would fail the same way.
fn unset_wrapper(mut violation: ContractViolation, text: &str) -> ContractViolation {
    let Some(wrapper) = Envelope::detect(text) else { return violation };
    let what = match wrapper {
        Envelope::Sns | Envelope::SnsRaw => "an SNS notification",
        Envelope::EventBridge => "an EventBridge event",
        Envelope::S3 => "an S3 event notification",
        _ => "another service's wrapper",
    };
    violation.detail = format!(
        "{}; the body is {what}: set ENVELOPE={} (Builder::envelope in the library) to decode \
         the message inside it",
        violation.detail,
        wrapper.name()
    );
    violation
}

/// Every record opened and decoded: each record's payload, and its body or
/// why it has none. A pointer to an offloaded payload is left
/// [`Unopened::Unread`], for [`read_offloaded`] in the message's turn.
pub(crate) fn open_all<'r, B: Body>(
    settings: &EngineSettings,
    records: &'r [SqsRecord],
) -> (Vec<Payload<'r>>, Vec<Result<B, Unopened>>) {
    let envelope = settings.envelope;
    let (payloads, bodies) = records
        .iter()
        .map(|record| {
            #[cfg_attr(not(feature = "offloaded-payloads"), allow(unused_mut))]
            let (mut payload, unopened) = open(envelope, record);
            let body = match unopened {
                Some(unopened) => Err(unopened),
                #[cfg(feature = "offloaded-payloads")]
                None if settings.offloaded.is_some() => match S3Pointer::parse(&payload.text) {
                    Some(pointer) => {
                        payload.offloaded = Some(pointer);
                        Err(Unopened::Unread)
                    }
                    None => decode(envelope, &payload.text),
                },
                None => decode(envelope, &payload.text),
            };
            (payload, body)
        })
        .unzip();
    (payloads, bodies)
}

/// The offloaded payload of an [`Unopened::Unread`] record, read (none past
/// `deadline`) and decoded: its text and its body, or why it has none.
#[cfg(feature = "offloaded-payloads")]
pub(crate) async fn read_offloaded<B: Body>(
    settings: &EngineSettings,
    payload: &Payload<'_>,
    deadline: Instant,
) -> Result<(String, B), Unopened> {
    let (Some(offloaded), Some(pointer)) = (&settings.offloaded, &payload.offloaded) else {
        return Err(Unopened::Retry("its offloaded payload has no reader".into()));
    };
    let text = offloaded.fetch(pointer, deadline).await?;
    let body = decode(settings.envelope, &text)?;
    Ok((text, body))
}

impl<B: Body, P: Processor<B>, Q: QuarantineStore> Engine<P, Q, B> {
    /// A record without a message to process: quarantined, retried or skipped.
    pub(super) async fn unopened(
        &self,
        batch: &Batch<'_, '_, B>,
        index: usize,
        unopened: Unopened,
    ) -> Settled {
        match unopened {
            Unopened::Quarantine(ContractViolation { code, detail, labels }) => {
                self.permanent(batch, index, code, detail, labels).await
            }
            Unopened::Retry(detail) => {
                warn!(message_id = batch.ids[index], detail = %detail, "message will be retried");
                Settled::Final(Outcome::retry(RetryCause::OffloadedPayload, detail))
            }
            Unopened::Skip => Settled::Final(Outcome::Skipped),
            #[cfg(feature = "offloaded-payloads")]
            Unopened::Unread => Settled::Final(Outcome::retry(
                RetryCause::OffloadedPayload,
                "its offloaded payload was not read",
            )),
        }
    }
}

/// The S3 objects of the records `done` says were processed (or duplicates).
#[cfg(feature = "offloaded-payloads")]
pub(crate) fn processed_offloads(
    done: impl Iterator<Item = bool>,
    payloads: &mut [Payload<'_>],
) -> Vec<S3Pointer> {
    done.zip(payloads.iter_mut())
        .filter(|(done, _)| *done)
        .filter_map(|(_, payload)| payload.offloaded.take())
        .collect()
}
