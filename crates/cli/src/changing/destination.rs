//! Where a replayed message goes: `--to`, else the queue its record names,
//! else the one queue whose redrive policy points at this dead-letter queue.

use std::collections::HashMap;

use tokio::sync::Mutex;

use crate::aws::queue::Queue;
use crate::reading::entry::Entry;

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
                    .map_err(|e| e.to_string());
                    urls.insert(arn.clone(), url);
                }
                urls.get(arn).cloned().unwrap_or_else(|| Err("lookup lost".into()))?
            }
            (None, None, Some(only)) => only.clone(),
            (None, None, None) => {
                return Err("no source queue known (no sourceQueueArn, and not the dead-letter \
                            queue of exactly one queue): give --to"
                    .into());
            }
        };
        Ok(Queue { url, ..self.template.clone() })
    }
}
