//! A queue, identified by its URL as the functions configure it, or by its
//! ARN as an event source or a redrive policy names it.

/// Standard or FIFO, by the name's `.fifo` suffix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueKind {
    /// A standard queue.
    Standard,
    /// A FIFO queue.
    Fifo,
}

impl QueueKind {
    /// A queue named `….fifo` is FIFO; every other is standard.
    pub fn of_name(name: &str) -> Self {
        if name.ends_with(".fifo") { Self::Fifo } else { Self::Standard }
    }
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
            || !is_queue_name(name)
            || segments.next().is_some()
        {
            return Err(invalid());
        }
        Ok(Self { url: url.to_owned(), name_start: url.len() - name.len() })
    }

    /// The queue an ARN names, at SQS's public endpoint for its region and
    /// partition (`https://sqs.{region}.amazonaws.com/{account}/{name}`).
    pub fn from_arn(arn: &str) -> Result<Self, QueueRefError> {
        Self::parse(&QueueArn::parse(arn)?.url())
    }

    /// The dead-letter queue named by a redrive policy's ARN. SQS requires a
    /// dead-letter queue in the same account and region as its source queue,
    /// so its URL is the source URL with the account and name swapped: no
    /// `GetQueueUrl` call is needed.
    pub fn dead_letter_queue(&self, arn: &str) -> Result<Self, QueueRefError> {
        let arn = QueueArn::parse(arn)?;
        let without_name = &self.url[..self.name_start - 1];
        let host_end = without_name.rfind('/').unwrap_or(without_name.len());
        Self::parse(&format!("{}/{}/{}", &without_name[..host_end], arn.account(), arn.name()))
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
        QueueKind::of_name(self.name())
    }
}

/// An SQS queue's ARN, `arn:<partition>:sqs:<region>:<account-id>:<queue-name>`,
/// read into its parts.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct QueueArn {
    arn: String,
    partition: String,
    region: String,
    account: String,
    name: String,
}

impl QueueArn {
    /// Checks an ARN names an SQS queue, and reads its parts.
    pub fn parse(arn: &str) -> Result<Self, QueueRefError> {
        let fields: Vec<&str> = arn.split(':').collect();
        let ["arn", partition, "sqs", region, account, name] = fields[..] else {
            return Err(QueueRefError::NotAQueueArn(arn.to_owned()));
        };
        if partition.is_empty() || region.is_empty() || account.is_empty() || !is_queue_name(name) {
            return Err(QueueRefError::NotAQueueArn(arn.to_owned()));
        }
        Ok(Self {
            arn: arn.to_owned(),
            partition: partition.to_owned(),
            region: region.to_owned(),
            account: account.to_owned(),
            name: name.to_owned(),
        })
    }

    /// The ARN as given.
    pub fn as_str(&self) -> &str {
        &self.arn
    }

    /// The queue's region.
    pub fn region(&self) -> &str {
        &self.region
    }

    /// The account that owns the queue.
    pub fn account(&self) -> &str {
        &self.account
    }

    /// The queue's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Standard or FIFO.
    pub fn kind(&self) -> QueueKind {
        QueueKind::of_name(&self.name)
    }

    /// The queue's URL at SQS's public endpoint for its region and partition.
    pub fn url(&self) -> String {
        let domain = match self.partition.as_str() {
            "aws-cn" => "amazonaws.com.cn",
            _ => "amazonaws.com",
        };
        format!("https://sqs.{}.{domain}/{}/{}", self.region, self.account, self.name)
    }
}

/// Whether SQS accepts `name` as a queue name: 1 to 80 characters of
/// alphanumerics, hyphens and underscores, with `.fifo` allowed as the suffix.
pub fn is_queue_name(name: &str) -> bool {
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

    #[test]
    fn queue_names_are_what_sqs_accepts() {
        for good in ["orders", "orders-dlq", "a_b.fifo", &"x".repeat(80)] {
            assert!(is_queue_name(good), "{good}");
        }
        for bad in ["", ".fifo", "a b", "a/b", &"x".repeat(81), "ordérs"] {
            assert!(!is_queue_name(bad), "{bad}");
        }
    }

    #[test]
    fn arns_are_read_into_their_parts() {
        let arn = QueueArn::parse("arn:aws:sqs:eu-west-1:123456789012:orders.fifo").unwrap();
        assert_eq!(
            (arn.region(), arn.account(), arn.name(), arn.kind()),
            ("eu-west-1", "123456789012", "orders.fifo", QueueKind::Fifo)
        );
        assert_eq!(arn.url(), "https://sqs.eu-west-1.amazonaws.com/123456789012/orders.fifo");
        let china = QueueArn::parse("arn:aws-cn:sqs:cn-north-1:123456789012:q").unwrap();
        assert_eq!(china.url(), "https://sqs.cn-north-1.amazonaws.com.cn/123456789012/q");
        let queue = QueueRef::from_arn("arn:aws:sqs:us-east-1:123456789012:work").unwrap();
        assert_eq!(queue.url(), "https://sqs.us-east-1.amazonaws.com/123456789012/work");
        assert_eq!(queue.name(), "work");
        for bad in [
            "",
            "not an arn",
            "arn:aws:sns:eu-west-1:123456789012:topic",
            "arn:aws:sqs:eu-west-1:123456789012",
            "arn:aws:sqs::123456789012:work",
            "arn:aws:sqs:eu-west-1::work",
            "arn:aws:sqs:eu-west-1:123456789012:bad name",
            "arn:aws:sqs:eu-west-1:123456789012:work:extra",
        ] {
            assert_eq!(
                QueueArn::parse(bad),
                Err(QueueRefError::NotAQueueArn(bad.to_owned())),
                "{bad:?}"
            );
            assert!(QueueRef::from_arn(bad).is_err(), "{bad:?}");
        }
    }
}
