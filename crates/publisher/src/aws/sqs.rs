use crate::QueueCounts;
use crate::services::QueueAttributes;
use aws_sdk_sqs::Client;
use aws_sdk_sqs::types::QueueAttributeName;
use backpressure_core::error::ApiError;
use backpressure_core::queue::QueueRef;
use backpressure_startup::LazyClient;

#[derive(Debug, Clone)]
pub struct SqsQueues {
    client: LazyClient<Client>,
}

impl SqsQueues {
    pub fn new(client: impl Into<LazyClient<Client>>) -> Self {
        Self { client: client.into() }
    }
}

const OPERATION: &str = "GetQueueAttributes";

impl SqsQueues {
    /// The queue's counts and redrive policy, from one `GetQueueAttributes` call.
    pub async fn queue_attributes(&self, queue: &QueueRef) -> Result<QueueAttributes, ApiError> {
        let output = self
            .client
            .get()
            .get_queue_attributes()
            .queue_url(queue.url())
            .attribute_names(QueueAttributeName::ApproximateNumberOfMessages)
            .attribute_names(QueueAttributeName::ApproximateNumberOfMessagesNotVisible)
            .attribute_names(QueueAttributeName::ApproximateNumberOfMessagesDelayed)
            .attribute_names(QueueAttributeName::RedrivePolicy)
            .send()
            .await
            .map_err(|e| ApiError::new(OPERATION, e))?;
        let attributes = output.attributes.unwrap_or_default();
        // A missing or unreadable count must not become 0: that is a measurement.
        let count = |name: QueueAttributeName| -> Result<u64, ApiError> {
            let value = attributes.get(&name).ok_or_else(|| {
                ApiError::new(OPERATION, format!("the response has no {}", name.as_str()))
            })?;
            value.parse().map_err(|_| {
                ApiError::new(OPERATION, format!("{} is {value:?}, not a count", name.as_str()))
            })
        };
        Ok(QueueAttributes {
            counts: QueueCounts {
                visible: count(QueueAttributeName::ApproximateNumberOfMessages)?,
                in_flight: count(QueueAttributeName::ApproximateNumberOfMessagesNotVisible)?,
                delayed: count(QueueAttributeName::ApproximateNumberOfMessagesDelayed)?,
            },
            redrive_policy: attributes.get(&QueueAttributeName::RedrivePolicy).cloned(),
        })
    }
}
