//! How the demo and `make invoke` show a function's log lines to a person: an
//! Embedded Metric Format document (hundreds of characters of JSON that
//! CloudWatch, not a reader, is meant for) as the metrics it carries.

use std::collections::HashMap;

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

/// Writes `line`, readable, after `prefix` on stderr in one write: the
/// demo's own lines go to stdout, and a line written in pieces could be cut
/// by one of them in a terminal.
pub fn echo(prefix: &str, line: &str) {
    use std::io::Write;
    let shown = format!("{prefix}{}\n", readable(line));
    let _ = std::io::stderr().lock().write_all(shown.as_bytes());
}

/// Each retried message's cause, in words, from the last `batch summary`
/// line among `lines` (text or JSON): its `failed` field lists
/// `messageId:retry:cause` for each message Lambda is told to retry.
pub fn retry_causes<'a>(lines: impl IntoIterator<Item = &'a str>) -> HashMap<String, &'static str> {
    let Some(summary) = lines.into_iter().filter(|line| line.contains("batch summary")).last()
    else {
        return HashMap::new();
    };
    let failed = match serde_json::from_str::<Value>(summary) {
        Ok(document) => {
            let fields = document.get("fields").unwrap_or(&document);
            fields.get("failed").and_then(Value::as_str).unwrap_or_default().to_owned()
        }
        Err(_) => summary
            .split_whitespace()
            .find_map(|field| field.strip_prefix("failed="))
            .unwrap_or_default()
            .to_owned(),
    };
    failed
        .split(',')
        .filter_map(|entry| {
            let mut parts = entry.split(':');
            let (id, kind, cause) = (parts.next()?, parts.next()?, parts.next()?);
            (kind == "retry").then(|| (id.to_owned(), cause_in_words(cause)))
        })
        .collect()
}

fn cause_in_words(cause: &str) -> &'static str {
    match cause {
        "processor" => "the downstream or the processor asked for a retry",
        "group_blocked" => "held behind its group: an earlier message of its group failed",
        "deadline" => "the deadline guard: not finished before the invocation's end",
        "panicked" => "the processor panicked",
        "claim_contended" => "its idempotency key is held by another consumer",
        "idempotency_store" => "the idempotency store did not answer",
        _ => "retried",
    }
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
    fn retry_causes_come_from_the_last_batch_summary_text_or_json() {
        let text = [
            "INFO batch summary records=1 failed=old:retry:processor",
            "INFO batch summary records=3 failed=m-1:retry:processor,m-2:retry:group_blocked,m-3:quarantined:invalid_json duration_ms=4",
        ];
        let causes = retry_causes(text);
        assert_eq!(causes.len(), 2, "{causes:?}");
        assert_eq!(causes["m-1"], "the downstream or the processor asked for a retry");
        assert_eq!(causes["m-2"], "held behind its group: an earlier message of its group failed");
        let json = json!({"level": "INFO", "fields": {"message": "batch summary",
            "failed": "m-9:retry:deadline:trace=1-abc"}})
        .to_string();
        assert_eq!(
            retry_causes([json.as_str()])["m-9"],
            "the deadline guard: not finished before the invocation's end"
        );
        assert!(retry_causes(["INFO batch received records=3"]).is_empty());
    }

    #[test]
    fn other_lines_are_left_as_they_are() {
        for line in ["2026-12-04T08:00:00Z INFO done", "{\"level\":\"INFO\"}", "{not json", ""] {
            assert_eq!(readable(line), line);
        }
    }
}
