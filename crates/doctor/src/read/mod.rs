//! Reads a live deployment with read-only calls, paced under each service's
//! API limits. A call that fails is recorded ([`Unreadable`]) and the read goes
//! on: what it would have told is then not checked, and the report says so.

mod alarms;
mod ecs;
mod lambda;
mod policies;
mod sqs;
mod wiring;

use std::collections::BTreeSet;

use backpressure_core::error::error_chain;
use backpressure_startup::rate::RateLimiter;

use crate::deployment::{Deployment, Unreadable};

/// Which queues to start from.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Scope {
    /// Each as a person gives it: a name, a URL or an ARN.
    Queues(Vec<String>),
    /// Every queue of the region.
    All,
}

/// The clients doctor reads with.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Clients {
    pub sqs: aws_sdk_sqs::Client,
    pub lambda: aws_sdk_lambda::Client,
    pub cloudwatch: aws_sdk_cloudwatch::Client,
    pub ecs: aws_sdk_ecs::Client,
    pub autoscaling: aws_sdk_applicationautoscaling::Client,
}

impl Clients {
    pub fn new(config: &aws_types::SdkConfig) -> Self {
        Self {
            sqs: aws_sdk_sqs::Client::new(config),
            lambda: aws_sdk_lambda::Client::new(config),
            cloudwatch: aws_sdk_cloudwatch::Client::new(config),
            ecs: aws_sdk_ecs::Client::new(config),
            autoscaling: aws_sdk_applicationautoscaling::Client::new(config),
        }
    }
}

/// Calls a second for each service: Lambda's control plane allows 15 a second for every
/// read of an account together, CloudWatch's DescribeAlarms 9; SQS publishes no limit for its
/// reads, and 50 a second keeps 1,000 queues to 20 s; ECS's and Application Auto Scaling's
/// describe calls share their account's budget with every console and deploy, so 5 each.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Pace {
    pub sqs: f64,
    pub lambda: f64,
    pub cloudwatch: f64,
    pub ecs: f64,
    pub autoscaling: f64,
}

impl Default for Pace {
    fn default() -> Self {
        Self { sqs: 50.0, lambda: 10.0, cloudwatch: 5.0, ecs: 5.0, autoscaling: 5.0 }
    }
}

/// One limiter a service, so one slow service does not hold the others. A rate that is not a
/// positive number leaves that service unpaced.
#[derive(Debug)]
pub(crate) struct Limiters {
    sqs: Option<RateLimiter>,
    lambda: Option<RateLimiter>,
    cloudwatch: Option<RateLimiter>,
    ecs: Option<RateLimiter>,
    autoscaling: Option<RateLimiter>,
}

impl Limiters {
    fn new(pace: Pace) -> Self {
        Self {
            sqs: RateLimiter::per_second(pace.sqs),
            lambda: RateLimiter::per_second(pace.lambda),
            cloudwatch: RateLimiter::per_second(pace.cloudwatch),
            ecs: RateLimiter::per_second(pace.ecs),
            autoscaling: RateLimiter::per_second(pace.autoscaling),
        }
    }
}

/// Waits for a slot of `limiter`.
pub(crate) async fn slot(limiter: &Option<RateLimiter>) {
    if let Some(limiter) = limiter {
        limiter.reserve(1, None).await;
    }
}

/// A failed call, as a person reads it: the service's code and message, once.
pub(crate) fn unreadable(
    action: &'static str,
    resource: &str,
    error: &(dyn std::error::Error + 'static),
) -> Unreadable {
    Unreadable::new(action, resource, error_chain(error))
}

/// Whether the queue at `url` exists: `Some(false)` when SQS says it does not, `None` when the
/// read failed (recorded in `deployment.unreadable`).
pub(crate) async fn queue_exists(
    clients: &Clients,
    limiters: &Limiters,
    url: &str,
    deployment: &mut Deployment,
) -> Option<bool> {
    slot(&limiters.sqs).await;
    match clients.sqs.get_queue_attributes().queue_url(url).send().await {
        Ok(_) => Some(true),
        Err(error) if error.as_service_error().is_some_and(|e| e.is_queue_does_not_exist()) => {
            Some(false)
        }
        Err(error) => {
            deployment.unreadable.push(unreadable("sqs:GetQueueAttributes", url, &error));
            None
        }
    }
}

/// Reads what hangs off the queues of `scope`. `progress` hears a line now and then (for
/// stderr when many queues are read).
pub async fn read(
    clients: &Clients,
    scope: &Scope,
    services: &[String],
    pace: Pace,
    progress: &(dyn Fn(&str) + Sync),
) -> Deployment {
    let limiters = Limiters::new(pace);
    let mut deployment = Deployment::default();
    let urls = sqs::queue_urls(&clients.sqs, &limiters, scope, &mut deployment).await;
    progress(&format!("reading {} queue(s)", urls.len()));
    sqs::read_queues(&clients.sqs, &limiters, &urls, &mut deployment, progress).await;
    sqs::follow_dead_letter_queues(&clients.sqs, &limiters, &mut deployment).await;
    sqs::never_unaccounted(scope, &mut deployment);
    let arns: BTreeSet<String> =
        deployment.queues.iter().filter(|q| q.asked).map(|q| q.arn.clone()).collect();
    progress("reading event source mappings");
    lambda::read_mappings(&clients.lambda, &limiters, scope, &arns, &mut deployment).await;
    lambda::read_functions(&clients.lambda, &limiters, &mut deployment).await;
    progress("reading alarms");
    alarms::read_alarms(&clients.cloudwatch, &limiters, &mut deployment).await;
    progress("reading ECS services and backlog-publishers");
    ecs::given(services, &mut deployment);
    ecs::read_publishers(clients, &limiters, matches!(scope, Scope::All), &mut deployment).await;
    ecs::read_services(clients, &limiters, &mut deployment).await;
    ecs::read_target_queues(clients, &limiters, &mut deployment).await;
    wiring::read_quarantine_queues(clients, &limiters, &mut deployment).await;
    policies::read_recent_datapoints(clients, &limiters, &mut deployment).await;
    deployment
}
