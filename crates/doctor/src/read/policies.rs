//! What each scaling policy follows, and, for a customized metric that no publisher doctor
//! found puts, whether CloudWatch holds recent datapoints of it.

use std::time::{Duration, SystemTime};

use aws_sdk_applicationautoscaling::types::ScalingPolicy;
use aws_sdk_cloudwatch::operation::get_metric_data::GetMetricDataError;
use aws_sdk_cloudwatch::primitives::DateTime;
use aws_sdk_cloudwatch::types::{Dimension, Metric, MetricDataQuery, MetricStat};

use super::{Clients, Limiters, slot, unreadable};
use crate::deployment::{Deployment, Follows, Policy, PolicyMetric, RECENT_HOURS};

/// What `policy` follows: a predefined metric, its customized metric (or each metric its
/// metric math reads), or the alarms of a step policy.
pub(super) fn policy_of(policy: &ScalingPolicy) -> Policy {
    let name = policy.policy_name();
    let Some(tracking) = policy.target_tracking_scaling_policy_configuration() else {
        return Policy::new(name, Follows::Step);
    };
    let tracked = |follows| {
        let mut policy = Policy::new(name, follows);
        policy.target_value = Some(tracking.target_value());
        policy
    };
    if let Some(predefined) = tracking.predefined_metric_specification() {
        let metric = predefined.predefined_metric_type().as_str().to_owned();
        return tracked(Follows::Predefined(metric));
    }
    let Some(custom) = tracking.customized_metric_specification() else {
        return tracked(Follows::Custom(Vec::new()));
    };
    let mut metrics = Vec::new();
    if let Some(metric_name) = custom.metric_name() {
        let dimensions: Vec<(&str, &str)> =
            custom.dimensions().iter().map(|d| (d.name(), d.value())).collect();
        let statistic = custom.statistic().map_or("", |s| s.as_str());
        let namespace = custom.namespace().unwrap_or_default();
        metrics.push(PolicyMetric::new(namespace, metric_name, &dimensions, statistic));
    }
    for stat in custom.metrics().iter().filter_map(|query| query.metric_stat()) {
        let Some(metric) = stat.metric() else { continue };
        let dimensions: Vec<(&str, &str)> =
            metric.dimensions().iter().map(|d| (d.name(), d.value())).collect();
        metrics.push(PolicyMetric::new(
            metric.namespace().unwrap_or_default(),
            metric.metric_name().unwrap_or_default(),
            &dimensions,
            stat.stat(),
        ));
    }
    tracked(Follows::Custom(metrics))
}

/// Each policy metric no publisher target puts: does CloudWatch hold a datapoint of it in the
/// last [`RECENT_HOURS`] hours? `GetMetricData` answers for a datapoint put a moment ago, where
/// `ListMetrics` can take 15 minutes to list a new metric.
pub(super) async fn read_recent_datapoints(
    clients: &Clients,
    limiters: &Limiters,
    deployment: &mut Deployment,
) {
    let targets = deployment.publisher_targets.clone();
    for service in &mut deployment.services {
        let Some(scaling) = service.scaling.as_mut() else { continue };
        for policy in &mut scaling.policies {
            let Follows::Custom(metrics) = &mut policy.follows else { continue };
            for metric in metrics.iter_mut() {
                if targets.iter().any(|target| target.puts(metric)) {
                    continue;
                }
                slot(&limiters.cloudwatch).await;
                match recent_datapoints(&clients.cloudwatch, metric).await {
                    Ok(found) => metric.recent_datapoints = Some(found),
                    Err(error) => deployment.unreadable.push(unreadable(
                        "cloudwatch:GetMetricData",
                        &metric.describe(),
                        &error,
                    )),
                }
            }
        }
    }
}

async fn recent_datapoints(
    client: &aws_sdk_cloudwatch::Client,
    metric: &PolicyMetric,
) -> Result<bool, aws_sdk_cloudwatch::error::SdkError<GetMetricDataError>> {
    let now = SystemTime::now();
    let since = now - Duration::from_secs(u64::from(RECENT_HOURS) * 3600);
    let dimensions = metric
        .dimensions
        .iter()
        .map(|(name, value)| Dimension::builder().name(name).value(value).build())
        .collect();
    let watched = Metric::builder()
        .namespace(&metric.namespace)
        .metric_name(&metric.name)
        .set_dimensions(Some(dimensions))
        .build();
    let query = MetricDataQuery::builder()
        .id("policy")
        .metric_stat(MetricStat::builder().metric(watched).period(60).stat("SampleCount").build())
        .return_data(true)
        .build();
    let mut pages = client
        .get_metric_data()
        .start_time(DateTime::from(since))
        .end_time(DateTime::from(now))
        .metric_data_queries(query)
        .into_paginator()
        .send();
    while let Some(page) = pages.next().await {
        if page?.metric_data_results().iter().any(|result| !result.values().is_empty()) {
            return Ok(true);
        }
    }
    Ok(false)
}
