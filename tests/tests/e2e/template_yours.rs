//! What the template deploys around your own code (docs/your-code.md): your
//! function in place of batch-consumer, your worker image in place of
//! sqs-worker's, the publisher alone beside your service's own scaling; and
//! `DownstreamUrl` asked for only where our code POSTs.

use std::collections::BTreeMap;

use backpressure_core::config::variables::Reader;

use crate::template_topology::{Deployment, SCALING, parameter_set, template};

fn deploy(set: &str, changes: &[(&str, &str)]) -> Deployment {
    let mut given: BTreeMap<String, String> = parameter_set(set);
    for (name, value) in changes {
        if value.is_empty() {
            given.remove(*name);
        } else {
            given.insert((*name).to_owned(), (*value).to_owned());
        }
    }
    Deployment::new(template(), &given)
}

fn deployed(deployment: &Deployment, names: &[&str]) -> Vec<bool> {
    let resources = deployment.resources();
    names.iter().map(|name| resources.contains(*name)).collect()
}

#[test]
fn your_function_gets_the_wiring_and_batch_consumer_is_not_created() {
    let yours = deploy("lambda-own-function", &[]);
    assert_eq!(yours.refused_by(), Vec::<String>::new(), "no DownstreamUrl asked for");
    let wiring = [
        "ConsumerFunctionWorkQueue",
        "ConsumerAccessPolicy",
        "QuarantineQueue",
        "IdempotencyTable",
        "ConsumerThrottlesAlarm",
        "EventSourceMappingDroppedAlarm",
        "Dashboard",
    ];
    assert_eq!(deployed(&yours, &wiring), [true; 7]);
    let ours = ["ConsumerFunction", "ConsumerManagedFunction", "ConsumerRole", "ConsumerLogGroup"];
    assert_eq!(deployed(&yours, &ours), [false; 4]);
    assert!(yours.condition("HasOwnFunctionRole"));
    let mapping = &yours.template["Resources"]["ConsumerFunctionWorkQueue"]["Properties"];
    assert_eq!(format!("{:?}", mapping["Enabled"]), format!("{:?}", mapping_enabled()));
}

/// `!Ref ConsumerMappingEnabled`, as the template's YAML reads.
fn mapping_enabled() -> serde_norway::Value {
    serde_norway::from_str("!Ref ConsumerMappingEnabled").unwrap()
}

#[test]
fn batch_consumer_needs_a_downstream_and_your_function_needs_the_lambda_type() {
    let ours = deploy("lambda-own-function", &[("ConsumerFunctionArn", "")]);
    assert_eq!(ours.refused_by(), ["OurConsumerHasADownstream"]);
    let on_ecs = deploy(
        "lambda-own-function",
        &[("ConsumerType", "ecs"), ("EcsClusterName", "c"), ("EcsServiceName", "s")],
    );
    assert_eq!(on_ecs.refused_by(), ["OwnFunctionIsTheLambdaConsumer"]);
}

#[test]
fn your_worker_image_runs_with_its_own_health_check_and_no_downstream() {
    let yours = deploy("ecs-own-worker", &[]);
    assert_eq!(yours.refused_by(), Vec::<String>::new());
    assert_eq!(
        deployed(&yours, &["WorkerService", "WorkerTaskDefinition", "ScalableTarget"]),
        [true, true, true]
    );
    let definition = &yours.template["Resources"]["WorkerTaskDefinition"]["Properties"];
    let command = format!("{:?}", definition["ContainerDefinitions"][0]["HealthCheck"]["Command"]);
    assert!(command.contains("WorkerBinary") && !command.contains("/usr/local/bin"), "{command}");
    let sqs_worker = deploy("ecs-own-worker", &[("WorkerBinary", "")]);
    assert_eq!(sqs_worker.refused_by(), ["OurConsumerHasADownstream"], "sqs-worker POSTs");
}

#[test]
fn an_existing_scaling_target_gets_the_publisher_alone() {
    let yours = deploy("ecs-existing-scaling-target", &[]);
    assert_eq!(yours.refused_by(), Vec::<String>::new(), "no DownstreamUrl asked for");
    // The template's scaling resources: the publisher and its missing-metric alarm stay, the rest go.
    let kept: Vec<bool> = SCALING
        .iter()
        .map(|r| matches!(*r, "PublisherFunction" | "BacklogPerTaskMissingAlarm"))
        .collect();
    assert_eq!(deployed(&yours, SCALING), kept);
    assert_eq!(deployed(&yours, &["PublisherErrorsAlarm"]), [true]);
    let created_service = deploy("ecs-existing-scaling-target", &[("WorkerImage", "img")]);
    assert!(
        created_service.refused_by().contains(&"ExistingScalingTargetIsAnExistingService".into())
    );
    let metric_math = deploy("ecs-existing-scaling-target", &[("ScalingSignal", "metric-math")]);
    assert_eq!(metric_math.refused_by(), ["ExistingScalingTargetIsAnExistingService"]);
}

/// The names a `WorkerEnvironment`-shaped output lists (`{"name":"QUEUE_URL",...}`).
fn listed_names(text: &str) -> std::collections::BTreeSet<String> {
    text.split("{\"name\":\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_service_you_run_gets_its_task_roles_policy_and_its_task_definitions_lines() {
    let yours = deploy("ecs-existing-service", &[]);
    assert!(yours.condition("ReadByYourService"));
    assert_eq!(
        deployed(&yours, &["ConsumerAccessPolicy", "QuarantineQueue", "WorkerTaskDefinition"]),
        [true, true, false]
    );
    let policy = format!("{:?}", yours.template["Resources"]["ConsumerAccessPolicy"]);
    assert!(policy.contains("TaskScaleInProtection") && policy.contains("ReadByYourService"));
    let outputs = &yours.template["Outputs"];
    assert_eq!(outputs["WorkerEnvironment"]["Condition"].as_str(), Some("ReadByYourService"));
    assert_eq!(
        outputs["ConsumerAccessPolicyArn"]["Condition"].as_str(),
        Some("HasConsumerOfYours")
    );
    let text = format!("{:?}", outputs["WorkerEnvironment"]["Value"]).replace("\\\"", "\"");
    let listed = listed_names(&text);
    for needed in [
        "QUEUE_URL",
        "QUARANTINE_QUEUE_URL",
        "QUARANTINE_OVERFLOW_BUCKET",
        "IDEMPOTENCY_TABLE",
        "ENVELOPE",
    ] {
        assert!(listed.contains(needed), "{needed} not in {listed:?}");
    }
    let worker_reads = crate::template::read(Reader::Worker);
    let unread: Vec<&String> = listed.difference(&worker_reads).collect();
    assert!(unread.is_empty(), "the worker does not read {unread:?}");
    let ours = deploy("ecs-service", &[]);
    assert!(!ours.condition("ReadByYourService"), "the stack's own worker has its own task role");
}
