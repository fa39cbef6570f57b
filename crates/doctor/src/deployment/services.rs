use backlog_publisher::metrics::{DIMENSION_NAMES, METRIC_NAMES, SCALING_LOAD};
use backpressure_core::config::DEFAULT_NAMESPACE;

/// An ECS service that reads one of the queues: named with `--service`, or a
/// backlog-publisher's target.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Service {
    pub cluster: String,
    pub name: String,
    /// The queues it reads, where known: its worker's `QUEUE_URL`, a publisher's target.
    pub queue_arns: Vec<String>,
    /// `DescribeServices` answered for it (the rules skip a service it did not).
    pub described: bool,
    /// `DescribeServices` says it does not exist, or it is no longer active.
    pub missing: bool,
    /// The least `stopTimeout` of its task's containers (ECS's default, 30 s, when unset).
    pub stop_timeout_s: u32,
    /// The worker's `DRAIN_SECONDS`, when a container of its task is this project's worker.
    pub drain_s: Option<u32>,
    /// Whether the container that reads the queue (its `QUEUE_URL` or `DRAIN_SECONDS`) has a
    /// health check; `None` when no such container was found.
    pub reader_health_checked: Option<bool>,
    /// Its scalable target (`ecs:service:DesiredCount`); `None` when it has none.
    pub scaling: Option<Scaling>,
    /// What the stack must give the container that reads the queue, when that container is a
    /// worker on backpressure-app (it sets a variable only such a worker reads).
    pub wiring: Option<Wiring>,
}

/// A backpressure-app worker's container: what it needs from the stack around it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Wiring {
    /// The variable that tells it is ours (`DRAIN_SECONDS`, say).
    pub marker: String,
    /// Its `QUARANTINE_QUEUE_URL`, without which `run_worker` does not start.
    pub quarantine_queue_url: Option<String>,
    /// `GetQueueAttributes` says that queue does not exist.
    pub quarantine_missing: bool,
    /// Its task definition names a task role (without one, its calls have no credentials).
    pub task_role: bool,
}

impl Wiring {
    pub fn new(marker: &str, quarantine_queue_url: Option<String>, task_role: bool) -> Self {
        Self {
            marker: marker.to_owned(),
            quarantine_queue_url,
            quarantine_missing: false,
            task_role,
        }
    }
}

impl Service {
    pub fn new(cluster: &str, name: &str) -> Self {
        Self {
            cluster: cluster.to_owned(),
            name: name.to_owned(),
            queue_arns: Vec::new(),
            described: false,
            missing: false,
            stop_timeout_s: 30,
            drain_s: None,
            reader_health_checked: None,
            scaling: None,
            wiring: None,
        }
    }

    /// `service/CLUSTER/NAME`, as Application Auto Scaling names it.
    pub fn resource_id(&self) -> String {
        format!("service/{}/{}", self.cluster, self.name)
    }
}

/// A service's scalable target and its policies.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Scaling {
    pub min: u32,
    pub max: u32,
    pub policies: Vec<Policy>,
}

impl Scaling {
    pub fn new(min: u32, max: u32, policies: Vec<Policy>) -> Self {
        Self { min, max, policies }
    }

    /// What each policy follows, as a person names it: a predefined metric type
    /// (`ECSServiceAverageCPUUtilization`), a custom metric's name, or `step`.
    pub fn followed(&self) -> Vec<String> {
        self.policies.iter().map(Policy::label).collect()
    }
}

/// One scaling policy of a service.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Policy {
    pub name: String,
    pub follows: Follows,
    /// A target tracking policy's `TargetValue`.
    pub target_value: Option<f64>,
}

impl Policy {
    pub fn new(name: &str, follows: Follows) -> Self {
        Self { name: name.to_owned(), follows, target_value: None }
    }

    fn label(&self) -> String {
        match &self.follows {
            Follows::Predefined(metric) => metric.clone(),
            Follows::Custom(metrics) if metrics.len() == 1 => metrics[0].name.clone(),
            Follows::Custom(_) => "metric math".to_owned(),
            Follows::Step => "step".to_owned(),
        }
    }
}

/// What a policy scales on.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Follows {
    /// A predefined metric type, which ECS itself publishes.
    Predefined(String),
    /// A target tracking policy's customized metric: one, or each metric a metric math
    /// expression reads.
    Custom(Vec<PolicyMetric>),
    /// A step scaling policy, driven by the alarms that name it.
    Step,
}

/// A customized metric a target tracking policy reads.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PolicyMetric {
    pub namespace: String,
    pub name: String,
    /// Name and value of each dimension, in the policy's order.
    pub dimensions: Vec<(String, String)>,
    pub statistic: String,
    /// Whether CloudWatch holds a datapoint of it in the last [`RECENT_HOURS`] hours: asked
    /// only of a metric no publisher doctor found puts, `None` until then or when the read
    /// failed.
    pub recent_datapoints: Option<bool>,
}

/// How far back doctor looks for a datapoint of a metric no known publisher puts.
pub const RECENT_HOURS: u32 = 3;

impl PolicyMetric {
    pub fn new(namespace: &str, name: &str, dimensions: &[(&str, &str)], statistic: &str) -> Self {
        Self {
            namespace: namespace.to_owned(),
            name: name.to_owned(),
            dimensions: dimensions
                .iter()
                .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
                .collect(),
            statistic: statistic.to_owned(),
            recent_datapoints: None,
        }
    }

    /// `Namespace/Name (Dimension=value, …)`, as a person compares it with another.
    pub fn describe(&self) -> String {
        let dimensions: Vec<String> =
            self.dimensions.iter().map(|(name, value)| format!("{name}={value}")).collect();
        format!("{}/{} ({})", self.namespace, self.name, dimensions.join(", "))
    }
}

/// A target of a deployed backlog-publisher (its `TARGETS`, or `QUEUE_URL` with
/// `ECS_CLUSTER_NAME` and `ECS_SERVICE_NAME`).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PublisherTarget {
    pub function: String,
    pub queue_url: String,
    pub cluster: String,
    pub service: String,
    /// The publisher's `METRIC_NAMESPACE`.
    pub namespace: String,
    /// It puts `ScalingLoad` (its `TARGET_LOAD_PERCENT` is set).
    pub scaling_load: bool,
    /// Its `TARGET_LOAD_PERCENT`, the target a policy on its `ScalingLoad` takes.
    pub target_load_percent: Option<f64>,
    /// `GetQueueAttributes` says its queue does not exist.
    pub queue_missing: bool,
}

impl PublisherTarget {
    pub(crate) fn name_matches(&self, service: &str) -> bool {
        self.service == service
    }

    pub fn new(function: &str, queue_url: &str, cluster: &str, service: &str) -> Self {
        Self {
            function: function.to_owned(),
            queue_url: queue_url.to_owned(),
            cluster: cluster.to_owned(),
            service: service.to_owned(),
            namespace: DEFAULT_NAMESPACE.to_owned(),
            scaling_load: false,
            target_load_percent: None,
            queue_missing: false,
        }
    }

    /// The dimensions every datum of this target carries, as the publisher names them.
    pub fn dimensions(&self) -> Vec<(String, String)> {
        let queue = self.queue_url.trim_end_matches('/').rsplit('/').next().unwrap_or_default();
        let values = [self.cluster.as_str(), self.service.as_str(), queue];
        DIMENSION_NAMES.iter().zip(values).map(|(n, v)| ((*n).to_owned(), v.to_owned())).collect()
    }

    /// The metric names this target puts: every one but `ScalingLoad` without its settings.
    pub fn metric_names(&self) -> impl Iterator<Item = &'static str> + '_ {
        METRIC_NAMES.into_iter().filter(|name| *name != SCALING_LOAD || self.scaling_load)
    }

    /// Whether this target puts `metric`: the same namespace, a name it puts, and the same
    /// dimensions, whatever their order (CloudWatch tells a metric by the whole set).
    pub fn puts(&self, metric: &PolicyMetric) -> bool {
        let mut ours = self.dimensions();
        let mut theirs = metric.dimensions.clone();
        ours.sort();
        theirs.sort();
        self.namespace == metric.namespace
            && self.metric_names().any(|name| name == metric.name)
            && ours == theirs
    }
}
