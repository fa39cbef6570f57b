use std::collections::HashSet;
use std::time::Duration;

use serde::Deserialize;

use crate::backlog::{BacklogIncludes, BacklogPolicy, SettingError, TaskCountMode};
use crate::config_load::positive;
use crate::load::LoadSettings;
use crate::target::{BacklogTarget, Target};
use backpressure_core::config::variables::{
    ACCEPTABLE_LATENCY_SECONDS, AVG_PROCESSING_SECONDS, BACKLOG_INCLUDES, ECS_CLUSTER_NAME,
    ECS_SERVICE_NAME, QUEUE_URL, SAMPLE_INTERVAL_SECONDS, SAMPLES_PER_INVOCATION,
    STORAGE_RESOLUTION, TARGET_BACKLOG_PER_TASK, TARGET_LOAD_PERCENT, TARGETS, TASK_COUNT,
};
use backpressure_core::config::{ConfigError, Vars, api_call_timeout, namespace};
use backpressure_core::queue::QueueRef;

/// `STORAGE_RESOLUTION`: CloudWatch's 60 s or 1 s metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StorageResolution {
    /// 60-second resolution.
    #[default]
    Standard,
    /// 1-second resolution.
    High,
}

impl StorageResolution {
    /// The `StorageResolution` value CloudWatch expects, in seconds.
    pub fn seconds(self) -> i32 {
        match self {
            Self::Standard => 60,
            Self::High => 1,
        }
    }
}

/// Sub-minute sampling within one scheduled invocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sampling {
    /// `SAMPLES_PER_INVOCATION`.
    pub samples: u32,
    /// `SAMPLE_INTERVAL_SECONDS`.
    pub interval: Duration,
}

impl Default for Sampling {
    fn default() -> Self {
        Self { samples: 1, interval: Duration::ZERO }
    }
}

/// Everything backlog-publisher reads from its environment.
#[derive(Debug, Clone, PartialEq)]
pub struct PublisherConfig {
    /// `TARGETS`, or the one target of `QUEUE_URL`, `ECS_CLUSTER_NAME`, `ECS_SERVICE_NAME`.
    pub targets: Vec<Target>,
    /// `METRIC_NAMESPACE`.
    pub namespace: String,
    /// `STORAGE_RESOLUTION`.
    pub storage_resolution: StorageResolution,
    /// `BACKLOG_INCLUDES` and `TASK_COUNT`.
    pub policy: BacklogPolicy,
    /// `SAMPLES_PER_INVOCATION` and `SAMPLE_INTERVAL_SECONDS`.
    pub sampling: Sampling,
    /// Each AWS call's own budget (`API_CALL_TIMEOUT_MS`).
    pub api_call_timeout: Duration,
    /// `ScalingLoad`'s settings, when `TARGET_LOAD_PERCENT` is set.
    pub load: Option<LoadSettings>,
}

impl PublisherConfig {
    /// Reads the variables; every bad one is reported ([`ConfigError::Several`]),
    /// each error naming the variable and the value.
    pub fn from_vars<F: Fn(&str) -> Option<String>>(vars: &Vars<F>) -> Result<Self, ConfigError> {
        let mut errors = Vec::new();
        let load = crate::config_load::load_settings(vars, &mut errors);
        let load_on = vars.get(TARGET_LOAD_PERCENT.name).is_some();
        let default_target = ConfigError::kept(backlog_target(vars, load_on), &mut errors);
        let targets = ConfigError::kept(targets(vars, default_target.flatten()), &mut errors);
        let namespace = ConfigError::kept(namespace(vars), &mut errors);
        let storage_resolution = ConfigError::kept(storage_resolution(vars), &mut errors);
        let includes = ConfigError::kept(backlog_includes(vars), &mut errors);
        let task_count = ConfigError::kept(task_count(vars), &mut errors);
        let sampling = ConfigError::kept(sampling(vars), &mut errors);
        let api_call_timeout = ConfigError::kept(api_call_timeout(vars), &mut errors);
        let (
            Some(targets),
            Some(namespace),
            Some(storage_resolution),
            Some(includes),
            Some(task_count),
            Some(sampling),
            Some(api_call_timeout),
        ) = (
            targets,
            namespace,
            storage_resolution,
            includes,
            task_count,
            sampling,
            api_call_timeout,
        )
        else {
            return Err(ConfigError::gathered(errors));
        };
        ConfigError::all_or(errors, || Self {
            targets,
            namespace,
            storage_resolution,
            policy: BacklogPolicy { includes, task_count },
            sampling,
            api_call_timeout,
            load,
        })
    }
}

const SINGLE_TARGET_VARS: [&str; 3] =
    [QUEUE_URL.name, ECS_CLUSTER_NAME.name, ECS_SERVICE_NAME.name];

fn targets<F: Fn(&str) -> Option<String>>(
    vars: &Vars<F>,
    default_target: Option<BacklogTarget>,
) -> Result<Vec<Target>, ConfigError> {
    let single = SINGLE_TARGET_VARS.map(|name| vars.get(name));
    match (vars.get(TARGETS.name), single.iter().any(Option::is_some)) {
        (Some(_), true) => Err(ConfigError::Conflict(
            "set either TARGETS or QUEUE_URL/ECS_CLUSTER_NAME/ECS_SERVICE_NAME, not both",
        )),
        (Some(json), false) => targets_from_json(&json, default_target),
        (None, _) => {
            let [Some(queue_url), Some(cluster), Some(service)] = single else {
                let missing = SINGLE_TARGET_VARS
                    .into_iter()
                    .zip(&single)
                    .find_map(|(name, value)| value.is_none().then_some(name))
                    .unwrap_or(SINGLE_TARGET_VARS[0]);
                return Err(ConfigError::Missing {
                    name: missing,
                    reason: "one target needs QUEUE_URL, ECS_CLUSTER_NAME and ECS_SERVICE_NAME \
                             (or set TARGETS for several)",
                });
            };
            let queue = QueueRef::parse(&queue_url)
                .map_err(|e| ConfigError::invalid(QUEUE_URL.name, &queue_url, e.to_string()))?;
            check_ecs_name(ECS_CLUSTER_NAME.name, &cluster)?;
            check_ecs_name(ECS_SERVICE_NAME.name, &service)?;
            Ok(vec![Target { queue, cluster, service, backlog_target: default_target }])
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct TargetSpec {
    queue_url: String,
    cluster: String,
    service: String,
    target_backlog_per_task: Option<f64>,
}

fn targets_from_json(
    json: &str,
    default_target: Option<BacklogTarget>,
) -> Result<Vec<Target>, ConfigError> {
    let invalid =
        |reason: String| ConfigError::Targets { value: json.to_owned(), reason, source: None };
    let specs: Vec<TargetSpec> =
        serde_json::from_str(json).map_err(|source| ConfigError::Targets {
            value: json.to_owned(),
            reason: "expected a JSON array of {\"queueUrl\", \"cluster\", \"service\", \
                 \"targetBacklogPerTask\"?} objects"
                .to_owned(),
            source: Some(source),
        })?;
    if specs.is_empty() {
        return Err(invalid("the array is empty; give at least one target".to_owned()));
    }
    let mut seen = HashSet::new();
    specs
        .into_iter()
        .enumerate()
        .map(|(index, spec)| {
            let queue = QueueRef::parse(&spec.queue_url)
                .map_err(|e| invalid(format!("target {index}: {e}")))?;
            for (field, value) in [("cluster", &spec.cluster), ("service", &spec.service)] {
                if !valid_ecs_name(value) {
                    return Err(invalid(format!(
                        "target {index}: {field} {value:?} {ECS_NAME_RULE}"
                    )));
                }
            }
            let backlog_target = match spec.target_backlog_per_task {
                None => default_target,
                Some(value) => Some(BacklogTarget::new(value).ok_or_else(|| {
                    invalid(format!(
                        "target {index}: targetBacklogPerTask is {value}; {TARGET_RANGE}"
                    ))
                })?),
            };
            if !seen.insert((spec.queue_url.clone(), spec.cluster.clone(), spec.service.clone())) {
                return Err(invalid(format!("target {index} repeats an earlier target")));
            }
            Ok(Target { queue, cluster: spec.cluster, service: spec.service, backlog_target })
        })
        .collect()
}

const ECS_NAME_RULE: &str = "must be 1-255 letters, digits, hyphens or underscores (or an ARN)";

fn valid_ecs_name(name: &str) -> bool {
    let is_arn = name.starts_with("arn:") && !name.contains(char::is_whitespace);
    let is_name = !name.is_empty()
        && name.len() <= 255
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    is_arn || is_name
}

fn check_ecs_name(name: &'static str, value: &str) -> Result<(), ConfigError> {
    if valid_ecs_name(value) {
        Ok(())
    } else {
        Err(ConfigError::invalid(name, value, ECS_NAME_RULE))
    }
}

const TARGET_RANGE: &str = "the backlog per task target must be from 0.001 to 1000000000";
const _: () = assert!(matches!(
    TARGET_BACKLOG_PER_TASK.accepts,
    backpressure_core::config::variables::Accepts::Decimal { min: 0.001, max: 1_000_000_000.0 }
));

/// The backlog target. With the load configured, `AVG_PROCESSING_SECONDS`
/// is the load's and needs no `ACCEPTABLE_LATENCY_SECONDS`.
fn backlog_target<F: Fn(&str) -> Option<String>>(
    vars: &Vars<F>,
    load: bool,
) -> Result<Option<BacklogTarget>, ConfigError> {
    let direct = match vars.get(TARGET_BACKLOG_PER_TASK.name) {
        None => None,
        Some(text) => {
            Some(text.parse::<f64>().ok().and_then(BacklogTarget::new).ok_or_else(|| {
                ConfigError::invalid(TARGET_BACKLOG_PER_TASK.name, &text, TARGET_RANGE)
            })?)
        }
    };
    let latency = positive(vars, ACCEPTABLE_LATENCY_SECONDS.name)?;
    let processing =
        positive(vars, AVG_PROCESSING_SECONDS.name)?.filter(|_| !load || latency.is_some());
    match (direct, latency, processing) {
        (Some(_), Some(_), _) | (Some(_), _, Some(_)) => Err(ConfigError::Conflict(
            "set either TARGET_BACKLOG_PER_TASK or ACCEPTABLE_LATENCY_SECONDS with \
             AVG_PROCESSING_SECONDS, not both",
        )),
        (Some(target), None, None) => Ok(Some(target)),
        (None, Some(latency), Some(processing)) => {
            BacklogTarget::from_latency(latency, processing).map(Some).ok_or_else(|| {
                ConfigError::invalid(
                    ACCEPTABLE_LATENCY_SECONDS.name,
                    &latency.to_string(),
                    format!(
                        "÷ AVG_PROCESSING_SECONDS={processing} gives {}; {TARGET_RANGE}",
                        latency / processing
                    ),
                )
            })
        }
        (None, Some(_), None) => Err(ConfigError::Missing {
            name: AVG_PROCESSING_SECONDS.name,
            reason: "ACCEPTABLE_LATENCY_SECONDS is set, and the target is latency ÷ processing time",
        }),
        (None, None, Some(_)) => Err(ConfigError::Missing {
            name: ACCEPTABLE_LATENCY_SECONDS.name,
            reason: "AVG_PROCESSING_SECONDS is set, and the target is latency ÷ processing time",
        }),
        (None, None, None) => Ok(None),
    }
}

fn storage_resolution<F: Fn(&str) -> Option<String>>(
    vars: &Vars<F>,
) -> Result<StorageResolution, ConfigError> {
    match vars.get(STORAGE_RESOLUTION.name).as_deref() {
        None | Some("60") => Ok(StorageResolution::Standard),
        Some("1") => Ok(StorageResolution::High),
        Some(other) => {
            Err(ConfigError::invalid(STORAGE_RESOLUTION.name, other, "expected 60 or 1"))
        }
    }
}

fn backlog_includes<F: Fn(&str) -> Option<String>>(
    vars: &Vars<F>,
) -> Result<BacklogIncludes, ConfigError> {
    let Some(value) = vars.get(BACKLOG_INCLUDES.name) else {
        return Ok(BacklogIncludes::default());
    };
    value.parse().map_err(|e: SettingError| {
        ConfigError::invalid(BACKLOG_INCLUDES.name, &value, e.to_string())
    })
}

fn task_count<F: Fn(&str) -> Option<String>>(vars: &Vars<F>) -> Result<TaskCountMode, ConfigError> {
    let Some(value) = vars.get(TASK_COUNT.name) else {
        return Ok(TaskCountMode::default());
    };
    value
        .parse()
        .map_err(|e: SettingError| ConfigError::invalid(TASK_COUNT.name, &value, e.to_string()))
}

fn sampling<F: Fn(&str) -> Option<String>>(vars: &Vars<F>) -> Result<Sampling, ConfigError> {
    let samples = vars.whole_or_default(&SAMPLES_PER_INVOCATION)?;
    match vars.whole(&SAMPLE_INTERVAL_SECONDS)? {
        None if samples > 1 => Err(ConfigError::Missing {
            name: SAMPLE_INTERVAL_SECONDS.name,
            reason: "SAMPLES_PER_INVOCATION is above 1",
        }),
        None => Ok(Sampling::default()),
        Some(seconds) => Ok(Sampling {
            samples: u32::try_from(samples).unwrap_or(u32::MAX),
            interval: Duration::from_secs(seconds),
        }),
    }
}

#[cfg(test)]
mod tests;
