//! The `deploy/samconfig-*.toml` examples, one per consumer type: each names
//! only the template's parameters, passes its rules, and its conditions
//! deploy the consumer it says (evaluated here; no `sam deploy` runs).

use std::collections::BTreeMap;

use crate::template_topology::{Deployment, template};

fn overrides(file: &str) -> (toml::Table, BTreeMap<String, String>) {
    let path = format!("{}/../deploy/{file}", env!("CARGO_MANIFEST_DIR"));
    let config: toml::Table = toml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let deploy = config["default"]["deploy"]["parameters"].as_table().unwrap().clone();
    let global = &config["default"]["global"]["parameters"];
    let values = global["parameter_overrides"]
        .as_array()
        .unwrap()
        .iter()
        .map(|pair| {
            let (name, value) = pair.as_str().unwrap().split_once('=').unwrap();
            (name.to_owned(), value.to_owned())
        })
        .collect();
    (deploy, values)
}

#[test]
fn each_example_deploys_its_consumer_and_passes_the_rules() {
    let cases = [
        (
            "samconfig-lambda.toml",
            "lambda",
            &["ConsumerFunction"][..],
            &["PublisherFunction", "WorkerService"][..],
        ),
        (
            "samconfig-ecs.toml",
            "ecs",
            &["WorkerService", "PublisherFunction", "ScalableTarget"][..],
            &["ConsumerFunction"][..],
        ),
        (
            "samconfig-ecs-existing.toml",
            "ecs",
            &["PublisherFunction"][..],
            // A service you run keeps its own scaling: no target or policy of the stack's on it.
            &["WorkerService", "WorkQueue", "ScalableTarget", "BacklogPerTaskScalingPolicy"][..],
        ),
    ];
    for (file, consumer, deployed, absent) in cases {
        let (deploy, values) = overrides(file);
        assert_eq!(deploy["capabilities"].as_str(), Some("CAPABILITY_IAM"), "{file}");
        assert_eq!(values["ConsumerType"], consumer, "{file}");
        // Deployment::new refuses a name that is not a parameter.
        let plan = Deployment::new(template(), &values);
        // A downstream where batch-consumer or sqs-worker runs; none for an existing service.
        let ours = plan.condition("IsOurLambdaConsumer") || plan.condition("CreatesWorkerService");
        assert_eq!(
            values.get("DownstreamUrl").is_some_and(|u| u.starts_with("https://")),
            ours,
            "{file}"
        );
        assert_eq!(
            plan.refused_by(),
            Vec::<String>::new(),
            "{file}: the template's rules refuse it"
        );
        let resources = plan.resources();
        for name in deployed {
            assert!(resources.contains(*name), "{file} deploys no {name}");
        }
        for name in absent {
            assert!(!resources.contains(*name), "{file} deploys {name}");
        }
    }
}
