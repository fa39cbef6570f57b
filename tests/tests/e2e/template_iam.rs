//! `template.yaml`'s policies against the code: no wildcard actions, the
//! operator's policy holds what the CLI calls, and the idempotency table's.

use std::collections::BTreeSet;

use serde_norway::Value;

use crate::template::*;

#[test]
fn no_wildcard_actions_and_star_resources_only_with_a_condition() {
    let template = template();
    for role in ["PublisherRole", "ConsumerRole", "ConsumerAccessPolicy", "WorkerTaskRole"] {
        let policies =
            resource(&template, role).get("Policies").map_or(1, |p| p.as_sequence().unwrap().len());
        for policy in 0..policies {
            for statement in statements(&template, role, policy) {
                let actions: Vec<&str> = match &statement["Action"] {
                    Value::String(action) => vec![action.as_str()],
                    Value::Sequence(actions) => {
                        actions.iter().map(|a| a.as_str().unwrap()).collect()
                    }
                    other => panic!("{role}: unexpected Action {other:?}"),
                };
                assert!(
                    actions.iter().all(|a| !a.contains('*')),
                    "{role}: wildcard action in {actions:?}"
                );
                if statement["Resource"].as_str() == Some("*") {
                    assert!(
                        statement["Condition"].is_mapping(),
                        "{role}: Resource \"*\" without a condition"
                    );
                }
            }
        }
    }
}

#[test]
fn the_operator_policy_holds_exactly_what_the_cli_calls_apart_from_the_runtime_roles() {
    let template = template();
    let statements = &resource(&template, "OperatorPolicy")["PolicyDocument"]["Statement"];
    let statements = statements.as_sequence().unwrap();
    let actions_of = |statement: &Value| -> BTreeSet<String> {
        statement["Action"]
            .as_sequence()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_owned())
            .collect()
    };
    let statements: Vec<&Value> = statements
        .iter()
        .map(|statement| match statement {
            Value::Tagged(tagged) if tagged.tag == "!If" => &tagged.value[1],
            plain => plain,
        })
        .collect();
    let sid = |name: &str| statements.iter().find(|s| s["Sid"].as_str() == Some(name)).unwrap();
    // crates/cli/src/aws/queue.rs: the calls on the queue read from, and on the queue replayed to.
    assert_eq!(
        actions_of(sid("ReadReleaseDeleteFailedMessages")),
        names(&[
            "sqs:ReceiveMessage",
            "sqs:ChangeMessageVisibility",
            "sqs:DeleteMessage",
            "sqs:GetQueueAttributes",
            "sqs:ListDeadLetterSourceQueues",
        ])
    );
    assert_eq!(
        actions_of(sid("ReplayToWorkQueue")),
        names(&["sqs:SendMessage", "sqs:GetQueueUrl", "sqs:GetQueueAttributes"])
    );
    assert_eq!(actions_of(sid("QuarantinedBodies")), names(&["s3:GetObject", "s3:DeleteObject"]));
    // docs/doctor.md's policy, less sqs:ListQueues (for --all, which this stack's role is not for).
    let doctor_doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/doctor.md")).unwrap();
    let policy = doctor_doc.split("## The permission it needs").nth(1).unwrap();
    let policy = policy.split("```json").nth(1).unwrap().split("```").next().unwrap();
    let policy: serde_json::Value = serde_json::from_str(policy).unwrap();
    let documented: BTreeSet<String> = policy["Statement"][0]["Action"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_owned())
        .filter(|a| a != "sqs:ListQueues")
        .collect();
    let granted: BTreeSet<String> = actions_of(sid("DoctorReadsQueues"))
        .union(&actions_of(sid("DoctorReadsWhatReadsThem")))
        .cloned()
        .collect();
    assert_eq!(granted, documented, "the operator's policy grants doctor what docs/doctor.md asks");
    let doctor_queues = format!("{:?}", sid("DoctorReadsQueues")["Resource"]);
    for queue in ["QuarantineQueue.Arn", "WorkQueue.Arn", "DeadLetterQueue.Arn"] {
        assert!(doctor_queues.contains(queue), "doctor reads {queue}: {doctor_queues}");
    }
    let around = sid("DoctorReadsWhatReadsThem");
    assert_eq!(around["Resource"].as_str(), Some("*"));
    let region = format!("{:?}", around["Condition"]["StringEquals"]["aws:RequestedRegion"]);
    assert!(
        region.contains("AWS::Region"),
        "doctor's \"*\" is held to the stack's region: {region}"
    );
    assert_eq!(statements.len(), 5);
    let read_from = format!("{:?}", sid("ReadReleaseDeleteFailedMessages")["Resource"]);
    assert!(
        read_from.contains("QuarantineQueue.Arn") && read_from.contains("DeadLetterQueue.Arn"),
        "{read_from}"
    );
    let consumer = &resource(&template, "ConsumerAccessPolicy")["PolicyDocument"]["Statement"];
    let consume = consumer
        .as_sequence()
        .unwrap()
        .iter()
        .find(|s| s["Sid"].as_str() == Some("ConsumeWorkQueue"));
    assert_eq!(
        sid("ReplayToWorkQueue")["Resource"],
        consume.unwrap()["Resource"],
        "replays go to the work queue only"
    );

    let role = resource(&template, "OperatorRole");
    assert_eq!(reference(&role["ManagedPolicyArns"][0]), "OperatorPolicy");
    // The runtime roles cannot delete or read quarantine records: only the operator's can.
    for runtime in ["PublisherRole", "ConsumerRole", "ConsumerAccessPolicy", "WorkerTaskRole"] {
        let text = format!("{:?}", resource(&template, runtime));
        assert!(!text.contains("OperatorPolicy"), "{runtime} holds the operator policy");
        let policies = resource(&template, runtime)
            .get("Policies")
            .map_or(1, |p| p.as_sequence().unwrap().len());
        for policy in 0..policies {
            for statement in self::statements(&template, runtime, policy) {
                if format!("{:?}", statement["Resource"]).contains("QuarantineQueue") {
                    assert_eq!(
                        format!("{:?}", statement["Action"]),
                        format!(
                            "{:?}",
                            serde_norway::to_value(["sqs:SendMessage", "sqs:GetQueueAttributes"])
                                .unwrap()
                        ),
                        "{runtime}"
                    );
                }
            }
        }
    }
}

#[test]
fn the_idempotency_table_is_the_one_the_consumers_read_and_may_only_claim_in() {
    let template = template();
    let table = resource(&template, "IdempotencyTable");
    assert_eq!(table["BillingMode"], "PAY_PER_REQUEST");
    assert_eq!(table["KeySchema"][0]["AttributeName"], "id");
    assert_eq!(table["AttributeDefinitions"][0]["AttributeType"], "S");
    assert_eq!(table["TimeToLiveSpecification"]["AttributeName"], "expiration");
    assert_eq!(table["SSESpecification"]["SSEEnabled"], true);
    let consumer = statements(&template, "ConsumerAccessPolicy", 0);
    let claims = consumer.iter().find(|s| s["Sid"] == "IdempotencyClaims").unwrap();
    let actions: BTreeSet<String> = claims["Action"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        actions,
        names(&[
            "dynamodb:GetItem",
            "dynamodb:BatchGetItem",
            "dynamodb:PutItem",
            "dynamodb:UpdateItem",
            "dynamodb:DeleteItem"
        ])
    );
    assert!(
        format!("{:?}", claims["Resource"]).contains("IdempotencyTable"),
        "{:?}",
        claims["Resource"]
    );
    let env = &resource(&template, "ConsumerFunction")["Environment"]["Variables"];
    assert!(format!("{:?}", env["IDEMPOTENCY_TABLE"]).contains("IdempotencyTable"));
    let worker = worker_env(&template);
    assert!(format!("{:?}", worker["IDEMPOTENCY_TABLE"]).contains("IdempotencyTable"));
}
