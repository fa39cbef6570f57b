//! The consumer on Lambda Managed Instances (`ConsumerCapacityProviderArn`):
//! a function of its own, since AWS fixes a function's compute type when it
//! is created and SAM's `CapacityProviderConfig` takes no `Fn::If`. It must
//! stay the default consumer in everything but what Managed Instances change,
//! and whatever names the consumer must name the one deployed.

use serde_norway::Value;

use crate::template::{if_branches, reference, resource, template};

#[test]
fn the_managed_consumer_is_the_default_one_on_a_capacity_provider() {
    let template = template();
    let resources = &template["Resources"];
    assert_eq!(
        (
            resources["ConsumerFunction"]["Condition"].as_str(),
            resources["ConsumerManagedFunction"]["Condition"].as_str()
        ),
        (Some("IsLambdaConsumerOnDefaultCompute"), Some("IsLambdaConsumerOnManagedInstances"))
    );
    assert_eq!(
        resources["ConsumerFunction"]["Metadata"], resources["ConsumerManagedFunction"]["Metadata"],
        "built from the same binary"
    );
    let mut default = resource(&template, "ConsumerFunction").as_mapping().unwrap().clone();
    let mut managed = resource(&template, "ConsumerManagedFunction").as_mapping().unwrap().clone();
    let take = |properties: &mut serde_norway::Mapping, name: &str| {
        properties.remove(name).unwrap_or_else(|| panic!("{name} is missing"))
    };
    // Different names: switching creates the new function before the old one is deleted.
    assert_ne!(take(&mut default, "FunctionName"), take(&mut managed, "FunctionName"));
    assert_eq!(take(&mut managed, "MemorySize").as_u64(), Some(2048), "AWS's smallest");
    take(&mut default, "MemorySize");
    take(&mut default, "ReservedConcurrentExecutions");
    let capacity = take(&mut managed, "CapacityProviderConfig");
    assert_eq!(reference(&capacity["Arn"]), "ConsumerCapacityProviderArn");
    let (when, per_environment, otherwise) =
        if_branches(&capacity["PerExecutionEnvironmentMaxConcurrency"]);
    assert_eq!(when, "HasConcurrencyPerEnvironment");
    assert_eq!(reference(per_environment), "ConsumerConcurrencyPerEnvironment");
    assert_eq!(reference(otherwise), "AWS::NoValue");
    assert_eq!(default, managed, "the same environment, role, logs, runtime and timeout");
}

#[test]
fn whatever_names_the_consumer_names_the_one_deployed() {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../template.yaml")).unwrap();
    // `!Ref ConsumerFunction` itself, not `!Ref ConsumerFunctionWorkQueue`.
    let names_the_function = |line: &&str| {
        line.match_indices("!Ref ConsumerFunction").any(|(at, found)| {
            !line[at + found.len()..].starts_with(|c: char| c.is_ascii_alphanumeric())
        })
    };
    let naming: Vec<&str> = text.lines().filter(names_the_function).collect();
    assert!(!naming.is_empty());
    for line in naming {
        assert!(
            line.contains(
                "!If [OnManagedInstances, !Ref ConsumerManagedFunction, !Ref ConsumerFunction]"
            ),
            "names only the default consumer: {line}"
        );
    }
    let template = template();
    let parameters = &template["Parameters"];
    for name in ["ConsumerCapacityProviderArn", "ConsumerConcurrencyPerEnvironment"] {
        assert!(matches!(parameters[name], Value::Mapping(_)), "{name}");
    }
}
