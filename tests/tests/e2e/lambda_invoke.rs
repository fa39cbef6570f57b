//! `lambda-invoke` (and `make invoke BINARY=…`): a Lambda function binary of anyone's, run on an
//! event file under this repository's Runtime API host. The library's ledger example answers
//! the repository's SQS event with partial batch failures and quarantines in the queue its
//! `--env-file` names; what a person gets wrong is one sentence and exit 2.

use std::process::Command;

use e2e_tests::fixtures::{Aws, binary, unique};
use serde_json::Value;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

fn lambda_invoke(args: &[&str]) -> (Option<i32>, String, String) {
    let output = Command::new(binary("lambda-invoke").unwrap()).args(args).output().unwrap();
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    (output.status.code(), text(&output.stdout), text(&output.stderr))
}

#[tokio::test]
async fn any_function_binary_runs_on_an_event_file_with_its_variables() {
    let aws = Aws::from_env().await.unwrap();
    let quarantine = aws.create_queue(&unique("invoke-quarantine")).await.unwrap();
    let env_file = std::env::temp_dir().join(unique("invoke-env"));
    let lines =
        format!("# the stack's variables\nQUARANTINE_QUEUE_URL={quarantine}\nIDEMPOTENCY_TABLE=\n");
    std::fs::write(&env_file, lines).unwrap();
    let ledger = binary("examples/ledger").unwrap();
    let event = format!("{ROOT}/events/sqs-standard.json");
    let args = [ledger.to_str().unwrap(), &event, "--env-file", env_file.to_str().unwrap()];
    let (code, stdout, stderr) = lambda_invoke(&args);
    assert_eq!(code, Some(0), "{stderr}");
    let response: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert!(response["batchItemFailures"].is_array(), "{response}");
    let records = 8;
    let quarantined = aws.receive_all(&quarantine, records).await.unwrap();
    assert_eq!(quarantined.len(), records, "the ledger's schema refuses every record: {stderr}");
    std::fs::remove_file(&env_file).unwrap();
}

#[test]
fn what_a_person_gets_wrong_is_one_sentence_and_exit_2() {
    let event = format!("{ROOT}/events/sqs-standard.json");
    let cases: [(&[&str], &str); 4] = [
        (&[], "lambda-invoke: give the function's binary and one event file"),
        (
            &["/nonexistent/fn", &event],
            "lambda-invoke: /nonexistent/fn is not a file: give the function's built binary",
        ),
        (
            &["/bin/true", "/nonexistent.json"],
            "lambda-invoke: cannot read the event file /nonexistent.json: No such file or directory (os error 2)",
        ),
        (
            &["/bin/true", &event, "--timeout", "0"],
            "lambda-invoke: --timeout 0: give seconds above 0",
        ),
    ];
    for (args, said) in cases {
        let (code, stdout, stderr) = lambda_invoke(args);
        assert_eq!((code, stdout.as_str()), (Some(2), ""), "{args:?}");
        assert_eq!(stderr.lines().next(), Some(said), "{args:?}");
    }
}
