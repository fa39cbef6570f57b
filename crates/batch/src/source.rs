//! The queue a record came from, read from its `eventSourceARN`.

/// The source queue, from a record's `eventSourceARN`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceQueue {
    /// The ARN as given.
    pub arn: String,
    /// The queue's region.
    pub region: String,
    /// The owning account.
    pub account: String,
    /// The queue's name.
    pub name: String,
    partition: String,
}

impl SourceQueue {
    /// `arn:{partition}:sqs:{region}:{account}:{name}`, or `None`.
    pub fn from_arn(arn: &str) -> Option<Self> {
        let fields: Vec<&str> = arn.split(':').collect();
        let ["arn", partition, "sqs", region, account, name] = fields[..] else {
            return None;
        };
        if [partition, region, account, name].iter().any(|f| f.is_empty()) {
            return None;
        }
        Some(Self {
            arn: arn.to_owned(),
            region: region.to_owned(),
            account: account.to_owned(),
            name: name.to_owned(),
            partition: partition.to_owned(),
        })
    }

    /// A `.fifo` queue keeps message group order.
    pub fn is_fifo(&self) -> bool {
        self.name.ends_with(".fifo")
    }

    /// The queue URL for API calls on it (such as `ChangeMessageVisibilityBatch`).
    pub fn url(&self) -> String {
        let domain = match self.partition.as_str() {
            "aws-cn" => "amazonaws.com.cn",
            _ => "amazonaws.com",
        };
        format!("https://sqs.{}.{domain}/{}/{}", self.region, self.account, self.name)
    }
}
