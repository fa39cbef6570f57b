//! CloudWatch Embedded Metric Format, the metrics `Builder::metrics_namespace`
//! turns on: a document per line on stdout, which
//! Lambda and the ECS awslogs driver turn into metrics without an API call.

use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value, json};

/// One EMF document: a namespace, its dimensions with their values, and
/// metrics with units and values.
#[derive(Debug, Clone)]
pub(crate) struct Document {
    namespace: String,
    timestamp_ms: u64,
    dimensions: Vec<String>,
    metrics: Vec<Value>,
    values: Map<String, Value>,
}

impl Document {
    /// An empty document in `namespace`, stamped `now`.
    pub(crate) fn new(namespace: &str, now: SystemTime) -> Self {
        let timestamp_ms = now.duration_since(UNIX_EPOCH).unwrap_or_default().as_millis() as u64;
        Self {
            namespace: namespace.to_owned(),
            timestamp_ms,
            dimensions: Vec::new(),
            metrics: Vec::new(),
            values: Map::new(),
        }
    }

    /// A dimension and its value.
    pub(crate) fn dimension(mut self, name: &str, value: &str) -> Self {
        self.dimensions.push(name.to_owned());
        self.values.insert(name.to_owned(), Value::String(value.to_owned()));
        self
    }

    /// A metric, its CloudWatch unit (`Count`, `Milliseconds`) and its value.
    pub(crate) fn metric(mut self, name: &str, unit: &str, value: impl Into<Value>) -> Self {
        self.metrics.push(json!({"Name": name, "Unit": unit}));
        self.values.insert(name.to_owned(), value.into());
        self
    }

    /// The document as JSON.
    pub(crate) fn to_json(&self) -> Value {
        let mut document = Value::Object(self.values.clone());
        document["_aws"] = json!({
            "Timestamp": self.timestamp_ms,
            "CloudWatchMetrics": [{
                "Namespace": self.namespace,
                "Dimensions": [self.dimensions],
                "Metrics": self.metrics,
            }],
        });
        document
    }
}

/// Writes each document as one line on stdout.
pub(crate) fn emit(documents: &[Document]) {
    let mut stdout = std::io::stdout().lock();
    for document in documents {
        let _ = writeln!(stdout, "{}", document.to_json());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_declared_metric_has_its_value_and_dimension() {
        let doc = Document::new("Ns", UNIX_EPOCH + std::time::Duration::from_millis(1500))
            .dimension("QueueName", "orders")
            .metric("BatchSize", "Count", 3)
            .to_json();
        assert_eq!(doc["_aws"]["Timestamp"], 1500);
        assert_eq!(doc["_aws"]["CloudWatchMetrics"][0]["Namespace"], "Ns");
        assert_eq!(doc["_aws"]["CloudWatchMetrics"][0]["Dimensions"], json!([["QueueName"]]));
        assert_eq!(doc["_aws"]["CloudWatchMetrics"][0]["Metrics"][0]["Name"], "BatchSize");
        assert_eq!(
            (doc["QueueName"].clone(), doc["BatchSize"].clone()),
            (json!("orders"), json!(3))
        );
    }
}
