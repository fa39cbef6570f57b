//! `template.yaml` deployed for real, once per parameter set in
//! `tests/template-sets/`: created on a CloudFormation emulator from the
//! template as written (only the functions' CodeUri pointed at their uploaded
//! binaries), its wiring read back through each resource's own API, run with
//! the deployed environment, updated with one parameter changed, and deleted.
//! What an emulator cannot create is named, not skipped in silence.

mod dashboard;
mod defects;
mod doctor;
mod driver;
mod rehearse;
mod run;
mod wiring;
mod yours;
mod yours_service;

use std::collections::BTreeMap;

use e2e_tests::downstream::Downstream;
use e2e_tests::fixtures::{Aws, unique};

use crate::template_topology::{Deployment, parameter_set, template};
use driver::{Emulator, Stack};
use wiring::{Checks, Deployed};

/// The set's prerequisites outside the stack, created first: a cluster of the
/// test's own (moto's CreateCluster would reset a cluster another test shares),
/// and for an existing service, that service and its queues.
async fn prerequisites(
    set: &str,
    aws: &Aws,
    downstream: &Downstream,
) -> Vec<(&'static str, String)> {
    let given = parameter_set(set);
    let mut overrides = Vec::new();
    // A set of your own code POSTs nowhere: the stack does not ask for a downstream there.
    if given.contains_key("DownstreamUrl") {
        overrides.push(("DownstreamUrl", downstream.url()));
    }
    if Emulator::for_set(set) == Emulator::Moto {
        let cluster = unique("workers");
        if given.contains_key("ExistingWorkQueueArn") {
            let (work, dlq) = aws.create_queue_with_dlq(&unique("orders")).await.unwrap();
            overrides.push(("ExistingWorkQueueArn", aws.queue_arn(&work).await.unwrap()));
            overrides.push(("ExistingDeadLetterQueueArn", aws.queue_arn(&dlq).await.unwrap()));
            aws.create_service(&cluster, &given["EcsServiceName"], 2).await.unwrap();
        } else {
            aws.ecs.create_cluster().cluster_name(&cluster).send().await.unwrap();
        }
        overrides.push(("EcsClusterName", cluster));
    }
    overrides
}

/// Every resource the set's conditions deploy is in the stack, complete, but
/// for the types the emulator cannot create; and each of those is indeed
/// missing, so the list cannot outlive the emulator's gap.
fn resources(deployed: &Deployed<'_>, checks: &mut Checks) {
    let emulator = deployed.emulator;
    let listed = deployed.read["resources"].as_object().unwrap();
    for logical in deployed.plan.resources() {
        let kind = deployed.plan.template["Resources"][logical.as_str()]["Type"]
            .as_str()
            .unwrap()
            .to_owned();
        let status = listed.get(&logical).and_then(|r| r["status"].as_str());
        if emulator.cannot_create().contains(&kind.as_str()) {
            assert_eq!(
                status,
                None,
                "{logical} ({kind}) was created: take it off {}'s list",
                emulator.name()
            );
            checks.unreadable(
                &logical,
                &format!("{} cannot create {kind} (the template tests check it)", emulator.name()),
            );
        } else {
            checks.eq(&format!("{logical} ({kind})"), status, Some("CREATE_COMPLETE"));
        }
    }
}

async fn deploy_read_run_update_delete(set: &str) {
    let emulator = Emulator::for_set(set);
    let aws = Aws::from_env().await.unwrap();
    let downstream = Downstream::start().await.unwrap();
    let overrides = prerequisites(set, &aws, &downstream).await;
    let stack = Stack::create(unique("stack"), set, &overrides).await.unwrap();

    let mut values: BTreeMap<String, String> = parameter_set(set);
    values.extend(overrides.iter().map(|(k, v)| ((*k).to_owned(), v.clone())));
    let plan = Deployment::new(template(), &values);
    let deployed = Deployed { read: stack.describe().await.unwrap(), plan: &plan, emulator };
    let mut checks = Checks::default();
    checks.eq("stack", deployed.read["status"].as_str(), Some("CREATE_COMPLETE"));
    resources(&deployed, &mut checks);
    deployed.storage(&mut checks);
    dashboard::dashboard(&deployed, &mut checks);
    let endpoint = emulator.endpoint();
    let lambda = plan.condition("IsLambdaConsumer");
    if lambda {
        deployed.lambda_consumer(&mut checks);
        if plan.condition("CreateWorkQueue") {
            doctor::finds_nothing(&deployed, &endpoint, &mut checks).await;
        }
        stack.disable_mappings().await.unwrap();
        run::lambda_consumer(&deployed, &endpoint, &downstream, &mut checks).await;
    } else {
        deployed.ecs_consumer(&mut checks);
        if plan.condition("CreatesWorkerService") {
            doctor::finds_nothing_on_the_service(&deployed, &endpoint, &mut checks).await;
            run::worker(&deployed, &endpoint, &downstream, &mut checks).await;
        }
        if plan.condition("HasPublisher") {
            run::publisher(&deployed, 10, &mut checks).await;
        }
    }
    update(&stack, lambda, &plan, &mut checks).await;

    match stack.delete().await {
        Ok(()) if plan.condition("CreateWorkQueue") => {
            let (on_stack, _) = run::clients(&endpoint).await;
            let work = deployed.physical("WorkQueue");
            let gone = on_stack.sqs.get_queue_attributes().queue_url(work).send().await;
            checks.eq("delete: work queue gone", gone.is_err(), true);
        }
        Ok(()) => checks.eq("delete: stack", "DELETE_COMPLETE", "DELETE_COMPLETE"),
        Err(error)
            if emulator == Emulator::LocalStack
                && error.to_string().contains("Unresolved resource dependencies") =>
        {
            checks.unreadable(
                "delete",
                "LocalStack refuses DeleteStack on a template with resources under a false Condition \
                 (tests/emulator-defects/delete-with-transform.yaml)",
            );
        }
        Err(error) => panic!("delete: {error}"),
    }
    println!(
        "{set} on {}:\n  held:\n    {}\n  not readable here:\n    {}",
        emulator.name(),
        checks.held.join("\n    "),
        checks.unreadable.join("\n    ")
    );
}

/// One parameter changed. On the Lambda sets it is ConsumerTimeout, which
/// moves the function's timeout and the work queue's visibility together; an
/// update that leaves it as it was stops on LocalStack 4.12
/// (tests/emulator-defects/find-in-map-update.yaml, docs/testing.md).
async fn update(stack: &Stack, lambda: bool, plan: &Deployment, checks: &mut Checks) {
    let publisher = plan.condition("HasPublisher");
    let (parameter, value) = match (lambda, publisher) {
        (true, _) => ("ConsumerTimeout", "60"),
        (false, true) => ("PublisherMemorySize", "256"),
        // Read back only through the scaling policy, which the emulators cannot create.
        (false, false) => ("TargetBacklogPerTask", "75"),
    };
    match stack.update(parameter, value).await {
        Err(error)
            if stack.emulator == Emulator::Moto
                && error.to_string().contains("references undefined resource PublisherRole") =>
        {
            return checks.unreadable(
                "update",
                "moto's UpdateStack updates resources under a false Condition that name a changed parameter, and fails on their Fn::GetAtt \
                 (tests/emulator-defects/get-att-under-false-condition-update.yaml)",
            );
        }
        result => result.unwrap(),
    }
    let updated =
        Deployed { read: stack.describe().await.unwrap(), plan, emulator: stack.emulator };
    checks.eq("update: stack", updated.read["status"].as_str(), Some("UPDATE_COMPLETE"));
    let of = |logical: &str| updated.read["resources"][logical]["read"]["configuration"].clone();
    if lambda {
        checks.eq(
            "update: consumer Timeout after ConsumerTimeout=60",
            of("ConsumerFunction")["Timeout"].as_i64(),
            Some(60),
        );
        let what = "update: work queue visibility after ConsumerTimeout=60";
        match updated.queue_attribute("WorkQueue", "VisibilityTimeout").as_str() {
            "180" if stack.emulator == Emulator::LocalStack => checks.unreadable(
                what,
                "LocalStack's queue update changes no attribute (tests/emulator-defects/queue-attribute-update.yaml)",
            ),
            read => checks.eq(what, read, "360"),
        }
    } else if publisher {
        checks.eq(
            "update: publisher MemorySize after PublisherMemorySize=256",
            of("PublisherFunction")["MemorySize"].as_i64(),
            Some(256),
        );
    }
}

#[tokio::test]
async fn lambda_set_deploys_reads_back_runs_updates_and_deletes() {
    deploy_read_run_update_delete("lambda").await;
}

#[tokio::test]
async fn lambda_provisioned_set_deploys_reads_back_runs_updates_and_deletes() {
    deploy_read_run_update_delete("lambda-provisioned").await;
}

#[tokio::test]
async fn lambda_idempotency_off_set_deploys_reads_back_runs_updates_and_deletes() {
    deploy_read_run_update_delete("lambda-idempotency-off").await;
}

#[tokio::test]
async fn ecs_service_set_deploys_reads_back_runs_updates_and_deletes() {
    deploy_read_run_update_delete("ecs-service").await;
}

#[tokio::test]
async fn ecs_existing_service_set_deploys_reads_back_runs_updates_and_deletes() {
    deploy_read_run_update_delete("ecs-existing-service").await;
}

#[tokio::test]
async fn ecs_metric_math_set_deploys_reads_back_runs_updates_and_deletes() {
    deploy_read_run_update_delete("ecs-metric-math").await;
}
