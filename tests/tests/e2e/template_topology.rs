//! Which resources `template.yaml` deploys for each parameter set in
//! `tests/template-sets/` (the sets `scripts/sam.sh lint` also lints): its
//! conditions and rules evaluated the way CloudFormation evaluates them, by
//! doctor's evaluator, so each set deploys exactly one consumer of the work
//! queue, and a set that would deploy two, or a service without a name or a
//! network, is refused.

use std::collections::{BTreeMap, BTreeSet};

use backpressure_doctor::TemplatePlan;
use serde_norway::Value;

pub(crate) fn template() -> Value {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../template.yaml")).unwrap();
    serde_norway::from_str(&text).unwrap()
}

pub(crate) fn parameter_set(name: &str) -> BTreeMap<String, String> {
    let path = format!("{}/template-sets/{name}.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The template with its parameters given values (the defaults, overridden),
/// evaluated by doctor's evaluator (`TemplatePlan`), the one `doctor
/// --template` runs; `template` is the document as written, for the tests
/// that read a resource's properties.
pub(crate) struct Deployment {
    pub(crate) template: Value,
    plan: TemplatePlan,
}

impl Deployment {
    pub(crate) fn new(template: Value, given: &BTreeMap<String, String>) -> Self {
        let text = serde_norway::to_string(&template).unwrap();
        let plan = TemplatePlan::new("template.yaml", &text, given).unwrap();
        Self { template, plan }
    }

    /// A parameter's value, a list's members joined with commas.
    pub(crate) fn value(&self, name: &str) -> String {
        self.plan.value(name).unwrap().to_owned()
    }

    pub(crate) fn condition(&self, name: &str) -> bool {
        self.plan.condition(name).unwrap()
    }

    /// The rules whose assertions fail.
    pub(crate) fn refused_by(&self) -> Vec<String> {
        self.plan.refused_rules().unwrap()
    }

    pub(crate) fn resources(&self) -> BTreeSet<String> {
        self.plan.resources().unwrap()
    }
}

fn deploy(given: &BTreeMap<String, String>) -> Deployment {
    Deployment::new(template(), given)
}

fn has(resources: &BTreeSet<String>, names: &[&str]) -> Vec<bool> {
    names.iter().map(|n| resources.contains(*n)).collect()
}

const LAMBDA: &[&str] = &["ConsumerFunction", "ConsumerRole", "ConsumerThrottlesAlarm"];
pub(crate) const SCALING: &[&str] = &[
    "PublisherFunction",
    "ScalableTarget",
    "BacklogPerTaskScalingPolicy",
    "ScaleFromZeroPolicy",
    "ScaleFromZeroAlarm",
    "LoadScaleInPolicy",
    "LoadScaleInAlarm",
    "BacklogPerTaskMissingAlarm",
];
const WORKER: &[&str] =
    &["WorkerService", "WorkerTaskDefinition", "WorkerTaskRole", "WorkerExecutionRole"];

#[test]
fn lambda_mode_deploys_the_function_alone() {
    let deployment = deploy(&parameter_set("lambda"));
    assert_eq!(deployment.refused_by(), Vec::<String>::new());
    let resources = deployment.resources();
    assert_eq!(has(&resources, LAMBDA), [true; 3]);
    assert_eq!(has(&resources, SCALING), [false; 8], "nothing scales a service that is not there");
    assert_eq!(has(&resources, WORKER), [false; 4]);
}

#[test]
fn ecs_mode_with_an_image_deploys_the_worker_service_and_scales_it() {
    let deployment = deploy(&parameter_set("ecs-service"));
    assert_eq!(deployment.refused_by(), Vec::<String>::new());
    let resources = deployment.resources();
    assert_eq!(has(&resources, WORKER), [true; 4]);
    assert_eq!(has(&resources, SCALING), [true; 8]);
    assert_eq!(has(&resources, LAMBDA), [false; 3], "one consumer: no Lambda beside the service");
    assert!(resources.contains("WorkQueue") && resources.contains("DeadLetterQueue"));
}

#[test]
fn backlog_per_task_scaling_leaves_out_the_load_scale_in() {
    let mut given = parameter_set("ecs-existing-service");
    given.insert("ScalingSignal".to_owned(), "backlog-per-task".to_owned());
    given.insert("ScalingTarget".to_owned(), "create".to_owned());
    let deployment = deploy(&given);
    assert_eq!(deployment.refused_by(), Vec::<String>::new());
    let resources = deployment.resources();
    assert_eq!(has(&resources, SCALING), [true, true, true, true, true, false, false, true]);
}

#[test]
fn ecs_mode_without_an_image_leaves_the_existing_services_scaling_unless_asked() {
    let deployment = deploy(&parameter_set("ecs-existing-service"));
    assert_eq!(deployment.refused_by(), Vec::<String>::new());
    let resources = deployment.resources();
    // The publisher and its missing-metric alarm; no scalable target, policy or their alarms.
    let publisher_alone: Vec<bool> = SCALING
        .iter()
        .map(|r| matches!(*r, "PublisherFunction" | "BacklogPerTaskMissingAlarm"))
        .collect();
    assert_eq!(has(&resources, SCALING), publisher_alone);
    assert_eq!(has(&resources, WORKER), [false; 4]);
    assert_eq!(has(&resources, LAMBDA), [false; 3]);
    assert!(!resources.contains("WorkQueue"), "the existing queue is used");

    let mut asked = parameter_set("ecs-existing-service");
    asked.insert("ScalingTarget".to_owned(), "create".to_owned());
    let asked = deploy(&asked);
    assert_eq!(asked.refused_by(), Vec::<String>::new());
    assert_eq!(has(&asked.resources(), SCALING), [true; 8], "ScalingTarget=create scales it");

    let mut metric_math = parameter_set("ecs-existing-service");
    metric_math.insert("ScalingSignal".to_owned(), "metric-math".to_owned());
    let refused = deploy(&metric_math).refused_by();
    assert_eq!(refused, ["AnExistingServiceKeepsItsScalingUnlessAsked"]);
    metric_math.insert("ScalingTarget".to_owned(), "create".to_owned());
    assert_eq!(deploy(&metric_math).refused_by(), Vec::<String>::new());
}

#[test]
fn provisioned_pollers_replace_the_maximum_concurrency() {
    let provisioned = deploy(&parameter_set("lambda-provisioned"));
    assert_eq!(provisioned.refused_by(), Vec::<String>::new());
    assert!(provisioned.condition("HasProvisionedPollers"));
    assert!(!provisioned.condition("HasMaximumConcurrency"), "no ScalingConfig, no reservation");
    let standard = deploy(&parameter_set("lambda"));
    assert!(!standard.condition("HasProvisionedPollers"));
    assert!(standard.condition("HasMaximumConcurrency"));
    let resources = standard.resources();
    for alarm in ["EventSourceMappingDroppedAlarm", "EventSourceMappingFailedInvokesAlarm"] {
        assert!(resources.contains(alarm), "{alarm}");
    }
}

#[test]
fn a_second_consumer_or_a_service_without_name_or_subnets_is_refused() {
    let with = |base: &str, changes: &[(&str, &str)]| {
        let mut set = parameter_set(base);
        for (name, value) in changes {
            set.insert((*name).to_owned(), (*value).to_owned());
        }
        deploy(&set).refused_by()
    };
    for (base, changes, rule) in [
        (
            "lambda",
            &[("EcsClusterName", "workers"), ("EcsServiceName", "w")][..],
            "OneConsumerWithLambda",
        ),
        ("lambda", &[("WorkerImage", "sqs-worker:1")][..], "OneConsumerWithLambda"),
        ("ecs-existing-service", &[("EcsServiceName", "")][..], "EcsConsumerIsNamed"),
        ("ecs-service", &[("EcsClusterName", "")][..], "EcsConsumerIsNamed"),
        ("ecs-service", &[("WorkerSubnetIds", "")][..], "WorkerServiceHasSubnets"),
        ("lambda-provisioned", &[("MaximumConcurrency", "5")][..], "ProvisionedPollersAlone"),
        (
            "lambda",
            &[("ProvisionedMinimumPollers", "2"), ("ProvisionedMaximumPollers", "20")][..],
            "ProvisionedPollersAlone",
        ),
        (
            "lambda-provisioned",
            &[("ProvisionedMaximumPollers", "0")][..],
            "ProvisionedPollersAlone",
        ),
        (
            "lambda-provisioned",
            &[("ProvisionedMinimumPollers", "1")][..],
            "ProvisionedPollersAlone",
        ),
        ("lambda", &[("MaximumConcurrency", "1")][..], "MaximumConcurrencyIsValid"),
    ] {
        assert_eq!(with(base, changes), [rule], "{base} with {changes:?}");
    }
}
