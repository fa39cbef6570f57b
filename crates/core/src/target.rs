//! What the publisher measures: a queue, the ECS service that drains it, and
//! the backlog per task that service's scaling policy aims for.

use std::fmt;

/// The scaling policy's target value: acceptable backlog per task, from
/// [`BacklogTarget::MIN`] to [`BacklogTarget::MAX`], taken to six decimal
/// places. Kept as a whole number of millionths so that "tasks needed" is
/// exact (21 messages at 0.7 need 30 tasks; in floating point 21 ÷ 0.7 is
/// 30.000000000000004), and bounded so that nothing derived from it can leave
/// the range CloudWatch accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct BacklogTarget {
    millionths: u64,
}

const MILLION: u64 = 1_000_000;

impl BacklogTarget {
    pub const MIN: f64 = 0.001;
    pub const MAX: f64 = 1e9;

    /// `None` outside [`Self::MIN`, `Self::MAX`] (NaN included).
    pub fn new(value: f64) -> Option<Self> {
        if !(Self::MIN..=Self::MAX).contains(&value) {
            return None;
        }
        // Below 2^53 millionths, so the product and the rounding are exact
        // for every value written with at most six decimals.
        Some(Self { millionths: (value * MILLION as f64).round() as u64 })
    }

    /// Acceptable latency ÷ average processing time, as in the AWS guide
    /// ("Scale Amazon ECS services based on an Amazon SQS queue").
    pub fn from_latency(acceptable_latency_seconds: f64, processing_seconds: f64) -> Option<Self> {
        Self::new(acceptable_latency_seconds / processing_seconds)
    }

    pub fn get(self) -> f64 {
        self.millionths as f64 / MILLION as f64
    }

    /// ceil(backlog ÷ target), exactly; saturates at `u64::MAX`.
    pub fn tasks_for(self, backlog: u64) -> u64 {
        let scaled = u128::from(backlog) * u128::from(MILLION);
        let tasks = scaled.div_ceil(u128::from(self.millionths));
        u64::try_from(tasks).unwrap_or(u64::MAX)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueKind {
    Standard,
    Fifo,
}

/// A queue identified by its URL, with the name the metrics are dimensioned by.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct QueueRef {
    url: String,
    name_start: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueueRefError {
    #[error("`{0}` is not an SQS queue URL (expected http(s)://host/<account-id>/<queue-name>)")]
    NotAQueueUrl(String),
    #[error(
        "`{0}` is not an SQS queue ARN (expected arn:<partition>:sqs:<region>:<account-id>:<queue-name>)"
    )]
    NotAQueueArn(String),
}

impl QueueRef {
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

    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn name(&self) -> &str {
        &self.url[self.name_start..]
    }

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

/// One queue and the ECS service that drains it.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    pub queue: QueueRef,
    pub cluster: String,
    pub service: String,
    pub backlog_target: Option<BacklogTarget>,
}

/// The name part of an ECS cluster or service given as a name or an ARN
/// (`arn:…:cluster/NAME`, `arn:…:service/CLUSTER/NAME` or the older
/// `arn:…:service/NAME`). Metrics are dimensioned by names whichever form
/// was configured, so the scaling policy's dimensions match.
pub fn ecs_name(name_or_arn: &str) -> &str {
    if name_or_arn.starts_with("arn:") {
        name_or_arn.rsplit('/').next().unwrap_or(name_or_arn)
    } else {
        name_or_arn
    }
}

impl Target {
    pub fn cluster_name(&self) -> &str {
        ecs_name(&self.cluster)
    }

    pub fn service_name(&self) -> &str {
        ecs_name(&self.service)
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "queue {} → service {}/{}", self.queue.name(), self.cluster, self.service)
    }
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
    fn tasks_for_is_an_exact_ceiling() {
        let target = |v: f64| BacklogTarget::new(v).unwrap();
        let cases = [
            (21, 0.7, 30),
            (22, 0.7, 32),
            (0, 0.7, 0),
            (1, 100.0, 1),
            (100, 100.0, 1),
            (101, 100.0, 2),
            (3, 0.3, 10),
            (10, 0.1, 100),
            (7, 2.333333, 4),
            (14, 3.5, 4),
            (u64::MAX, 1e9, u64::MAX / 1_000_000_000 + 1),
            (u64::MAX, 0.001, u64::MAX),
        ];
        for (backlog, value, tasks) in cases {
            assert_eq!(target(value).tasks_for(backlog), tasks, "{backlog} at {value}");
        }
    }

    #[test]
    fn ecs_names_from_names_and_arns() {
        for (given, name) in [
            ("workers", "workers"),
            ("arn:aws:ecs:eu-west-1:123456789012:service/prod/workers", "workers"),
            ("arn:aws:ecs:eu-west-1:123456789012:service/workers", "workers"),
            ("arn:aws:ecs:eu-west-1:123456789012:cluster/prod", "prod"),
        ] {
            assert_eq!(ecs_name(given), name, "{given}");
        }
    }

    #[test]
    fn backlog_target_is_bounded_and_finite() {
        assert_eq!(BacklogTarget::new(100.0).map(BacklogTarget::get), Some(100.0));
        assert_eq!(BacklogTarget::new(0.7).map(BacklogTarget::get), Some(0.7));
        assert_eq!(BacklogTarget::new(0.001).map(BacklogTarget::get), Some(0.001));
        assert_eq!(BacklogTarget::new(1e9).map(BacklogTarget::get), Some(1e9));
        for bad in [0.0, -1.0, 0.000_999, 1e9 + 1.0, 1e300, f64::NAN, f64::INFINITY] {
            assert_eq!(BacklogTarget::new(bad), None, "{bad}");
        }
        assert_eq!(BacklogTarget::from_latency(10.0, 0.1).map(BacklogTarget::get), Some(100.0));
        assert_eq!(BacklogTarget::from_latency(10.0, 0.0), None);
    }
}
