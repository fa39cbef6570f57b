//! The emulator defects docs/testing.md names, each still what its minimal
//! reproduction in tests/emulator-defects/ says: when an emulator is fixed,
//! its test fails, and the workaround and the words can go.

use std::path::PathBuf;

use e2e_tests::fixtures::unique;
use serde_json::Value;
use tokio::process::Command;

use super::driver::Emulator;

async fn reproduce(emulator: Emulator, file: &str, args: &[&str]) -> Value {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let template = root.join("tests/emulator-defects").join(file);
    let python = root.join(".venv-sam/bin/python");
    let output = Command::new(&python)
        .arg(root.join("scripts/deploy_stack.py"))
        .args(["reproduce", "--endpoint", &emulator.endpoint(), "--stack", &unique("defect")])
        .arg("--template")
        .arg(&template)
        .args(args)
        .output()
        .await
        .unwrap_or_else(|e| {
            panic!("cannot run {} (make template-lint installs it): {e}", python.display())
        });
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

fn says(outcome: &Value, step: &str, text: &str) {
    let said = outcome[step].as_str().unwrap_or_default();
    assert!(
        said.contains(text),
        "{step} no longer says {text:?} (the defect may be fixed): {outcome:#}"
    );
}

#[tokio::test]
async fn a_number_parameter_keying_a_mapping_fails_create_on_both() {
    let localstack = reproduce(Emulator::LocalStack, "find-in-map-number-key.yaml", &[]).await;
    says(&localstack, "create", "expected str instance, int found");
    let moto = reproduce(Emulator::Moto, "find-in-map-number-key.yaml", &[]).await;
    says(&moto, "create", "500 Internal Server Error");
}

#[tokio::test]
async fn a_number_parameter_equal_to_zero_is_unequal_on_localstack() {
    let outcome = reproduce(Emulator::LocalStack, "equals-number-zero.yaml", &[]).await;
    says(&outcome, "create", "CREATE_COMPLETE");
    assert_eq!(outcome["resources"], serde_json::json!(["Always", "Queue"]), "{outcome:#}");
}

#[tokio::test]
async fn a_ref_to_a_resource_sam_generates_is_unresolved_on_localstack() {
    let outcome = reproduce(Emulator::LocalStack, "ref-to-sam-generated.yaml", &[]).await;
    says(&outcome, "create", "Unresolved resource dependencies [FunctionWork]");
}

#[tokio::test]
async fn an_update_leaving_a_mapping_key_unchanged_is_not_emulated_on_localstack() {
    let outcome =
        reproduce(Emulator::LocalStack, "find-in-map-update.yaml", &["--param", "Retention=86400"])
            .await;
    says(&outcome, "create", "CREATE_COMPLETE");
    says(&outcome, "update", "not yet been emulated");
}

#[tokio::test]
async fn a_queue_update_changes_no_attribute_on_localstack() {
    let outcome =
        reproduce(Emulator::LocalStack, "queue-attribute-update.yaml", &["--param", "Timeout=60"])
            .await;
    says(&outcome, "update", "UPDATE_COMPLETE");
    assert_eq!(outcome["visibility"]["Queue"], "180", "{outcome:#}");
}

#[tokio::test]
async fn a_delete_with_resources_left_out_by_a_condition_is_refused_on_localstack() {
    let outcome =
        reproduce(Emulator::LocalStack, "delete-with-transform.yaml", &["--then-delete"]).await;
    says(&outcome, "create", "CREATE_COMPLETE");
    says(&outcome, "delete", "Unresolved resource dependencies");
}

#[tokio::test]
async fn an_update_touches_resources_under_a_false_condition_on_moto() {
    let outcome = reproduce(
        Emulator::Moto,
        "get-att-under-false-condition-update.yaml",
        &["--param", "Tag=b"],
    )
    .await;
    says(&outcome, "create", "CREATE_COMPLETE");
    says(&outcome, "update", "references undefined resource Role");
}
