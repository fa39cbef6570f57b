//! What doctor read of a deployment, as plain data: the live reader fills it
//! from AWS, a test from literals. The rules read nothing else.

mod services;

pub use services::{
    Follows, Policy, PolicyMetric, PublisherTarget, RECENT_HOURS, Scaling, Service, Wiring,
};

/// Everything read around the queues asked about.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Deployment {
    /// The queues asked about, then every dead-letter queue they name.
    pub queues: Vec<Queue>,
    /// The event source mappings reading any of those queues.
    pub mappings: Vec<Mapping>,
    /// The functions of those mappings.
    pub functions: Vec<Function>,
    /// The CloudWatch alarms on any of those queues' metrics.
    pub alarms: Vec<Alarm>,
    /// The ECS services that read the queues, given or found through a publisher.
    pub services: Vec<Service>,
    /// The deployed backlog-publishers' targets.
    pub publisher_targets: Vec<PublisherTarget>,
    /// The reads that failed: what they would have told is not checked.
    pub unreadable: Vec<Unreadable>,
}

impl Deployment {
    pub fn queue(&self, arn: &str) -> Option<&Queue> {
        self.queues.iter().find(|queue| queue.arn == arn)
    }

    pub fn function(&self, arn: &str) -> Option<&Function> {
        // A mapping names the function by its ARN, sometimes with a qualifier.
        let unqualified = |name: &str| name.splitn(8, ':').take(7).collect::<Vec<_>>().join(":");
        self.functions.iter().find(|function| unqualified(&function.arn) == unqualified(arn))
    }

    /// The ARN of the queue at `url`: a queue read here by its URL or its name, else the ARN the
    /// URL spells (`https://sqs.REGION.amazonaws.com/ACCOUNT/NAME`).
    pub fn queue_arn_of_url(&self, url: &str) -> Option<String> {
        let name = url.trim_end_matches('/').rsplit('/').next()?;
        let known = self.queues.iter().find(|q| q.url == url).or_else(|| {
            let mut named = self.queues.iter().filter(|q| q.name == name);
            named.next().filter(|_| named.next().is_none())
        });
        known.map(|queue| queue.arn.clone()).or_else(|| arn_of_url(url))
    }

    /// Whether a service known to read `queue` reads it.
    pub fn served(&self, queue: &Queue) -> bool {
        self.services.iter().any(|service| service.queue_arns.contains(&queue.arn))
    }

    /// The mappings that read `queue`.
    pub fn mappings_of<'a>(&'a self, queue: &'a Queue) -> impl Iterator<Item = &'a Mapping> {
        self.mappings.iter().filter(move |mapping| mapping.queue_arn == queue.arn)
    }

    /// The queues whose redrive policy names `queue`.
    pub fn sources_of<'a>(&'a self, queue: &'a Queue) -> impl Iterator<Item = &'a Queue> {
        self.queues.iter().filter(move |source| {
            source.redrive.as_ref().is_some_and(|redrive| redrive.dead_letter_arn == queue.arn)
        })
    }

    /// Whether every reader of the queues is known: the mappings were listed, and the functions
    /// (whose backlog-publishers name the services that read them).
    pub fn readers_known(&self) -> bool {
        !self.unreadable.iter().any(|read| {
            read.action == "lambda:ListEventSourceMappings" || read.action == "lambda:ListFunctions"
        })
    }

    /// Whether the deployed backlog-publishers were read (every function's environment).
    pub fn publishers_known(&self) -> bool {
        !self.unreadable.iter().any(|read| read.action == "lambda:ListFunctions")
    }

    /// Whether the alarms were read.
    pub fn alarms_known(&self) -> bool {
        !self.unreadable.iter().any(|read| read.action == "cloudwatch:DescribeAlarms")
    }

    /// The alarms on a metric of `queue` (by its `QueueName` dimension).
    pub fn alarms_of<'a>(&'a self, queue: &'a Queue) -> impl Iterator<Item = &'a Alarm> {
        self.alarms.iter().filter(move |alarm| alarm.queue_names.contains(&queue.name))
    }
}

/// One SQS queue's attributes, as `GetQueueAttributes` gives them.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Queue {
    pub arn: String,
    pub url: String,
    pub name: String,
    pub fifo: bool,
    pub visibility_timeout_s: u32,
    pub retention_s: u32,
    pub max_message_bytes: u32,
    pub redrive: Option<Redrive>,
    pub redrive_allow: RedriveAllow,
    /// A dead-letter queue some policy names that `GetQueueAttributes` says does not exist.
    pub missing: bool,
    /// Asked about (`--queue`, `--all`), not only followed to as a dead-letter queue.
    pub asked: bool,
}

impl Queue {
    pub fn new(arn: &str, url: &str, name: &str) -> Self {
        Self {
            arn: arn.to_owned(),
            url: url.to_owned(),
            name: name.to_owned(),
            fifo: name.ends_with(".fifo"),
            visibility_timeout_s: 30,
            retention_s: 345_600,
            max_message_bytes: 1_048_576,
            redrive: None,
            redrive_allow: RedriveAllow::AllowAll,
            missing: false,
            asked: true,
        }
    }
}

/// The queue's `RedrivePolicy`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redrive {
    pub dead_letter_arn: String,
    pub max_receive_count: u32,
}

/// The queue's `RedriveAllowPolicy`: which queues may use it as their dead-letter queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RedriveAllow {
    AllowAll,
    DenyAll,
    ByQueue(Vec<String>),
}

impl RedriveAllow {
    pub fn allows(&self, source_arn: &str) -> bool {
        match self {
            Self::AllowAll => true,
            Self::DenyAll => false,
            Self::ByQueue(arns) => arns.iter().any(|arn| arn == source_arn),
        }
    }
}

/// An event source mapping from a queue to a function.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Mapping {
    pub uuid: String,
    pub queue_arn: String,
    pub function_arn: String,
    pub enabled: bool,
    pub batch_size: u32,
    pub window_s: u32,
    pub reports_item_failures: bool,
    pub maximum_concurrency: Option<u32>,
    pub pollers: Option<Pollers>,
}

impl Mapping {
    pub fn new(uuid: &str, queue_arn: &str, function_arn: &str) -> Self {
        Self {
            uuid: uuid.to_owned(),
            queue_arn: queue_arn.to_owned(),
            function_arn: function_arn.to_owned(),
            enabled: true,
            batch_size: 10,
            window_s: 0,
            reports_item_failures: false,
            maximum_concurrency: None,
            pollers: None,
        }
    }
}

/// A mapping's provisioned mode (`ProvisionedPollerConfig`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pollers {
    pub minimum: u32,
    pub maximum: u32,
}

/// A mapping's function.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Function {
    pub arn: String,
    pub name: String,
    pub timeout_s: u32,
    /// `ReservedConcurrentExecutions`, when set.
    pub reserved_concurrency: Option<u32>,
    /// Built on this project's engine (its environment names `QUARANTINE_QUEUE_URL`), so it
    /// answers with `batchItemFailures`.
    pub reports_item_failures: bool,
}

impl Function {
    pub fn new(arn: &str, name: &str, timeout_s: u32) -> Self {
        Self {
            arn: arn.to_owned(),
            name: name.to_owned(),
            timeout_s,
            reserved_concurrency: None,
            reports_item_failures: false,
        }
    }
}

/// A CloudWatch alarm on one or more queues' metrics.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Alarm {
    pub name: String,
    /// The `AWS/SQS` metrics it reads (one, or several for metric math).
    pub metrics: Vec<String>,
    /// The `QueueName` dimensions of those metrics.
    pub queue_names: Vec<String>,
}

impl Alarm {
    pub fn new(name: &str, metric: &str, queue_name: &str) -> Self {
        Self {
            name: name.to_owned(),
            metrics: vec![metric.to_owned()],
            queue_names: vec![queue_name.to_owned()],
        }
    }
}

/// A read that failed: the call, the permission it needs, and what AWS said.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Unreadable {
    /// `sqs:GetQueueAttributes`, as IAM names the action.
    pub action: &'static str,
    pub resource: String,
    /// The service's code and message, once.
    pub message: String,
}

impl Unreadable {
    pub fn new(action: &'static str, resource: &str, message: String) -> Self {
        Self { action, resource: resource.to_owned(), message }
    }
}

/// A queue's ARN from its URL (`https://sqs.REGION.amazonaws.com/ACCOUNT/NAME`).
pub(crate) fn arn_of_url(url: &str) -> Option<String> {
    let mut parts = url.trim_end_matches('/').rsplit('/');
    let (name, account) = (parts.next()?, parts.next()?);
    let host = parts.nth(1)?;
    let region = host.split('.').nth(1).filter(|r| !r.is_empty())?;
    Some(format!("arn:aws:sqs:{region}:{account}:{name}"))
}
