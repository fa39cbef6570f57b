//! Before a body is decoded: its envelope opened ([`Envelope`]) and a
//! payload offloaded to S3 fetched, so the body type sees the message as its
//! producer published it. What cannot be opened is settled here: quarantined
//! when it never can be, retried when it may be later, skipped when there is
//! nothing in it (S3's test event).

use std::borrow::Cow;

#[cfg(feature = "offloaded-payloads")]
use backpressure_core::envelope::S3Pointer;
use backpressure_core::envelope::{Delivery, Envelope};

use crate::body::ContractViolation;
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
pub(crate) fn open(
    envelope: Option<Envelope>,
    record: &SqsRecord,
) -> (Payload<'_>, Option<Unopened>) {
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
pub(crate) fn inside(
    envelope: Option<Envelope>,
    mut violation: ContractViolation,
) -> ContractViolation {
    let layer = match envelope {
        Some(Envelope::Sns) => "the SNS Message",
        Some(Envelope::EventBridge) => "the EventBridge detail",
        _ => return violation,
    };
    violation.detail = format!("in {layer}: {}", violation.detail);
    violation
}
