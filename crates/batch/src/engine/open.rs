//! Before a body is decoded: its envelope opened ([`Envelope`]) and a
//! payload offloaded to S3 fetched, so the body type sees the message as its
//! producer published it. What cannot be opened is settled here: quarantined
//! when it never can be, retried when it may be later, skipped when there is
//! nothing in it (S3's test event).

use std::borrow::Cow;

#[cfg(feature = "offloaded-payloads")]
use backpressure_core::envelope::S3Pointer;
use backpressure_core::envelope::{Delivery, Envelope};

use tokio::time::Instant;

use crate::body::{Body, ContractViolation};
use crate::engine::EngineSettings;
use crate::event::SqsRecord;
use crate::outcome::ErrorCode;

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

/// Every record opened, its offloaded payload read (none past `deadline`),
/// and decoded: each record's payload, and its body or why it has none.
pub(crate) async fn open_all<'r, B: Body>(
    settings: &EngineSettings,
    records: &'r [SqsRecord],
    deadline: Instant,
) -> (Vec<Payload<'r>>, Vec<Result<B, Unopened>>) {
    let envelope = settings.envelope;
    #[cfg_attr(not(feature = "offloaded-payloads"), allow(unused_mut))]
    let (mut payloads, mut unopened): (Vec<Payload<'r>>, Vec<Option<Unopened>>) =
        records.iter().map(|record| open(envelope, record)).unzip();
    #[cfg(feature = "offloaded-payloads")]
    if let Some(offloaded) = &settings.offloaded {
        offloaded.fetch_all(&mut payloads, &mut unopened, deadline, settings.concurrency).await;
    }
    #[cfg(not(feature = "offloaded-payloads"))]
    let _ = deadline;
    let bodies = payloads
        .iter()
        .zip(unopened)
        .map(|(payload, unopened)| match unopened {
            Some(unopened) => Err(unopened),
            None => B::decode(&payload.text)
                .map_err(|violation| Unopened::Quarantine(inside(envelope, violation))),
        })
        .collect();
    (payloads, bodies)
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
