//! What a processor is given and what it is: one decoded message in, one
//! [`Verdict`] out. A struct with [`Processor`] implemented, or a closure.

use std::future::Future;

use std::time::Duration;

use tokio::time::Instant;

use backpressure_core::envelope::Delivery;

use crate::body::Labels;
use crate::outcome::{IntoVerdict, Verdict};
use crate::record::SqsRecord;

/// One message, as a processor sees it: its body already decoded and checked.
#[derive(Debug)]
pub struct Message<'a, B> {
    /// The SQS messageId.
    pub message_id: &'a str,
    /// The body exactly as it was sent.
    pub body: &'a str,
    /// The message as its producer published it: the body itself, or what
    /// was inside its envelope (SNS's `Message`, EventBridge's `detail`), or
    /// the payload read from S3 when the body pointed at one. `decoded` is
    /// this, decoded.
    pub payload: &'a str,
    /// What the envelope said of the message's delivery (SNS's `MessageId`
    /// and topic, EventBridge's `source` and `detail-type`); `None` without one.
    pub delivery: Option<&'a Delivery>,
    /// The body decoded ([`crate::Body::decode`]).
    pub decoded: &'a B,
    /// The whole record: attributes, message attributes, receipt handle.
    pub record: &'a SqsRecord,
    /// Work on this message must be over by then: the engine cuts it off and
    /// retries the message after it.
    pub deadline: Instant,
    /// When the message's idempotency claim lapses unless it is renewed
    /// (`None` without a claim). Another consumer may claim the key then, so
    /// a side effect still under way could be done twice: start none that
    /// could run past it, and return [`Verdict::retry`] instead (the message
    /// comes back to be claimed again).
    pub claim_lapse: Option<Instant>,
}

/// The business logic: one message in, one verdict out. `B` is the body type
/// the messages decode into.
pub trait Processor<B>: Send + Sync {
    /// Processes one message. A panic is caught and retries only this message.
    fn process(&self, message: &Message<'_, B>) -> impl Future<Output = Verdict> + Send;

    /// The message's labels when the processor knows them better than the
    /// body does (a forwarder configured to find the key in a message
    /// attribute, say): `Some` replaces the body's idempotency key, tenant
    /// and operation ([`crate::JsonBody`]) for the claim and the quarantine
    /// record. `None` (the default) leaves them to the body.
    fn labels(&self, message: &Message<'_, B>) -> Option<Labels> {
        let _ = message;
        None
    }

    /// The longest one side effect of [`Processor::process`] may take once it
    /// has started (an HTTP request's timeout, say). A worker's idempotency
    /// claims are leased for at least this and a margin, so that a side effect
    /// started as soon as its claim is taken ends before the claim can lapse,
    /// even with no renewal. `None` (the default): claims are leased for the
    /// visibility timeout alone.
    fn side_effect_timeout(&self) -> Option<Duration> {
        None
    }
}

/// A closure is a processor: `|message: &Message<'_, Order>| { … async move { … } }`.
/// Its future must not borrow the message (clone what it needs from it);
/// it may return a [`Verdict`] or a `Result<(), E>` with `E: Into<Verdict>`.
impl<B, F, Fut> Processor<B> for F
where
    F: Fn(&Message<'_, B>) -> Fut + Send + Sync,
    Fut: Future + Send,
    Fut::Output: IntoVerdict,
{
    fn process(&self, message: &Message<'_, B>) -> impl Future<Output = Verdict> + Send {
        let work = self(message);
        async move { work.await.into_verdict() }
    }
}

/// What a caught panic said, for the logs.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-text panic payload".to_owned())
}
