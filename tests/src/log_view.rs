//! How the demo and `make invoke` show a function's log lines to a person: an
//! Embedded Metric Format document (hundreds of characters of JSON that
//! CloudWatch, not a reader, is meant for) as the metrics it carries.

use serde_json::Value;

/// `line` as a person reads it: an EMF document becomes
/// `metrics Namespace [Dim=value …]: Name=value Unit, …`; any other line is
/// returned unchanged.
pub fn readable(line: &str) -> String {
    emf_summary(line).unwrap_or_else(|| line.to_owned())
}

fn emf_summary(line: &str) -> Option<String> {
    if !line.trim_start().starts_with('{') {
        return None;
    }
    let document: Value = serde_json::from_str(line).ok()?;
    let directive = document.get("_aws")?.get("CloudWatchMetrics")?.get(0)?;
    let namespace = directive.get("Namespace")?.as_str()?;
    let dimensions: Vec<String> = directive
        .get("Dimensions")
        .and_then(|sets| sets.get(0))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(|name| format!("{name}={}", shown(document.get(name))))
        .collect();
    let metrics: Vec<String> = directive
        .get("Metrics")?
        .as_array()?
        .iter()
        .filter_map(|metric| {
            let name = metric.get("Name")?.as_str()?;
            let unit = metric.get("Unit").and_then(Value::as_str).unwrap_or("None");
            Some(format!("{name}={} {unit}", shown(document.get(name))))
        })
        .collect();
    Some(format!("metrics {namespace} [{}]: {}", dimensions.join(" "), metrics.join(", ")))
}

fn shown(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
        None => "(missing)".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_emf_document_reads_as_its_metrics() {
        let document = json!({
            "QueueName": "orders", "ServiceName": "workers",
            "BacklogPerTask": 50.0, "ScalingLoad": 1.5,
            "_aws": {"Timestamp": 1, "CloudWatchMetrics": [{
                "Namespace": "SqsBackpressure",
                "Dimensions": [["QueueName", "ServiceName"]],
                "Metrics": [{"Name": "BacklogPerTask", "Unit": "Count"},
                            {"Name": "ScalingLoad", "Unit": "None"}]}]}
        });
        assert_eq!(
            readable(&document.to_string()),
            "metrics SqsBackpressure [QueueName=orders ServiceName=workers]: \
             BacklogPerTask=50.0 Count, ScalingLoad=1.5 None"
        );
    }

    #[test]
    fn other_lines_are_left_as_they_are() {
        for line in ["2026-12-04T08:00:00Z INFO done", "{\"level\":\"INFO\"}", "{not json", ""] {
            assert_eq!(readable(line), line);
        }
    }
}
