//! `--rotate-groups` under faults, through the fault proxy on moto: each move
//! is a `SendMessageBatch` of copies and a `DeleteMessageBatch` of originals on
//! the queue being read. Denied, throttled, failing, hanging and partly failing
//! calls, and messages that cannot be moved (10 attributes already, too large
//! for the queue): nothing is lost, what could not be read is said, and a
//! second copy left behind is removed by the next moving read.

use aws_sdk_sqs::types::{MessageAttributeValue, QueueAttributeName};
use e2e_tests::fault_proxy::{Fault, FaultProxy, Rule};
use e2e_tests::fixtures::{Aws, unique};

use crate::operator_cli::{cli, stderr, stdout};
use crate::operator_cli_fifo::{by_group, send_in_order};

/// Group `a` of 15 (past one receive's ten) and group `b` of 3.
fn bodies() -> Vec<(String, String)> {
    let a = (0..15).map(|i| ("a".to_owned(), format!("a-{i:02}")));
    a.chain((0..3).map(|i| ("b".to_owned(), format!("b-{i}")))).collect()
}

async fn fifo_queue(aws: &Aws, attributes: &[(QueueAttributeName, &str)]) -> String {
    let mut create = aws
        .sqs
        .create_queue()
        .queue_name(format!("{}.fifo", unique("rotate")))
        .attributes(QueueAttributeName::FifoQueue, "true");
    for (name, value) in attributes {
        create = create.attributes(name.clone(), *value);
    }
    create.send().await.unwrap().queue_url.unwrap()
}

async fn stats_moving(proxy: &FaultProxy, url: &str) -> std::process::Output {
    let args = ["--endpoint-url", proxy.url(), "--call-timeout", "2", "stats", "--queue-url", url];
    let mut args = args.to_vec();
    args.extend(["--rotate-groups", "--json", "--wait-seconds", "1", "--visibility-timeout", "20"]);
    cli(&args).await
}

/// Every body once per group, in any order: nothing lost, nothing twice.
fn same_messages(
    left: &std::collections::BTreeMap<String, Vec<String>>,
    sent: &[(String, String)],
) -> bool {
    let sort = |groups: &std::collections::BTreeMap<String, Vec<String>>| {
        groups
            .iter()
            .map(|(g, b)| {
                let mut b = b.clone();
                b.sort();
                (g.clone(), b)
            })
            .collect::<Vec<_>>()
    };
    sort(left) == sort(&by_group(sent))
}

#[tokio::test]
async fn a_move_whose_calls_fail_loses_nothing_and_the_next_read_repairs_what_it_left() {
    let aws = Aws::from_env().await.unwrap();
    let faults = [
        ("SendMessageBatch", Fault::Deny),
        ("SendMessageBatch", Fault::Throttle),
        ("SendMessageBatch", Fault::ServerError),
        ("SendMessageBatch", Fault::Hang),
        ("SendMessageBatch", Fault::FailEntries(vec![0])),
        ("DeleteMessageBatch", Fault::Deny),
        ("DeleteMessageBatch", Fault::ServerError),
        ("DeleteMessageBatch", Fault::FailEntries(vec![0])),
    ];
    for (operation, fault) in faults {
        let label = format!("{operation} {}", fault.name());
        let url = fifo_queue(&aws, &[]).await;
        let sent = bodies();
        send_in_order(&aws, &url, &sent).await;
        let proxy =
            FaultProxy::start(&std::env::var("AWS_ENDPOINT_URL_SQS").unwrap()).await.unwrap();
        proxy.inject(Rule::new(operation, fault.clone()));
        let faulty = stats_moving(&proxy, &url).await;
        let text = stderr(&faulty);
        assert_ne!(
            faulty.status.code(),
            Some(0),
            "{label}: a failed move is not a complete read\n{text}"
        );
        assert!(!text.contains("ErrorMetadata") && !text.contains("Unhandled("), "{label}: {text}");
        if matches!(fault, Fault::FailEntries(_)) {
            // Entries refused: the read goes on and says which groups it could not finish.
            assert_eq!(faulty.status.code(), Some(5), "{label}: {text}");
            assert!(text.contains("could not be moved"), "{label}: {text}");
        } else {
            assert_eq!(faulty.status.code(), Some(1), "{label}: {text}");
            assert!(text.contains(operation), "{label}: the failing call is named\n{text}");
        }
        // The next moving read, with no fault: every message read once, second copies removed.
        proxy.clear();
        let repaired = stats_moving(&proxy, &url).await;
        assert_eq!(repaired.status.code(), Some(0), "{label}: {}", stderr(&repaired));
        let stats: serde_json::Value = serde_json::from_str(&stdout(&repaired)).unwrap();
        assert_eq!(stats["total"], 18, "{label}: {stats}");
        let left = aws.drain_by_group(&url).await.unwrap();
        assert!(same_messages(&left, &sent), "{label}: {left:?}");
    }
}

#[tokio::test]
async fn messages_that_cannot_be_moved_stay_and_their_groups_are_named() {
    let aws = Aws::from_env().await.unwrap();
    let url = fifo_queue(&aws, &[(QueueAttributeName::MaximumMessageSize, "1024")]).await;
    let mut sent = Vec::new();
    // Group "full": a head with SQS's 10 attributes already, then 11 more.
    let mut head = aws
        .sqs
        .send_message()
        .queue_url(&url)
        .message_body("full-head")
        .message_group_id("full")
        .message_deduplication_id("full-head");
    for n in 0..10 {
        let value =
            MessageAttributeValue::builder().data_type("String").string_value("v").build().unwrap();
        head = head.message_attributes(format!("a{n}"), value);
    }
    head.send().await.unwrap();
    sent.push(("full".to_owned(), "full-head".to_owned()));
    let rest: Vec<(String, String)> =
        (0..11).map(|i| ("full".to_owned(), format!("full-{i:02}"))).collect();
    send_in_order(&aws, &url, &rest).await;
    sent.extend(rest);
    // Group "big": a body of 1,000 bytes, which its origin attribute would push past 1,024.
    let big = vec![("big".to_owned(), "x".repeat(1_000))];
    send_in_order(&aws, &url, &big).await;
    sent.extend(big);

    let proxy = FaultProxy::start(&std::env::var("AWS_ENDPOINT_URL_SQS").unwrap()).await.unwrap();
    let output = stats_moving(&proxy, &url).await;
    let text = stderr(&output);
    assert_eq!(output.status.code(), Some(5), "{text}");
    assert!(text.contains("group full") && text.contains("10 message attributes"), "{text}");
    assert!(text.contains("group big") && text.contains("1024 bytes"), "{text}");
    let left = aws.drain_by_group(&url).await.unwrap();
    assert!(same_messages(&left, &sent), "nothing lost or doubled: {left:?}");
}
