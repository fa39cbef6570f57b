//! `make rehearse SET=…` (`scripts/rehearse.py`): a parameter set of a user's own, with queues
//! of another account named as already there, deployed on the emulator that can create it,
//! read back and deleted; `deploy_stack.py` asks only for the artefacts the set deploys (the
//! Lambda set has no publisher: batch-consumer's alone).

use std::process::Output;

use e2e_tests::fixtures::{binary, unique};
use tokio::process::Command;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

async fn python(script: &str, args: &[&str]) -> Output {
    Command::new(format!("{ROOT}/.venv-sam/bin/python"))
        .arg(format!("{ROOT}/scripts/{script}"))
        .args(args)
        .output()
        .await
        .unwrap()
}

fn write_set(json: &str) -> String {
    let path = std::env::temp_dir().join(format!("{}.json", unique("rehearse-set")));
    std::fs::write(&path, json).unwrap();
    path.to_str().unwrap().to_owned()
}

fn target() -> String {
    let publisher = binary("backlog-publisher").unwrap();
    publisher.parent().unwrap().parent().unwrap().to_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_set_of_yours_for_a_service_you_run_is_rehearsed_and_deleted() {
    let cluster = unique("shop");
    let set = write_set(&format!(
        r#"{{"ConsumerType": "ecs", "EcsClusterName": "{cluster}", "EcsServiceName": "orders-worker",
            "ExistingWorkQueueArn": "arn:aws:sqs:eu-west-1:210987654321:{cluster}-orders",
            "ExistingDeadLetterQueueArn": "arn:aws:sqs:eu-west-1:210987654321:{cluster}-dlq",
            "ConsumerConcurrency": "8", "AvgProcessingSeconds": "2.5"}}"#
    ));
    let output = python("rehearse.py", &[&set, &target()]).await;
    let (stdout, stderr) =
        (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert_eq!(output.status.code(), Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("on moto: CREATE_COMPLETE"), "{stdout}");
    assert!(stdout.contains("WorkerEnvironment: [{\"name\":\"QUEUE_URL\""), "{stdout}");
    assert!(stderr.contains(&format!("the queue {cluster}-orders made on moto")), "{stderr}");
    assert!(stderr.contains("its redrive policy to the dead-letter queue"), "{stderr}");
    assert!(stderr.contains("--artefact batch-consumer left out"), "{stderr}");
    assert!(stdout.contains("moto's CloudFormation does not make"), "{stdout}");
    assert!(!stdout.contains("(unnamed)"), "{stdout}");
    assert!(stderr.contains("deleted"), "{stderr}");
    std::fs::remove_file(&set).unwrap();
}

#[tokio::test]
async fn a_set_that_deploys_a_function_asks_for_its_binary_by_name() {
    let set = format!("{ROOT}/tests/template-sets/lambda.json");
    let endpoint = std::env::var("E2E_LOCALSTACK_CLOUDFORMATION").unwrap();
    let stack = unique("artefacts");
    let args = ["create", "--endpoint", &endpoint, "--stack", &stack, "--set", &set];
    let output = python("deploy_stack.py", &args).await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "this parameter set deploys functions built from batch-consumer; give their \
             binaries:\n  --artefact batch-consumer=PATH   (for ConsumerFunction)\n"
        ),
        "{stderr}"
    );
}

#[tokio::test]
async fn a_set_naming_a_function_of_yours_is_sent_to_make_invoke() {
    let set = write_set(r#"{"ConsumerFunctionArn": "arn:aws:lambda:eu-west-1:1:function:ledger"}"#);
    let output = python("rehearse.py", &[&set, &target()]).await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.starts_with("rehearse: the set names a function of your own"), "{stderr}");
    std::fs::remove_file(&set).unwrap();
}

/// rehearse.py names the types moto skips as the deployed tests know them.
#[test]
fn rehearse_names_the_types_moto_skips_as_the_tests_do() {
    let script = std::fs::read_to_string(format!("{ROOT}/scripts/rehearse.py")).unwrap();
    for kind in super::driver::Emulator::Moto.cannot_create() {
        assert!(script.contains(&format!("\"{kind}\"")), "rehearse.py does not name {kind}");
    }
    let listed = script.split("MOTO_SKIPS = [").nth(1).unwrap().split(']').next().unwrap();
    assert_eq!(
        listed.matches("AWS::").count(),
        super::driver::Emulator::Moto.cannot_create().len()
    );
}
