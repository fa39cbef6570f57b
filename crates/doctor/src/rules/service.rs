//! Each ECS service that reads a queue: how it scales, how it stops, and the
//! publisher targets that name it.

use super::{
    PUBLISHER_TARGET_GONE, READER_WITHOUT_HEALTH_CHECK, SERVICE_MISSING,
    SERVICE_SCALED_ON_CPU_ONLY, SERVICE_UNSCALED, STOP_TIMEOUT_BELOW_DRAIN, WORKER_UNWIRED,
};
use backlog_publisher::metrics::SCALING_LOAD;

use super::scaling_command::{Followed, put_scaling_policy};
use crate::deployment::{Deployment, PublisherTarget, Service};
use crate::finding::Finding;

/// The predefined metrics that say how busy a task's processor and memory are, not how much
/// work waits.
const RESOURCE_METRICS: &[&str] =
    &["ECSServiceAverageCPUUtilization", "ECSServiceAverageMemoryUtilization"];

pub(super) fn check(deployment: &Deployment, findings: &mut Vec<Finding>) {
    for service in
        deployment.services.iter().filter(|service| service.described && !service.missing)
    {
        let queue = service.queue_arns.first().map_or("", String::as_str);
        let on = format!("service {}/{}", service.cluster, service.name);
        let target = deployment
            .publisher_targets
            .iter()
            .find(|t| t.cluster == service.cluster && t.service == service.name);
        scaling(service, target, queue, &on, findings);
        stop_timeout(service, queue, &on, findings);
        health_check(service, queue, &on, findings);
        wiring(service, queue, &on, findings);
    }
    missing_services(deployment, findings);
    gone_targets(deployment, findings);
}

/// The policy a fix advises: on the ScalingLoad the service's publisher puts (one is deployed
/// for it, or to be).
fn load_policy(service: &Service, target: Option<&PublisherTarget>) -> String {
    let followed = Followed { target, metric_name: SCALING_LOAD, target_value: None };
    let command = put_scaling_policy(service, "scaling-load", &followed);
    if target.is_some() {
        return command;
    }
    // A policy on a metric nobody puts yet would have no data: the publisher comes first.
    format!(
        "first deploy backlog-publisher for it (the template with ConsumerType=ecs \
         EcsClusterName={} EcsServiceName={} and the queue: docs/your-code.md, a service that \
         scales itself), then: {command}",
        service.cluster, service.name
    )
}

/// A service that reads a queue and does not scale, or scales on how busy its tasks are only.
fn scaling(
    service: &Service,
    target: Option<&PublisherTarget>,
    queue: &str,
    on: &str,
    findings: &mut Vec<Finding>,
) {
    match &service.scaling {
        None => findings.push(
            Finding::new(
                &SERVICE_UNSCALED,
                queue,
                "no scalable target: its task count stays as set however far the queue's \
                 backlog grows"
                    .into(),
                format!(
                    "aws application-autoscaling register-scalable-target --service-namespace \
                     ecs --scalable-dimension ecs:service:DesiredCount --resource-id {} \
                     --min-capacity 1 --max-capacity 10 (your bounds), then a target tracking \
                     policy on backlog-publisher's ScalingLoad (docs/publisher.md): {}",
                    service.resource_id(),
                    load_policy(service, target)
                ),
            )
            .on(on.to_owned()),
        ),
        Some(scaling)
            if !scaling.policies.is_empty()
                && scaling.followed().iter().all(|m| RESOURCE_METRICS.contains(&m.as_str())) =>
        {
            findings.push(
                Finding::new(
                    &SERVICE_SCALED_ON_CPU_ONLY,
                    queue,
                    format!(
                        "its policies follow {} only: a worker waiting on its downstream stays \
                         idle by that measure while the backlog grows",
                        scaling.followed().join(", ")
                    ),
                    format!(
                        "add a target tracking policy on backlog-publisher's ScalingLoad \
                         (docs/publisher.md), beside the CPU one: {}",
                        load_policy(service, target)
                    ),
                )
                .on(on.to_owned()),
            );
        }
        _ => {}
    }
}

/// A service given with --service that ECS does not have.
fn missing_services(deployment: &Deployment, findings: &mut Vec<Finding>) {
    for service in deployment.services.iter().filter(|service| service.missing) {
        let named = deployment
            .publisher_targets
            .iter()
            .any(|t| t.cluster == service.cluster && t.name_matches(&service.name));
        if named {
            continue; // publisher-target-gone says it, with the publisher to mend.
        }
        findings.push(
            Finding::new(
                &SERVICE_MISSING,
                service.queue_arns.first().map_or("", String::as_str),
                format!(
                    "DescribeServices finds no active service {} in cluster {}",
                    service.name, service.cluster
                ),
                "give --service CLUSTER/SERVICE as `aws ecs list-services --cluster CLUSTER` \
                 names it"
                    .into(),
            )
            .on(format!("service {}/{}", service.cluster, service.name)),
        );
    }
}

/// A backlog-publisher target whose service or queue is gone.
fn gone_targets(deployment: &Deployment, findings: &mut Vec<Finding>) {
    for target in &deployment.publisher_targets {
        let gone_service = deployment
            .services
            .iter()
            .any(|s| s.missing && s.cluster == target.cluster && s.name == target.service);
        let mut gone = Vec::new();
        if gone_service {
            gone.push(format!("the service {}/{} does not exist", target.cluster, target.service));
        }
        if target.queue_missing {
            gone.push(format!("the queue {} does not exist", target.queue_url));
        }
        if gone.is_empty() {
            continue;
        }
        findings.push(
            Finding::new(
                &PUBLISHER_TARGET_GONE,
                &deployment.queue_arn_of_url(&target.queue_url).unwrap_or_default(),
                format!(
                    "{}: its target publishes nothing, and a policy on its metric has no data",
                    gone.join("; ")
                ),
                format!(
                    "remove the target from {}'s TARGETS (or its QUEUE_URL, ECS_CLUSTER_NAME, \
                     ECS_SERVICE_NAME), or point it at what runs now",
                    target.function
                ),
            )
            .on(format!("function {}", target.function)),
        );
    }
}

/// The container's stop timeout against the worker's drain: ECS kills what is still running
/// when the timeout ends.
fn stop_timeout(service: &Service, queue: &str, on: &str, findings: &mut Vec<Finding>) {
    let Some(drain) = service.drain_s else { return };
    if service.stop_timeout_s > drain {
        return;
    }
    findings.push(
        Finding::new(
            &STOP_TIMEOUT_BELOW_DRAIN,
            queue,
            format!(
                "stopTimeout {} s, the worker drains for up to {drain} s: ECS sends SIGKILL first, \
                 and the messages still in hand are delivered again after their visibility timeout",
                service.stop_timeout_s
            ),
            format!(
                "set the container's stopTimeout above {drain} (Fargate's most is 120), or \
                 DRAIN_SECONDS below {}",
                service.stop_timeout_s
            ),
        )
        .on(on.to_owned()),
    );
}

/// A worker whose polls stopped (a hung connection, a wedged runtime) stays RUNNING without a
/// health check: ECS replaces only tasks that exit or fail theirs.
fn health_check(service: &Service, queue: &str, on: &str, findings: &mut Vec<Finding>) {
    if service.reader_health_checked != Some(false) {
        return;
    }
    let fix = if service.drain_s.is_some() {
        "give the worker container \"healthCheck\": {\"command\": [\"CMD\", \"BINARY\", \
         \"healthcheck\"]}, BINARY its worker's path (/usr/local/bin/sqs-worker in sqs-worker's \
         image, your binary's in yours): it fails once no poll succeeded for \
         HEALTH_MAX_SILENCE_SECONDS"
    } else {
        "give the container a healthCheck whose command fails when it has stopped polling"
    };
    findings.push(
        Finding::new(
            &READER_WITHOUT_HEALTH_CHECK,
            queue,
            "the container reading the queue has no healthCheck: a task whose polling stopped \
             stays RUNNING and counts as capacity while the backlog grows"
                .into(),
            fix.into(),
        )
        .on(on.to_owned()),
    );
}

/// A worker on backpressure-app without what the stack gives it: `run_worker` refuses to start
/// without a quarantine queue, quarantining into one that is gone fails, and a task without a
/// role has no credentials for either.
fn wiring(service: &Service, queue: &str, on: &str, findings: &mut Vec<Finding>) {
    let Some(wiring) = &service.wiring else { return };
    let mut missing = Vec::new();
    match &wiring.quarantine_queue_url {
        None => missing.push(format!(
            "it sets {} (a backpressure-app worker's) but no QUARANTINE_QUEUE_URL, without which \
             run_worker does not start",
            wiring.marker
        )),
        Some(url) if wiring.quarantine_missing => missing.push(format!(
            "its QUARANTINE_QUEUE_URL names {url}, which does not exist: a message that fails \
             for good cannot be quarantined, so it is retried until the redrive policy takes it"
        )),
        Some(_) => {}
    }
    if !wiring.task_role {
        missing.push(
            "its task definition has no taskRoleArn: the worker's calls to SQS have no \
             credentials"
                .to_owned(),
        );
    }
    if missing.is_empty() {
        return;
    }
    findings.push(
        Finding::new(
            &WORKER_UNWIRED,
            queue,
            format!("the container reading the queue: {}", missing.join("; ")),
            "add the stack's WorkerEnvironment output to the container's environment and attach \
             its ConsumerAccessPolicyArn to the task role (docs/your-code.md, a service that \
             scales itself)"
                .into(),
        )
        .on(on.to_owned()),
    );
}
