//! The queue a record came from, read from its `eventSourceARN`.

use backpressure_core::queue::{QueueArn, QueueKind};

/// The source queue, from a record's `eventSourceARN`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SourceQueue {
    /// The ARN as given.
    pub arn: String,
    /// The queue's region.
    pub region: String,
    /// The owning account.
    pub account: String,
    /// The queue's name.
    pub name: String,
    url: String,
}

impl SourceQueue {
    /// `arn:{partition}:sqs:{region}:{account}:{name}`, or `None`.
    pub(crate) fn from_arn(arn: &str) -> Option<Self> {
        let parsed = QueueArn::parse(arn).ok()?;
        Some(Self {
            arn: arn.to_owned(),
            region: parsed.region().to_owned(),
            account: parsed.account().to_owned(),
            name: parsed.name().to_owned(),
            url: parsed.url(),
        })
    }

    /// A `.fifo` queue keeps message group order.
    pub(crate) fn is_fifo(&self) -> bool {
        QueueKind::of_name(&self.name) == QueueKind::Fifo
    }

    /// The queue URL for API calls on it (such as `ChangeMessageVisibilityBatch`).
    pub(crate) fn url(&self) -> String {
        self.url.clone()
    }
}
