//! The CloudWatch alarms on the queues' metrics.

use std::collections::BTreeSet;

use aws_sdk_cloudwatch::Client;
use aws_sdk_cloudwatch::types::{Dimension, MetricAlarm};

use super::{Limiters, slot, unreadable};
use crate::deployment::{Alarm, Deployment};

/// Every metric alarm of the region, kept when it reads an `AWS/SQS` metric of a queue read.
pub(super) async fn read_alarms(client: &Client, limiters: &Limiters, deployment: &mut Deployment) {
    let names: BTreeSet<&str> = deployment.queues.iter().map(|queue| queue.name.as_str()).collect();
    let mut alarms = Vec::new();
    let mut pages = client.describe_alarms().into_paginator().send();
    loop {
        slot(&limiters.cloudwatch).await;
        match pages.next().await {
            None => break,
            Some(Ok(page)) => alarms.extend(
                page.metric_alarms()
                    .iter()
                    .filter_map(alarm_of)
                    .filter(|alarm| alarm.queue_names.iter().any(|n| names.contains(n.as_str()))),
            ),
            Some(Err(error)) => {
                deployment.unreadable.push(unreadable("cloudwatch:DescribeAlarms", "*", &error));
                break;
            }
        }
    }
    deployment.alarms = alarms;
}

/// The `AWS/SQS` metrics an alarm reads, alone or in metric math, and their queues.
fn alarm_of(found: &MetricAlarm) -> Option<Alarm> {
    let mut metrics = Vec::new();
    let mut queue_names = Vec::new();
    let mut take = |namespace: Option<&str>, metric: Option<&str>, dimensions: &[Dimension]| {
        if namespace != Some("AWS/SQS") {
            return;
        }
        let queues = dimensions.iter().filter(|d| d.name() == Some("QueueName"));
        queue_names.extend(queues.filter_map(|d| d.value()).map(str::to_owned));
        metrics.extend(metric.map(str::to_owned));
    };
    take(found.namespace(), found.metric_name(), found.dimensions());
    for query in found.metrics() {
        if let Some(metric) = query.metric_stat().and_then(|stat| stat.metric()) {
            take(metric.namespace(), metric.metric_name(), metric.dimensions());
        }
    }
    if metrics.is_empty() {
        return None;
    }
    let mut alarm = Alarm::new(found.alarm_name().unwrap_or_default(), "", "");
    alarm.metrics = metrics;
    alarm.queue_names = queue_names;
    Some(alarm)
}
