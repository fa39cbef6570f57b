//! Where a replayed message goes: `--to`, else the queue its record names,
//! else the one queue whose redrive policy points at this dead-letter queue.

use std::collections::HashMap;

use tokio::sync::Mutex;

use aws_smithy_types::error::metadata::ProvideErrorMetadata;

use crate::aws::queue::Queue;
use crate::reading::entry::Entry;
use crate::terminal::error::CliError;
use crate::terminal::explain::{answered, is_missing_queue};

#[derive(Debug)]
pub(crate) struct Destinations {
    template: Queue,
    to: Option<String>,
    /// The dead-letter queue's only source queue, when it has exactly one.
    only_source: Option<String>,
    /// Queue URLs by ARN, looked up once.
    urls: Mutex<HashMap<String, Result<String, String>>>,
}

impl Destinations {
    /// `source` lends its client and settings to the destination queues.
    pub(crate) async fn new(source: &Queue, to: Option<String>) -> Self {
        let only_source = if to.is_some() {
            None
        } else {
            match source.dead_letter_sources().await {
                Ok(urls) if urls.len() == 1 => urls.into_iter().next(),
                Ok(_) => None,
                Err(error) => {
                    tracing::debug!(%error, "no dead-letter source queues known");
                    None
                }
            }
        };
        Self { template: source.clone(), to, only_source, urls: Mutex::new(HashMap::new()) }
    }

    /// The queue every message goes to when that is known before any is
    /// read: `--to`, or the dead-letter queue's only source queue.
    pub(crate) fn known_before_reading(&self) -> Option<Queue> {
        let url = self.to.clone().or_else(|| self.only_source.clone())?;
        Some(Queue { url, ..self.template.clone() })
    }

    /// The queue `entry` goes back to, or why there is none.
    pub(crate) async fn resolve(&self, entry: &Entry) -> Result<Queue, String> {
        let url = match (&self.to, &entry.source_queue_arn, &self.only_source) {
            (Some(to), _, _) => to.clone(),
            (None, Some(arn), _) => {
                let mut urls = self.urls.lock().await;
                if !urls.contains_key(arn) {
                    let url = crate::aws::connect::url_of_arn(
                        &self.template.client,
                        "sourceQueueArn",
                        arn,
                    )
                    .await
                    .map_err(|e| source_not_found(arn, e));
                    urls.insert(arn.clone(), url);
                }
                urls.get(arn).cloned().unwrap_or_else(|| Err("lookup lost".into()))?
            }
            (None, None, Some(only)) => only.clone(),
            (None, None, None) => {
                return Err("no source queue known (no sourceQueueArn, and not the dead-letter \
                            queue of exactly one queue): give --to <queue URL>"
                    .into());
            }
        };
        Ok(Queue { url, ..self.template.clone() })
    }
}

/// Why the queue a record names as its source (`arn`) cannot be sent to: when
/// it is gone, that, what SQS said, and `--to` as the way round it.
fn source_not_found(arn: &str, error: CliError) -> String {
    if let CliError::Sqs { source, .. } = &error
        && source.code().is_some_and(is_missing_queue)
        && let Some(answer) = answered(source.as_ref())
    {
        return format!(
            "its source queue {arn} is gone (GetQueueUrl answered {answer}): give --to <queue URL> \
             to send such messages elsewhere"
        );
    }
    error.to_string()
}

#[cfg(test)]
mod tests {
    use aws_sdk_sqs::error::ErrorMetadata;
    use aws_sdk_sqs::types::error::QueueDoesNotExist;

    use super::*;

    /// A record's source queue that is gone: said once, SQS's code and
    /// message once, and `--to` to send elsewhere.
    #[test]
    fn a_source_queue_that_is_gone_points_at_to() {
        let arn = "arn:aws:sqs:eu-west-1:123456789012:orders";
        let code = "AWS.SimpleQueueService.NonExistentQueue";
        let meta = ErrorMetadata::builder()
            .code(code)
            .message("The specified queue does not exist.")
            .build();
        let gone = QueueDoesNotExist::builder()
            .message("The specified queue does not exist.")
            .meta(meta)
            .build();
        let error = CliError::sqs("GetQueueUrl", arn, aws_sdk_sqs::Error::QueueDoesNotExist(gone));
        let said = source_not_found(arn, error);
        assert_eq!(said.matches(code).count(), 1, "{said}");
        insta::assert_snapshot!(said);
    }
}
