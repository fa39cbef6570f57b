//! The faults a test asks for, and which requests they hit.

use std::time::Duration;

/// What the proxy does to a request a rule matches.
#[derive(Debug, Clone, PartialEq)]
pub enum Fault {
    /// 400 AccessDenied: an IAM policy that does not allow the call.
    Deny,
    /// 400 ThrottlingException, which the SDK retries with backoff.
    Throttle,
    /// 500 InternalFailure, which the SDK retries.
    ServerError,
    /// Forwarded after this long.
    Delay(Duration),
    /// Never answered.
    Hang,
    /// The batch entries at these positions fail (`Failed` in the answer,
    /// code `InternalError`); the others are forwarded.
    FailEntries(Vec<usize>),
    /// DynamoDB `BatchGetItem`: answered with every requested key unprocessed.
    UnprocessedKeys,
    /// The write lands: forwarded, then its answer is thrown away and the
    /// caller told 500 InternalFailure (S3: InternalError), which the SDK retries.
    LoseAnswer,
    /// DynamoDB: a conditional write refused (`ConditionalCheckFailedException`)
    /// without the old item, as a DynamoDB-compatible store that ignores
    /// `ReturnValuesOnConditionCheckFailure` answers. Not forwarded.
    RefuseWithoutItem,
    /// DynamoDB `GetItem`: answered with no item, as if the record were gone.
    NoItem,
    /// Forwarded; the answer's headers and the first half of its body are
    /// sent, then nothing more, the connection kept open: a peer that stalls
    /// mid-answer (an S3 object read, say).
    StallBody,
}

impl Fault {
    pub fn name(&self) -> &'static str {
        match self {
            Self::Deny => "deny",
            Self::Throttle => "throttle",
            Self::ServerError => "500",
            Self::Delay(_) => "delay",
            Self::Hang => "hang",
            Self::FailEntries(_) => "partial batch failure",
            Self::UnprocessedKeys => "unprocessed keys",
            Self::LoseAnswer => "lost answer",
            Self::RefuseWithoutItem => "refused without the old item",
            Self::NoItem => "no item",
            Self::StallBody => "stalled mid-body",
        }
    }
}

/// A fault for the requests of one operation, optionally only those whose
/// body contains a given text (a queue URL, say).
#[derive(Debug, Clone)]
pub struct Rule {
    pub operation: String,
    pub body_contains: Option<String>,
    pub path_contains: Option<String>,
    pub fault: Fault,
    /// How many more requests the rule applies to; `None`: every one.
    pub times: Option<u64>,
    /// How many matching requests still go through before the rule applies.
    pub after: u64,
}

impl Rule {
    pub fn new(operation: &str, fault: Fault) -> Self {
        Self {
            operation: operation.to_owned(),
            body_contains: None,
            path_contains: None,
            fault,
            times: None,
            after: 0,
        }
    }

    /// Only the first `n` matching requests (a retry after them goes through).
    pub fn times(mut self, n: u64) -> Self {
        self.times = Some(n);
        self
    }

    /// Lets the first `n` matching requests through untouched.
    pub fn after(mut self, n: u64) -> Self {
        self.after = n;
        self
    }

    pub fn when_body_contains(mut self, text: &str) -> Self {
        self.body_contains = Some(text.to_owned());
        self
    }

    /// Only requests whose path contains `text` (an S3 object's key, say).
    pub fn when_path_contains(mut self, text: &str) -> Self {
        self.path_contains = Some(text.to_owned());
        self
    }

    pub(super) fn matches(&self, operation: &str, path: &str, body: &[u8]) -> bool {
        self.times != Some(0)
            && self.operation == operation
            && self.path_contains.as_deref().is_none_or(|text| path.contains(text))
            && self
                .body_contains
                .as_deref()
                .is_none_or(|text| String::from_utf8_lossy(body).contains(text))
    }
}
