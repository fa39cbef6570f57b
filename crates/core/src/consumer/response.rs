//! The partial batch response Lambda expects from an SQS-triggered function
//! with `ReportBatchItemFailures`.

use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchResponse {
    pub batch_item_failures: Vec<BatchItemFailure>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchItemFailure {
    pub item_identifier: String,
}

impl BatchResponse {
    pub fn new(retried: &[String]) -> Self {
        Self {
            batch_item_failures: retried
                .iter()
                .map(|id| BatchItemFailure { item_identifier: id.clone() })
                .collect(),
        }
    }
}
