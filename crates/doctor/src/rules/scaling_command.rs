//! The `put-scaling-policy` command a fix gives, whole, so it can be pasted: a target tracking
//! policy on the metric a backlog-publisher puts for the service.

use backlog_publisher::metrics::SCALING_LOAD;
use backpressure_core::config::DEFAULT_NAMESPACE;

use crate::deployment::{PublisherTarget, Service};

/// `TARGET_LOAD_PERCENT`'s default, as the template and the docs give it.
const DEFAULT_TARGET_LOAD_PERCENT: f64 = 120.0;

/// What the policy should follow: a target's metric, or, with no publisher yet, the
/// `ScalingLoad` one would put for the service's queue.
pub(super) struct Followed<'a> {
    pub(super) target: Option<&'a PublisherTarget>,
    pub(super) metric_name: &'a str,
    pub(super) target_value: Option<f64>,
}

/// `aws application-autoscaling put-scaling-policy` for `service`, named `policy_name`.
pub(super) fn put_scaling_policy(
    service: &Service,
    policy_name: &str,
    followed: &Followed,
) -> String {
    let (namespace, dimensions) = match followed.target {
        Some(target) => (target.namespace.clone(), target.dimensions()),
        None => {
            let queue = service.queue_arns.first().and_then(|arn| arn.rsplit(':').next());
            let values =
                [service.cluster.as_str(), service.name.as_str(), queue.unwrap_or("QUEUE")];
            let names = backlog_publisher::metrics::DIMENSION_NAMES;
            let pairs = names.iter().zip(values).map(|(n, v)| ((*n).to_owned(), v.to_owned()));
            (DEFAULT_NAMESPACE.to_owned(), pairs.collect())
        }
    };
    let target_value = followed.target_value.unwrap_or_else(|| {
        let load = followed.target.and_then(|t| t.target_load_percent);
        if followed.metric_name == SCALING_LOAD {
            load.unwrap_or(DEFAULT_TARGET_LOAD_PERCENT)
        } else {
            0.0
        }
    });
    // Structs, not a map: their fields keep this order whatever serde_json's features are.
    let configuration = Configuration {
        target_value,
        customized_metric_specification: Specification {
            namespace,
            metric_name: followed.metric_name,
            statistic: "Average",
            dimensions: dimensions
                .into_iter()
                .map(|(name, value)| Dimension { name, value })
                .collect(),
        },
    };
    let configuration = serde_json::to_string(&configuration).unwrap_or_default();
    format!(
        "aws application-autoscaling put-scaling-policy --service-namespace ecs \
         --scalable-dimension ecs:service:DesiredCount --resource-id {} --policy-name {} \
         --policy-type TargetTrackingScaling --target-tracking-scaling-policy-configuration '{}'",
        service.resource_id(),
        policy_name,
        configuration
    )
}

#[derive(serde::Serialize)]
#[serde(rename_all = "PascalCase")]
struct Configuration<'a> {
    target_value: f64,
    customized_metric_specification: Specification<'a>,
}

#[derive(serde::Serialize)]
#[serde(rename_all = "PascalCase")]
struct Specification<'a> {
    namespace: String,
    metric_name: &'a str,
    statistic: &'a str,
    dimensions: Vec<Dimension>,
}

#[derive(serde::Serialize)]
#[serde(rename_all = "PascalCase")]
struct Dimension {
    name: String,
    value: String,
}
