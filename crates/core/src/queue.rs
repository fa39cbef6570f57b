//! A queue, identified by its URL, as both functions configure it.

/// Standard or FIFO, by the name's `.fifo` suffix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueKind {
    /// A standard queue.
    Standard,
    /// A FIFO queue.
    Fifo,
}

/// A queue identified by its URL, with the name the metrics are dimensioned by.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct QueueRef {
    url: String,
    name_start: usize,
}

/// Why a text is not a queue URL or ARN.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueueRefError {
    /// Not `http(s)://host/<account>/<name>`.
    #[error("`{0}` is not an SQS queue URL (expected http(s)://host/<account-id>/<queue-name>)")]
    NotAQueueUrl(String),
    #[error(
        "`{0}` is not an SQS queue ARN (expected arn:<partition>:sqs:<region>:<account-id>:<queue-name>)"
    )]
    /// Not `arn:<partition>:sqs:<region>:<account>:<name>`.
    NotAQueueArn(String),
}

impl QueueRef {
    /// Checks a queue URL and takes the queue's name from it.
    pub fn parse(url: &str) -> Result<Self, QueueRefError> {
        let invalid = || QueueRefError::NotAQueueUrl(url.to_owned());
        let rest = url
            .strip_prefix("https://")
            .or_else(|| url.strip_prefix("http://"))
            .ok_or_else(invalid)?;
        let mut segments = rest.split('/');
        let host = segments.next().unwrap_or_default();
        let account = segments.next().unwrap_or_default();
        let name = segments.next().unwrap_or_default();
        if host.is_empty()
            || account.is_empty()
            || !valid_queue_name(name)
            || segments.next().is_some()
        {
            return Err(invalid());
        }
        Ok(Self { url: url.to_owned(), name_start: url.len() - name.len() })
    }

    /// The dead-letter queue named by a redrive policy's ARN. SQS requires a
    /// dead-letter queue in the same account and region as its source queue,
    /// so its URL is the source URL with the account and name swapped: no
    /// `GetQueueUrl` call is needed.
    pub fn dead_letter_queue(&self, arn: &str) -> Result<Self, QueueRefError> {
        let invalid = || QueueRefError::NotAQueueArn(arn.to_owned());
        let fields: Vec<&str> = arn.split(':').collect();
        let [_arn, _partition, service, _region, account, name] = fields[..] else {
            return Err(invalid());
        };
        if service != "sqs" || account.is_empty() || !valid_queue_name(name) {
            return Err(invalid());
        }
        let without_name = &self.url[..self.name_start - 1];
        let host_end = without_name.rfind('/').unwrap_or(without_name.len());
        Self::parse(&format!("{}/{account}/{name}", &without_name[..host_end]))
    }

    /// The URL as given.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The queue's name.
    pub fn name(&self) -> &str {
        &self.url[self.name_start..]
    }

    /// Standard or FIFO.
    pub fn kind(&self) -> QueueKind {
        if self.name().ends_with(".fifo") { QueueKind::Fifo } else { QueueKind::Standard }
    }
}

/// SQS queue names: 1 to 80 characters of alphanumerics, hyphens and
/// underscores, with `.fifo` allowed as the suffix.
fn valid_queue_name(name: &str) -> bool {
    let stem = name.strip_suffix(".fifo").unwrap_or(name);
    !stem.is_empty()
        && name.len() <= 80
        && stem.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_queue_urls() {
        let queue =
            QueueRef::parse("https://sqs.eu-west-1.amazonaws.com/123456789012/work").unwrap();
        assert_eq!(queue.name(), "work");
        assert_eq!(queue.kind(), QueueKind::Standard);
        let fifo = QueueRef::parse("http://127.0.0.1:5000/123456789012/orders.fifo").unwrap();
        assert_eq!(fifo.name(), "orders.fifo");
        assert_eq!(fifo.kind(), QueueKind::Fifo);
    }

    #[test]
    fn rejects_what_is_not_a_queue_url() {
        for bad in [
            "",
            "work",
            "sqs.eu-west-1.amazonaws.com/123456789012/work",
            "https://sqs.eu-west-1.amazonaws.com/work",
            "https://sqs.eu-west-1.amazonaws.com/123456789012/",
            "https://sqs.eu-west-1.amazonaws.com/123456789012/work/extra",
            "https://sqs.eu-west-1.amazonaws.com/123456789012/bad name",
            "https://sqs.eu-west-1.amazonaws.com/123456789012/.fifo",
            "arn:aws:sqs:eu-west-1:123456789012:work",
        ] {
            assert_eq!(
                QueueRef::parse(bad),
                Err(QueueRefError::NotAQueueUrl(bad.to_owned())),
                "{bad:?}"
            );
        }
        let long = format!("https://h/1/{}", "a".repeat(81));
        assert!(QueueRef::parse(&long).is_err());
    }

    #[test]
    fn dead_letter_queue_url_comes_from_the_arn() {
        let queue =
            QueueRef::parse("https://sqs.eu-west-1.amazonaws.com/123456789012/work").unwrap();
        let dlq = queue.dead_letter_queue("arn:aws:sqs:eu-west-1:123456789012:work-dlq").unwrap();
        assert_eq!(dlq.url(), "https://sqs.eu-west-1.amazonaws.com/123456789012/work-dlq");
        assert_eq!(dlq.name(), "work-dlq");
        assert!(matches!(
            queue.dead_letter_queue("arn:aws:sns:eu-west-1:123456789012:topic"),
            Err(QueueRefError::NotAQueueArn(_))
        ));
        assert!(queue.dead_letter_queue("work-dlq").is_err());
    }
}
