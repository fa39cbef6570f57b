//! `template.yaml`'s ECS worker against the code: its environment, its
//! parameter ranges, its stop timeout, its task role, and the service scaled.

use std::collections::{BTreeMap, BTreeSet};

use backpressure_app::worker_config::WorkerConfig;
use backpressure_core::config::Vars;
use backpressure_core::config::variables::Reader;
use serde_norway::Value;

use crate::template::*;

#[test]
fn worker_environment_is_what_the_worker_reads() {
    let template = template();
    let set: BTreeSet<String> = worker_env(&template).into_keys().collect();
    let read = read(Reader::Worker);
    let unknown: Vec<_> = set.difference(&read).collect();
    assert!(unknown.is_empty(), "the template sets variables the worker never reads: {unknown:?}");
    // ECS sets the agent's address; the image sets the stamp file; the long poll keeps its 20 s;
    // the store is the stack's DynamoDB table.
    let left_out: BTreeSet<String> = read.difference(&set).cloned().collect();
    assert_eq!(
        left_out,
        names(&[
            "ECS_AGENT_URI",
            "HEALTH_FILE",
            "HEALTH_MAX_SILENCE_SECONDS",
            "IDEMPOTENCY_KEY_PREFIX",
            "IDEMPOTENCY_REDIS_URL",
            "QUARANTINE_MAX_MESSAGE_BYTES",
            "RECEIVE_WAIT_SECONDS"
        ])
    );
    let function = &resource(&template, "ConsumerFunction")["Environment"]["Variables"];
    let consumer = self::read(Reader::Consumer);
    for (name, value) in worker_env(&template) {
        if consumer.contains(&name) {
            // ECS takes strings where Lambda takes a number.
            let same = |v: &Value| serde_norway::to_string(v).unwrap().replace(['"', '\''], "");
            assert_eq!(
                same(&value),
                same(&function[name.as_str()]),
                "{name}: worker and function agree"
            );
        }
    }
}

/// Every range the template allows for a worker variable is a range the worker accepts.
#[test]
fn worker_parameter_ranges_are_the_workers_own() {
    let template = template();
    let accepts = |name: &str, value: String| {
        let env: BTreeMap<&str, String> = [
            ("QUEUE_URL", "https://sqs.us-east-1.amazonaws.com/123456789012/work".to_owned()),
            (name, value),
        ]
        .into();
        WorkerConfig::from_vars(&Vars::new(move |n| env.get(n).cloned())).is_ok()
    };
    let mut checked = 0;
    let own = worker_own();
    for (name, value) in worker_env(&template) {
        if !own.contains(&name) || name == "QUEUE_URL" {
            continue;
        }
        if let Value::String(literal) = &value {
            // Set, not a parameter (WORKER_LOG_FORMAT): a value the worker takes.
            assert!(accepts(&name, literal.clone()), "{name}={literal} in the template");
            continue;
        }
        let parameter = &template["Parameters"][reference(&value).as_str()];
        let (min, max) =
            (parameter["MinValue"].as_i64().unwrap(), parameter["MaxValue"].as_i64().unwrap());
        let default = parameter["Default"].as_i64().unwrap();
        for allowed in [min, default, max] {
            assert!(
                accepts(&name, allowed.to_string()),
                "{name}={allowed} is allowed by the template"
            );
        }
        let (below, above) = ((min - 1).to_string(), (max + 1).to_string());
        assert!(!accepts(&name, below) && !accepts(&name, above), "{name}: [{min}, {max}]");
        checked += 1;
    }
    assert_eq!(
        checked, 6,
        "pollers, in flight, visibility, message timeout, drain, protection idle"
    );
}

#[test]
fn the_stop_timeout_outlasts_the_longest_drain_within_fargates_limit() {
    let template = template();
    let container = &resource(&template, "WorkerTaskDefinition")["ContainerDefinitions"][0];
    let stop = container["StopTimeout"].as_u64().unwrap();
    let drain =
        &template["Parameters"][reference(&worker_env(&template)["DRAIN_SECONDS"]).as_str()];
    let longest = drain["MaxValue"].as_u64().unwrap();
    assert!(stop >= longest + 10, "stopTimeout {stop} s leaves 10 s after a {longest} s drain");
    assert!(stop <= 120, "Fargate's stopTimeout maximum is 120 s, not {stop}");
    let check = &container["HealthCheck"]["Command"];
    assert_eq!(check[check.as_sequence().unwrap().len() - 1].as_str(), Some("healthcheck"));
}

#[test]
fn the_worker_task_role_holds_exactly_what_the_worker_calls() {
    let template = template();
    let worker = statements(&template, "WorkerTaskRole", 0);
    let actions_of = |statement: &Value| -> Vec<String> {
        match &statement["Action"] {
            Value::String(action) => vec![action.clone()],
            Value::Sequence(actions) => {
                actions.iter().map(|a| a.as_str().unwrap().to_owned()).collect()
            }
            other => panic!("unexpected Action {other:?}"),
        }
    };
    let all: BTreeSet<String> = worker.iter().copied().flat_map(actions_of).collect();
    assert_eq!(
        all,
        names(&[
            "sqs:ReceiveMessage",
            "sqs:DeleteMessage",
            "sqs:ChangeMessageVisibility",
            "sqs:GetQueueAttributes",
            "sqs:SendMessage",
            "s3:PutObject",
            "s3:GetObject",
            "s3:DeleteObject",
            "s3:ListBucket",
            "ecs:GetTaskProtection",
            "ecs:UpdateTaskProtection",
            "dynamodb:GetItem",
            "dynamodb:BatchGetItem",
            "dynamodb:PutItem",
            "dynamodb:UpdateItem",
            "dynamodb:DeleteItem",
        ])
    );
    let consumer = statements(&template, "ConsumerAccessPolicy", 0);
    let work_queue = |statements: &[&Value], sid: &str| -> Value {
        let found = statements.iter().find(|s| s["Sid"].as_str() == Some(sid));
        found.unwrap()["Resource"].clone()
    };
    let worker = &worker[..];
    let sids = [
        "ConsumeWorkQueue",
        "Quarantine",
        "QuarantineOverflow",
        "OffloadedPayloads",
        "OffloadedPayloadsDeleted",
        "OffloadedPayloadsMissingTold",
        "IdempotencyClaims",
    ];
    for sid in sids {
        assert_eq!(
            work_queue(worker, sid),
            work_queue(&consumer, sid),
            "{sid}: same resource as the function"
        );
    }
    let protection = work_queue(worker, "TaskScaleInProtection");
    let Value::Tagged(sub) = &protection else { panic!("{protection:?}") };
    assert!(sub.value.as_str().unwrap().ends_with(":task/${EcsClusterName}/*"), "{protection:?}");
}

#[test]
fn the_created_service_is_the_one_scaled_and_counted() {
    let template = template();
    let service = resource(&template, "WorkerService");
    assert_eq!(reference(&service["ServiceName"]), "EcsServiceName");
    assert_eq!(reference(&service["Cluster"]), "EcsClusterName");
    assert!(service.get("DesiredCount").is_none(), "an update would overwrite the scaled count");
    let target =
        serde_norway::to_string(&resource(&template, "ScalableTarget")["ResourceId"]).unwrap();
    assert!(
        target.contains("${WorkerService.Name}"),
        "registered after the service exists: {target}"
    );
}
