//! Each target tracking policy's customized metric against what is published: a policy on a
//! metric nobody puts has no data, and never scales its service.

use backlog_publisher::metrics::SCALING_LOAD;

use super::POLICY_METRIC_UNPUBLISHED;
use super::scaling_command::{Followed, put_scaling_policy};
use crate::deployment::{
    Deployment, Follows, Policy, PolicyMetric, PublisherTarget, RECENT_HOURS, Service,
};
use crate::finding::Finding;

/// The statistics that read a level, which every metric the publisher puts is. `Sum` adds up
/// every sample of a period (`SAMPLES_PER_INVOCATION` a minute), `SampleCount` counts them.
const LEVEL_STATISTICS: &[&str] = &["Average", "Minimum", "Maximum"];

pub(super) fn check(deployment: &Deployment, findings: &mut Vec<Finding>) {
    for service in
        deployment.services.iter().filter(|service| service.described && !service.missing)
    {
        let Some(scaling) = &service.scaling else { continue };
        for policy in &scaling.policies {
            let Follows::Custom(metrics) = &policy.follows else { continue };
            for metric in metrics {
                let finding = judge(deployment, service, policy, metric);
                findings.extend(finding);
            }
        }
    }
}

fn judge(
    deployment: &Deployment,
    service: &Service,
    policy: &Policy,
    metric: &PolicyMetric,
) -> Option<Finding> {
    let queue = service.queue_arns.first().map_or("", String::as_str);
    let on = format!("service {}/{}", service.cluster, service.name);
    let targets = &deployment.publisher_targets;
    if let Some(target) = targets.iter().find(|target| target.puts(metric)) {
        if LEVEL_STATISTICS.contains(&metric.statistic.as_str()) {
            return None;
        }
        let (measured, fix) = misread(service, policy, metric, target);
        return Some(Finding::new(&POLICY_METRIC_UNPUBLISHED, queue, measured, fix).on(on));
    }
    if metric.recent_datapoints != Some(false) || !deployment.publishers_known() {
        // Published by something doctor does not know, or a read failed and says so: with the
        // functions unread, a publisher putting it may be among them.
        return None;
    }
    let (measured, fix) = unpublished(deployment, service, policy, metric);
    Some(Finding::new(&POLICY_METRIC_UNPUBLISHED, queue, measured, fix).on(on))
}

/// The published metric, read with a statistic that does not read a level.
fn misread(
    service: &Service,
    policy: &Policy,
    metric: &PolicyMetric,
    target: &PublisherTarget,
) -> (String, String) {
    let measured = format!(
        "policy {} reads {} as its {}: {} puts a level each sample, which only Average, \
         Minimum or Maximum reads as one",
        policy.name,
        metric.describe(),
        metric.statistic,
        target.function
    );
    let followed = Followed {
        target: Some(target),
        metric_name: &metric.name,
        target_value: policy.target_value,
    };
    let command = put_scaling_policy(service, &policy.name, &followed);
    (measured, format!("set the policy's Statistic to Average: {command}"))
}

/// A metric nobody puts: what differs from the closest publisher's, and the fix.
fn unpublished(
    deployment: &Deployment,
    service: &Service,
    policy: &Policy,
    metric: &PolicyMetric,
) -> (String, String) {
    let mut measured = format!(
        "policy {} follows {}, which no backlog-publisher puts and CloudWatch holds no \
         datapoint of in the last {RECENT_HOURS} hours: the policy has no data and never \
         scales the service",
        policy.name,
        metric.describe()
    );
    let Some(target) = closest_target(deployment, service) else {
        let fix = format!(
            "deploy backlog-publisher with a target for {}/{} (TARGETS; docs/publisher.md) and \
             point the policy at its ScalingLoad, or at a metric something puts",
            service.cluster, service.name
        );
        return (measured, fix);
    };
    let name = metric_name_put(target, metric);
    measured.push_str(&format!(
        "; {} puts {}/{name} ({}), and this differs: {}",
        target.function,
        target.namespace,
        described(&target.dimensions()),
        differences(target, metric).join("; ")
    ));
    if metric.name == SCALING_LOAD && !target.scaling_load && names_match(target, metric) {
        let fix = format!(
            "set TARGET_LOAD_PERCENT, CONSUMER_CONCURRENCY and AVG_PROCESSING_SECONDS on {} so \
             that it puts ScalingLoad (docs/publisher.md)",
            target.function
        );
        return (measured, fix);
    }
    let followed =
        Followed { target: Some(target), metric_name: name, target_value: policy.target_value };
    let fix = format!(
        "set the policy's CustomizedMetricSpecification to Namespace {}, MetricName {name}, \
         Dimensions {}, Statistic Average: {}",
        target.namespace,
        described(&target.dimensions()),
        put_scaling_policy(service, &policy.name, &followed)
    );
    (measured, fix)
}

/// The publisher target for this service, else one on a queue it reads.
fn closest_target<'a>(
    deployment: &'a Deployment,
    service: &Service,
) -> Option<&'a PublisherTarget> {
    let targets = &deployment.publisher_targets;
    targets.iter().find(|t| t.cluster == service.cluster && t.service == service.name).or_else(
        || {
            targets.iter().find(|t| {
                deployment
                    .queue_arn_of_url(&t.queue_url)
                    .is_some_and(|arn| service.queue_arns.contains(&arn))
            })
        },
    )
}

/// The name the target puts that the policy meant: its own when the target puts it, else
/// ScalingLoad (what the docs advise).
fn metric_name_put(target: &PublisherTarget, metric: &PolicyMetric) -> &'static str {
    target.metric_names().find(|name| *name == metric.name).unwrap_or(SCALING_LOAD)
}

/// The namespace and dimensions agree; only the name or the publisher's settings do not.
fn names_match(target: &PublisherTarget, metric: &PolicyMetric) -> bool {
    let mut ours = target.dimensions();
    let mut theirs = metric.dimensions.clone();
    ours.sort();
    theirs.sort();
    target.namespace == metric.namespace && ours == theirs
}

/// Each way the policy's metric differs from what `target` puts, in the policy's terms.
fn differences(target: &PublisherTarget, metric: &PolicyMetric) -> Vec<String> {
    let mut found = Vec::new();
    if target.namespace != metric.namespace {
        found.push(format!("namespace {}, not {}", metric.namespace, target.namespace));
    }
    if !target.metric_names().any(|name| name == metric.name) {
        if metric.name == SCALING_LOAD {
            found.push(format!(
                "{} has no TARGET_LOAD_PERCENT, so puts no ScalingLoad",
                target.function
            ));
        } else {
            found.push(format!("metric {}, which it does not put", metric.name));
        }
    }
    let ours = target.dimensions();
    for (name, value) in &ours {
        match metric.dimensions.iter().find(|(theirs, _)| theirs == name) {
            None => found.push(format!("no {name} dimension")),
            Some((_, theirs)) if theirs != value => {
                found.push(format!("{name}={theirs}, not {value}"));
            }
            Some(_) => {}
        }
    }
    for (name, _) in &metric.dimensions {
        if !ours.iter().any(|(ours, _)| ours == name) {
            found.push(format!("a {name} dimension, which it does not put"));
        }
    }
    found
}

fn described(dimensions: &[(String, String)]) -> String {
    let pairs: Vec<String> = dimensions.iter().map(|(n, v)| format!("{n}={v}")).collect();
    pairs.join(", ")
}
