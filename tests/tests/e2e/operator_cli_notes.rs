//! The notes a read prints where they matter: a queue with a redrive policy of its own is told
//! that each read is a receive towards its `maxReceiveCount` (and one without is not), and
//! `list` says where a tenant would have come from when it shows messages with none.

use e2e_tests::fixtures::{Aws, unique};

use crate::operator_cli::*;

#[tokio::test]
async fn a_read_of_a_queue_with_its_own_redrive_policy_says_each_read_is_a_receive() {
    let aws = Aws::from_env().await.unwrap();
    let name = unique("noted");
    let (source, dlq) = aws.create_queue_with_dlq(&name).await.unwrap();
    aws.send_messages(&source, 2).await.unwrap();
    let read = ok(cli(&["stats", "--queue-url", &source]).await);
    let note = format!(
        "note: {name} has a redrive policy of its own: every read adds one to each message's \
         ApproximateReceiveCount, and SQS moves a message received more than 5 times to {name}-dlq"
    );
    assert_eq!(stderr(&read).lines().find(|l| l.starts_with("note:")), Some(note.as_str()));
    let plain = ok(cli(&["stats", "--queue-url", &dlq]).await);
    assert!(!stderr(&plain).contains("note:"), "{}", stderr(&plain));
}

#[tokio::test]
async fn list_says_where_a_tenant_would_come_from_when_it_shows_none() {
    let aws = Aws::from_env().await.unwrap();
    let queue = aws.create_queue(&unique("untenanted")).await.unwrap();
    aws.send_messages(&queue, 2).await.unwrap();
    let listed = ok(cli(&["list", "--queue-url", &queue]).await);
    let last = stdout(&listed).lines().last().unwrap_or_default().to_owned();
    insta::assert_snapshot!(last, @"2 shown with no tenant: a quarantine record's tenant is the tenantId its consumer wrote (its TENANT_FROM, or the body type's tenant_id), and other messages name none; --tenant-from /json/pointer (or attribute:NAME) reads one from each message instead.");
    let pointed = ok(cli(&["list", "--queue-url", &queue, "--tenant-from", "/customerId"]).await);
    let last = stdout(&pointed).lines().last().unwrap_or_default().to_owned();
    assert_eq!(last, "2 shown with no tenant: none at /customerId (--tenant-from) in them.");
    let found = ok(cli(&["list", "--queue-url", &queue, "--tenant-from", "/n"]).await);
    assert!(!stdout(&found).contains("with no tenant"), "{}", stdout(&found));
}
