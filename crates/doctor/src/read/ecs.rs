//! The ECS services that read the queues (given with `--service`, or named by
//! a deployed backlog-publisher's targets), their task definitions, scalable
//! targets and scaling policies.

use std::collections::{BTreeMap, BTreeSet};

use aws_sdk_applicationautoscaling::types::{ScalableDimension, ServiceNamespace};
use backlog_publisher::config::PublisherConfig;
use backpressure_core::config::Vars;

use super::{Clients, Limiters, slot, unreadable};
use crate::deployment::{Deployment, PublisherTarget, Scaling, Service, Wiring};

/// `CLUSTER/SERVICE` as given with `--service`.
pub(super) fn given(services: &[String], deployment: &mut Deployment) {
    for given in services {
        let (cluster, name) = given.split_once('/').unwrap_or(("default", given));
        if !deployment.services.iter().any(|s| s.cluster == cluster && s.name == name) {
            deployment.services.push(Service::new(cluster, name));
        }
    }
}

/// The deployed backlog-publishers: every function whose environment names targets. A
/// target on a queue read here (or any, with `all`) adds its service.
pub(super) async fn read_publishers(
    clients: &Clients,
    limiters: &Limiters,
    all: bool,
    deployment: &mut Deployment,
) {
    let asked: BTreeSet<String> =
        deployment.queues.iter().filter(|q| q.asked).map(|q| q.arn.clone()).collect();
    let mut pages = clients.lambda.list_functions().into_paginator().send();
    loop {
        slot(&limiters.lambda).await;
        match pages.next().await {
            None => break,
            Some(Ok(page)) => {
                for function in page.functions() {
                    let variables = function.environment().and_then(|e| e.variables());
                    let Some(variables) = variables else { continue };
                    let name = function.function_name().unwrap_or_default();
                    for target in targets(name, variables) {
                        let arn =
                            deployment.queue_arn_of_url(&target.queue_url).unwrap_or_default();
                        if all || asked.contains(&arn) {
                            deployment.publisher_targets.push(target);
                        }
                    }
                }
            }
            Some(Err(error)) => {
                deployment.unreadable.push(unreadable("lambda:ListFunctions", "*", &error));
                break;
            }
        }
    }
    let targets = deployment.publisher_targets.clone();
    for target in targets {
        let arn = deployment.queue_arn_of_url(&target.queue_url).unwrap_or_default();
        match deployment
            .services
            .iter_mut()
            .find(|s| s.cluster == target.cluster && s.name == target.service)
        {
            Some(service) => service.queue_arns.push(arn),
            None => {
                let mut service = Service::new(&target.cluster, &target.service);
                service.queue_arns.push(arn);
                deployment.services.push(service);
            }
        }
    }
}

/// A publisher's targets, read from its environment as backlog-publisher reads it. A function
/// whose environment does not parse as a publisher's names none (it would not run as one).
fn targets(
    function: &str,
    variables: &std::collections::HashMap<String, String>,
) -> Vec<PublisherTarget> {
    let names_targets = variables.contains_key("TARGETS")
        || ["QUEUE_URL", "ECS_CLUSTER_NAME", "ECS_SERVICE_NAME"]
            .iter()
            .all(|name| variables.contains_key(*name));
    if !names_targets {
        return Vec::new();
    }
    let vars = Vars::new(|name: &str| variables.get(name).cloned());
    let Ok(config) = PublisherConfig::from_vars(&vars) else { return Vec::new() };
    config
        .targets
        .iter()
        .map(|target| {
            let mut found = PublisherTarget::new(
                function,
                target.queue.url(),
                target.cluster_name(),
                target.service_name(),
            );
            found.namespace.clone_from(&config.namespace);
            found.scaling_load = config.load.is_some();
            found.target_load_percent = config.load.map(|load| load.target_percent);
            found
        })
        .collect()
}

/// Each service: whether it exists, its task's stop timeout and the worker's drain, its
/// scalable target and policies.
pub(super) async fn read_services(
    clients: &Clients,
    limiters: &Limiters,
    deployment: &mut Deployment,
) {
    let mut by_cluster: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (index, service) in deployment.services.iter().enumerate() {
        by_cluster.entry(service.cluster.clone()).or_default().push(index);
    }
    for (cluster, indexes) in by_cluster {
        // DescribeServices takes ten services a call.
        for chunk in indexes.chunks(10) {
            let names: Vec<String> =
                chunk.iter().map(|&i| deployment.services[i].name.clone()).collect();
            slot(&limiters.ecs).await;
            let described = clients
                .ecs
                .describe_services()
                .cluster(&cluster)
                .set_services(Some(names))
                .send()
                .await;
            let output = match described {
                Ok(output) => output,
                Err(error) => {
                    deployment.unreadable.push(unreadable(
                        "ecs:DescribeServices",
                        &cluster,
                        &error,
                    ));
                    continue;
                }
            };
            for &index in chunk {
                deployment.services[index].described = true;
                let name = deployment.services[index].name.clone();
                let found =
                    output.services().iter().find(|s| s.service_name() == Some(name.as_str()));
                let active = found.filter(|s| s.status() == Some("ACTIVE"));
                let Some(task_definition) = active.and_then(|s| s.task_definition()) else {
                    deployment.services[index].missing = true;
                    continue;
                };
                let task_definition = task_definition.to_owned();
                task(clients, limiters, &task_definition, index, deployment).await;
                scaling(clients, limiters, index, deployment).await;
            }
        }
    }
}

async fn task(
    clients: &Clients,
    limiters: &Limiters,
    arn: &str,
    index: usize,
    deployment: &mut Deployment,
) {
    slot(&limiters.ecs).await;
    let described = clients.ecs.describe_task_definition().task_definition(arn).send().await;
    let output = match described {
        Ok(output) => output,
        Err(error) => {
            deployment.unreadable.push(unreadable("ecs:DescribeTaskDefinition", arn, &error));
            return;
        }
    };
    let containers =
        output.task_definition().map(|t| t.container_definitions()).unwrap_or_default();
    let queue_of = |url: &str| deployment.queue_arn_of_url(url);
    let mut queues = Vec::new();
    let (mut worker_stop, mut least_stop, mut drain) = (None, None::<u32>, None);
    let mut reader_health_checked = None;
    let mut wiring = None;
    for container in containers {
        // ECS's default when the container does not say (Fargate's, and the agent's own).
        let stop = container.stop_timeout().and_then(|s| u32::try_from(s).ok()).unwrap_or(30);
        least_stop = Some(least_stop.map_or(stop, |least| least.min(stop)));
        let variable = |name: &str| {
            container
                .environment()
                .iter()
                .find(|kv| kv.name() == Some(name))
                .and_then(|kv| kv.value())
        };
        if let Some(seconds) = variable("DRAIN_SECONDS").and_then(|d| d.parse().ok()) {
            // The drain is the worker container's, so its own stop timeout is the one that counts.
            drain = Some(seconds);
            worker_stop = Some(stop);
        }
        let reads_queue = variable("QUEUE_URL").is_some() || variable("DRAIN_SECONDS").is_some();
        if reads_queue {
            let checked = container.health_check().is_some();
            reader_health_checked = Some(reader_health_checked.unwrap_or(true) && checked);
            let names = container.environment().iter().filter_map(|kv| kv.name());
            if let Some(marker) = names.into_iter().find(|name| super::wiring::marks_ours(name)) {
                let quarantine = variable("QUARANTINE_QUEUE_URL").map(str::to_owned);
                let task_role = output.task_definition().and_then(|t| t.task_role_arn()).is_some();
                wiring = Some(Wiring::new(marker, quarantine, task_role));
            }
        }
        if let Some(arn) = variable("QUEUE_URL").and_then(queue_of) {
            queues.push(arn);
        }
    }
    let service = &mut deployment.services[index];
    service.stop_timeout_s = worker_stop.or(least_stop).unwrap_or(30);
    service.drain_s = drain;
    service.reader_health_checked = reader_health_checked;
    service.wiring = wiring;
    for arn in queues {
        if !service.queue_arns.contains(&arn) {
            service.queue_arns.push(arn);
        }
    }
}

async fn scaling(
    clients: &Clients,
    limiters: &Limiters,
    index: usize,
    deployment: &mut Deployment,
) {
    let resource_id = deployment.services[index].resource_id();
    slot(&limiters.autoscaling).await;
    let targets = clients
        .autoscaling
        .describe_scalable_targets()
        .service_namespace(ServiceNamespace::Ecs)
        .scalable_dimension(ScalableDimension::EcsServiceDesiredCount)
        .resource_ids(&resource_id)
        .send()
        .await;
    let target = match targets {
        Ok(output) => output.scalable_targets().first().cloned(),
        Err(error) => {
            let read =
                unreadable("application-autoscaling:DescribeScalableTargets", &resource_id, &error);
            deployment.unreadable.push(read);
            return;
        }
    };
    let Some(target) = target else { return };
    slot(&limiters.autoscaling).await;
    let policies = clients
        .autoscaling
        .describe_scaling_policies()
        .service_namespace(ServiceNamespace::Ecs)
        .scalable_dimension(ScalableDimension::EcsServiceDesiredCount)
        .resource_id(&resource_id)
        .send()
        .await;
    let metrics = match policies {
        Ok(output) => output.scaling_policies().iter().map(super::policies::policy_of).collect(),
        Err(error) => {
            let read =
                unreadable("application-autoscaling:DescribeScalingPolicies", &resource_id, &error);
            deployment.unreadable.push(read);
            return;
        }
    };
    let bound = |value: i32| u32::try_from(value).unwrap_or(0);
    deployment.services[index].scaling =
        Some(Scaling::new(bound(target.min_capacity()), bound(target.max_capacity()), metrics));
}

/// Each publisher target whose queue is not among those read: does it exist?
pub(super) async fn read_target_queues(
    clients: &Clients,
    limiters: &Limiters,
    deployment: &mut Deployment,
) {
    let known: BTreeSet<String> = deployment.queues.iter().map(|q| q.url.clone()).collect();
    for index in 0..deployment.publisher_targets.len() {
        let url = deployment.publisher_targets[index].queue_url.clone();
        if known.contains(&url) {
            continue;
        }
        if super::queue_exists(clients, limiters, &url, deployment).await == Some(false) {
            deployment.publisher_targets[index].queue_missing = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::targets;

    const QUEUE: &str = "https://sqs.us-east-1.amazonaws.com/123456789012/orders";

    fn environment(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    #[test]
    fn a_publishers_targets_are_read_as_the_publisher_reads_them() {
        let json = format!(r#"[{{"queueUrl":"{QUEUE}","cluster":"workers","service":"w"}}]"#);
        let found = targets("pub", &environment(&[("TARGETS", &json)]));
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].cluster.as_str(), found[0].service.as_str()), ("workers", "w"));
        assert_eq!(found[0].queue_url, QUEUE);
        let single = environment(&[
            ("QUEUE_URL", QUEUE),
            ("ECS_CLUSTER_NAME", "arn:aws:ecs:us-east-1:123456789012:cluster/workers"),
            ("ECS_SERVICE_NAME", "w"),
        ]);
        let found = targets("pub", &single);
        assert_eq!((found[0].cluster.as_str(), found[0].service.as_str()), ("workers", "w"));
        assert!(targets("other", &environment(&[("QUEUE_URL", QUEUE)])).is_empty());
        assert!(targets("broken", &environment(&[("TARGETS", "not json")])).is_empty());
    }
}
