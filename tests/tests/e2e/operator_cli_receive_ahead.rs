//! replay's loops receive their next batch while they send and delete the
//! last: a receive ahead that fails, and one still on its way when a loop
//! stops, through the fault proxy in front of moto. Nothing is lost, nothing
//! stays leased past the command, and the exit code says it did not finish.

use e2e_tests::fault_proxy::{Fault, FaultProxy, Rule};
use e2e_tests::fixtures::{Aws, unique};

use crate::operator_cli::{audit_lines, dead_letter_queue, stderr, temp_path};
use crate::operator_cli_faults::{SETTLED, setup};

#[tokio::test]
async fn a_receive_ahead_that_fails_ends_the_replay_after_the_batch_at_hand() {
    for fault in [Fault::Deny, Fault::ServerError, Fault::Hang] {
        let setup = setup().await;
        // The first receive goes through; the one sent ahead of the batch's sends fails.
        setup.proxy.inject(Rule::new("ReceiveMessage", fault.clone()).after(1));
        let output = setup.replay(&["--concurrency", "1"]).await;
        assert_eq!(output.status.code(), Some(1), "{}: {}", fault.name(), stderr(&output));
        assert!(stderr(&output).contains("ReceiveMessage"), "{}", stderr(&output));
        setup.settled((0, 0), (5, 0)).await;
        let results: Vec<String> = audit_lines(&setup.audit)
            .iter()
            .map(|l| l["result"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(results, ["replayed"; 5], "{}: the batch at hand finished", fault.name());
    }
}

#[tokio::test]
async fn what_a_loop_received_ahead_is_released_when_it_stops() {
    let aws = Aws::from_env().await.unwrap();
    let bodies: Vec<String> = (0..25).map(|n| format!("m{n}")).collect();
    let (dlq, _) = dead_letter_queue(&aws, false, &bodies).await;
    let work = aws.create_queue(&unique("work")).await.unwrap();
    let proxy = FaultProxy::start(&std::env::var("AWS_ENDPOINT_URL_SQS").unwrap()).await.unwrap();
    proxy.inject(Rule::new("SendMessageBatch", Fault::Deny));
    let audit = temp_path("audit.jsonl");
    // A lease far longer than the test: only a release makes a message visible again in time.
    let args = [
        "--endpoint-url",
        proxy.url(),
        "replay",
        "--queue-url",
        &dlq,
        "--to",
        &work,
        "--yes",
        "--visibility-timeout",
        "600",
        "--wait-seconds",
        "1",
        "--concurrency",
        "1",
        "--audit",
        audit.to_str().unwrap(),
    ];
    let output = crate::operator_cli::cli(&args).await;
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).contains("SendMessageBatch"), "{}", stderr(&output));
    let receives = proxy.counts().get("ReceiveMessage").copied().unwrap_or(0);
    assert!(receives >= 2, "the next batch was asked for before the send: {receives} receive(s)");
    let every = std::time::Duration::from_millis(200);
    aws.wait_for_counts(&dlq, (25, 0), SETTLED, every).await.unwrap();
    aws.wait_for_counts(&work, (0, 0), SETTLED, every).await.unwrap();
}
