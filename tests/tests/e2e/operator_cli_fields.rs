//! The operator's CLI on a dead-letter queue of foreign JSON events and plain
//! text, selecting by the user's own fields: `--tenant-from` and `--key-from`
//! (as `TENANT_FROM` and `IDEMPOTENCY_KEY_FROM` take them), `--where`, and
//! `--only-json` beside `--not-json`, on stats, list, export, replay and discard.

use std::collections::BTreeMap;

use aws_sdk_sqs::types::{MessageAttributeValue, SendMessageBatchRequestEntry};
use e2e_tests::fixtures::{Aws, unique};
use serde_json::{Value, json};

use crate::operator_cli::{cli, stderr, stdout};

/// Five foreign events (two customers, two types, ids past a float's
/// precision) and three bodies that are not JSON.
fn bodies() -> Vec<(String, Option<&'static str>)> {
    let event = |id: &str, kind: &str, customer: &str, amount: Value| {
        json!({"id": id, "type": kind, "data": {"customer": customer, "amount": amount}})
            .to_string()
    };
    vec![
        (event("evt_1", "invoice.paid", "cus_9", json!(10)), Some("billing")),
        (event("evt_2", "invoice.paid", "cus_9", json!(20)), None),
        (event("evt_3", "invoice.failed", "cus_9", json!(30)), None),
        (event("evt_4", "invoice.paid", "cus_7", json!(40)), Some("billing")),
        (
            r#"{"id":98765432109876543211,"type":"invoice.paid","data":{"customer":"cus_7"}}"#
                .into(),
            None,
        ),
        ("<html>502 Bad Gateway</html>".into(), None),
        ("<html>503</html>".into(), Some("billing")),
        ("plain words".into(), None),
    ]
}

async fn dead_letter_queue(aws: &Aws) -> String {
    let url = aws.create_queue(&unique("foreign-dlq")).await.unwrap();
    let entries = bodies().into_iter().enumerate().map(|(i, (body, source))| {
        let mut entry =
            SendMessageBatchRequestEntry::builder().id(format!("e{i}")).message_body(body);
        if let Some(source) = source {
            let value = MessageAttributeValue::builder().data_type("String").string_value(source);
            entry = entry.message_attributes("source", value.build().unwrap());
        }
        entry.build().unwrap()
    });
    let sent = aws
        .sqs
        .send_message_batch()
        .queue_url(&url)
        .set_entries(Some(entries.collect()))
        .send()
        .await
        .unwrap();
    assert!(sent.failed.is_empty(), "{:?}", sent.failed);
    url
}

async fn stats(url: &str, filters: &[&str]) -> Value {
    let mut args = vec!["stats", "--queue-url", url, "--json"];
    args.extend_from_slice(filters);
    let output = cli(&args).await;
    assert!(output.status.success(), "{filters:?}: {}", stderr(&output));
    serde_json::from_slice(&output.stdout).unwrap()
}

/// The `id` fields (or whole bodies, for text) of `list --json`'s lines.
async fn listed(url: &str, filters: &[&str]) -> Vec<String> {
    let mut args = vec!["list", "--queue-url", url, "--json"];
    args.extend_from_slice(filters);
    let output = cli(&args).await;
    assert!(output.status.success(), "{filters:?}: {}", stderr(&output));
    let mut ids: Vec<String> = stdout(&output).lines().map(id_of_line).collect();
    ids.sort();
    ids
}

fn id_of_line(line: &str) -> String {
    let entry: Value = serde_json::from_str(line).unwrap();
    let body = entry["body"].as_str().unwrap_or_default();
    backpressure_core::field::text_at(body, "/id").unwrap_or_else(|| body.to_owned())
}

#[tokio::test]
async fn stats_and_list_select_and_group_by_the_users_own_fields() {
    let aws = Aws::from_env().await.unwrap();
    let url = dead_letter_queue(&aws).await;
    let customer = ["--tenant-from", "/data/customer"];
    let by_customer = stats(&url, &customer).await;
    assert_eq!(by_customer["total"], 8);
    let expected = json!({"cus_9": 3, "cus_7": 2, "(none)": 3});
    assert_eq!(by_customer["byTenant"], expected, "{by_customer:#}");
    assert_eq!(by_customer["tenantFrom"], "/data/customer");
    assert_eq!(stats(&url, &[]).await["byTenant"], json!({"(none)": 8}), "no envelope here");

    let total = |filters: &'static [&'static str]| {
        let url = url.clone();
        async move { stats(&url, filters).await["total"].as_u64().unwrap() }
    };
    assert_eq!(total(&["--tenant-from", "/data/customer", "--tenant", "cus_9"]).await, 3);
    assert_eq!(total(&["--tenant-from", "/data/customer", "--no-tenant"]).await, 3);
    assert_eq!(total(&["--tenant-from", "attribute:source", "--tenant", "billing"]).await, 3);
    assert_eq!(total(&["--where", "/type=invoice.paid"]).await, 4);
    let paid_or_failed = &["--where", "/type=invoice.paid", "--where", "/type=invoice.failed"];
    assert_eq!(total(paid_or_failed).await, 5, "one selector repeated: alternatives");
    let paid_for_7 = &["--where", "/type=invoice.paid", "--where", "/data/customer=cus_7"];
    assert_eq!(total(paid_for_7).await, 2, "two selectors: both");
    assert_eq!(total(&["--where", "/data/amount=30"]).await, 1, "a number as its JSON text");
    assert_eq!(total(&["--where", "attribute:source=billing", "--only-json"]).await, 2);
    assert_eq!(total(&["--only-json"]).await, 5);
    assert_eq!(total(&["--not-json"]).await, 3);
    assert_eq!(total(&["--key-from", "/id", "--key", "98765432109876543211"]).await, 1);
    assert_eq!(total(&["--key-from", "/id", "--key", "98765432109876543210"]).await, 0);

    let paid = listed(&url, &["--where", "/type=invoice.paid", "--where", "/data/customer=cus_7"]);
    assert_eq!(paid.await, ["98765432109876543211", "evt_4"]);
    let texts = listed(&url, &["--not-json", "--where", "attribute:source=billing"]).await;
    assert_eq!(texts, ["<html>503</html>"]);
}

#[tokio::test]
async fn a_bad_where_or_selector_is_refused_with_its_form() {
    for (args, expected) in [
        (vec!["--where", "/type"], "give SELECTOR=VALUE"),
        (vec!["--where", "type=x"], "a JSON pointer such as /order/id"),
        (vec!["--tenant-from", "data.customer"], "a JSON pointer such as /order/id"),
        (vec!["--only-json", "--not-json"], "cannot be used with"),
    ] {
        let mut all = vec!["stats", "--queue-url", "q"];
        all.extend_from_slice(&args);
        let output = cli(&all).await;
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(stderr(&output).contains(expected), "{args:?}: {}", stderr(&output));
    }
}

#[tokio::test]
async fn export_replay_and_discard_act_on_exactly_the_selected_messages() {
    let aws = Aws::from_env().await.unwrap();
    let url = dead_letter_queue(&aws).await;
    let dir = tempfile_dir();
    let out = dir.join("cus_9.jsonl");
    let out_arg = out.to_string_lossy().into_owned();
    let export = ["export", "--queue-url", &url, "--tenant-from", "/data/customer"];
    let output = cli(&[&export[..], &["--tenant", "cus_9", "--out", &out_arg]].concat()).await;
    assert!(output.status.success(), "{}", stderr(&output));
    let mut exported: Vec<String> =
        std::fs::read_to_string(&out).unwrap().lines().map(id_of_line).collect();
    exported.sort();
    assert_eq!(exported, ["evt_1", "evt_2", "evt_3"]);

    let target = aws.create_queue(&unique("replayed")).await.unwrap();
    let audit = dir.join("audit.jsonl").to_string_lossy().into_owned();
    let replay = [
        "replay",
        "--queue-url",
        &url,
        "--to",
        &target,
        "--where",
        "/type=invoice.paid",
        "--where",
        "/data/customer=cus_9",
        "--yes",
        "--audit",
        &audit,
    ];
    let output = cli(&replay).await;
    assert!(output.status.success(), "{}", stderr(&output));
    let arrived: BTreeMap<String, usize> =
        aws.receive_all(&target, 10).await.unwrap().iter().fold(BTreeMap::new(), |mut seen, m| {
            *seen.entry(id_of_body(m.body().unwrap_or_default())).or_default() += 1;
            seen
        });
    assert_eq!(arrived, BTreeMap::from([("evt_1".into(), 1), ("evt_2".into(), 1)]));

    let discard = ["discard", "--queue-url", &url, "--only-json", "--yes", "--audit", &audit];
    let output = cli(&discard).await;
    assert!(output.status.success(), "{}", stderr(&output));
    let left = listed(&url, &[]).await;
    assert_eq!(left, ["<html>502 Bad Gateway</html>", "<html>503</html>", "plain words"]);
}

fn id_of_body(body: &str) -> String {
    backpressure_core::field::text_at(body, "/id").unwrap_or_else(|| body.to_owned())
}

fn tempfile_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(unique("cli-fields"));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
