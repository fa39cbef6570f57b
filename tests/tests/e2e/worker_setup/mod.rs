//! What the sqs-worker end-to-end tests share: a work queue and a quarantine
//! queue on moto, a local downstream, the worker as a process, and the
//! queue's counts.

use std::collections::BTreeMap;
use std::time::Duration;

use aws_sdk_sqs::types::SendMessageBatchRequestEntry;
use e2e_tests::downstream::Downstream;
use e2e_tests::fixtures::{Aws, Sqs, binary, unique};
use e2e_tests::process::Process;
use serde_json::json;

/// Generous upper bounds for things that must happen, not speed targets.
pub const STARTED: Duration = Duration::from_secs(30);
pub const SETTLED: Duration = Duration::from_secs(60);

pub struct Setup {
    pub aws: Aws,
    pub downstream: Downstream,
    pub work_url: String,
    pub quarantine_url: String,
    /// The SQS implementation the queues (and the worker) are on.
    pub sqs: Sqs,
}

pub async fn setup() -> Setup {
    setup_on(Sqs::Moto, false).await
}

/// A work queue (FIFO or standard) and a quarantine queue on `sqs`.
pub async fn setup_on(sqs: Sqs, fifo: bool) -> Setup {
    let aws = Aws::from_env().await.unwrap().with_sqs(sqs).await.unwrap();
    let work_url = if fifo {
        let created = aws
            .sqs
            .create_queue()
            .queue_name(format!("{}.fifo", unique("work")))
            .attributes(aws_sdk_sqs::types::QueueAttributeName::FifoQueue, "true")
            .send()
            .await
            .unwrap();
        created.queue_url.unwrap()
    } else {
        aws.create_queue(&unique("work")).await.unwrap()
    };
    let quarantine_url = aws.create_queue(&unique("quarantine")).await.unwrap();
    let downstream = Downstream::start().await.unwrap();
    Setup { aws, downstream, work_url, quarantine_url, sqs }
}

pub fn request(operation: &str, key: &str) -> String {
    json!({"schemaVersion": "1", "operation": operation, "tenantId": "t", "idempotencyKey": key})
        .to_string()
}

/// sqs-worker on `work`, quarantining into `quarantine`, delivering to
/// `downstream`, with the tests' short timings; `extra` comes last, so it
/// overrides.
pub fn start_worker(
    work: &str,
    quarantine: &str,
    downstream: &str,
    extra: &[(&str, &str)],
) -> Process {
    let mut env = vec![
        ("QUEUE_URL", work),
        ("QUARANTINE_QUEUE_URL", quarantine),
        ("DOWNSTREAM_URL", downstream),
        ("RECEIVE_WAIT_SECONDS", "1"),
        ("VISIBILITY_TIMEOUT_SECONDS", "10"),
        ("RETRY_BASE_SECONDS", "0"),
        // One poller: moto can hand one message to two concurrent receives
        // (SQS does not within the visibility timeout), which would make
        // the counts below flaky. The poller keeps receiving while work
        // runs, so a message whose lease ran out would still come back.
        ("WORKER_POLLERS", "1"),
    ];
    env.extend_from_slice(extra);
    Process::start(&binary("sqs-worker").unwrap(), &env).unwrap()
}

impl Setup {
    pub async fn send(&self, bodies: &[String]) {
        let entries = bodies.iter().enumerate().map(|(i, body)| {
            SendMessageBatchRequestEntry::builder().id(format!("e{i}")).message_body(body)
        });
        self.send_entries(entries.map(|entry| entry.build().unwrap()).collect()).await;
    }

    pub async fn send_entries(&self, entries: Vec<SendMessageBatchRequestEntry>) {
        for chunk in entries.chunks(10) {
            let sent = self
                .aws
                .sqs
                .send_message_batch()
                .queue_url(&self.work_url)
                .set_entries(Some(chunk.to_vec()))
                .send()
                .await
                .unwrap();
            assert!(sent.failed.is_empty(), "{:?}", sent.failed);
        }
    }

    pub fn start(&self, extra: &[(&str, &str)]) -> Process {
        let endpoint = self.sqs.endpoint().unwrap();
        let mut env = vec![("AWS_ENDPOINT_URL_SQS", endpoint.as_str())];
        env.extend_from_slice(extra);
        start_worker(&self.work_url, &self.quarantine_url, &self.downstream.url(), &env)
    }

    /// `(visible, in flight)` on the work queue.
    pub async fn counts(&self) -> (u64, u64) {
        self.aws.counts(&self.work_url).await.unwrap()
    }

    /// Idempotency keys the downstream answered, with how many times each.
    pub fn delivered(&self) -> BTreeMap<String, usize> {
        let mut seen = BTreeMap::new();
        for received in self.downstream.received() {
            *seen.entry(received.idempotency_key.unwrap_or_default()).or_default() += 1;
        }
        seen
    }

    /// Waits until the work queue holds nothing, visible or in flight.
    pub async fn wait_until_empty(&self) {
        let give_up = tokio::time::Instant::now() + SETTLED;
        while self.counts().await != (0, 0) {
            let counts = self.counts().await;
            assert!(tokio::time::Instant::now() < give_up, "the queue never emptied: {counts:?}");
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// Waits until the queue holds `n` messages in flight (received by a worker).
    pub async fn wait_in_flight(&self, n: u64) {
        let give_up = tokio::time::Instant::now() + SETTLED;
        while self.counts().await.1 < n {
            assert!(tokio::time::Instant::now() < give_up, "never {n} in flight");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The idempotency keys of the messages left on the work queue, once
    /// `expected` have become visible again.
    pub async fn left_on_queue(&self, expected: usize) -> Vec<String> {
        let give_up = tokio::time::Instant::now() + SETTLED;
        let mut keys = Vec::new();
        while keys.len() < expected && tokio::time::Instant::now() < give_up {
            for message in
                self.aws.receive_all(&self.work_url, expected - keys.len()).await.unwrap()
            {
                let body: serde_json::Value =
                    serde_json::from_str(message.body().unwrap()).unwrap();
                keys.push(body["idempotencyKey"].as_str().unwrap().to_owned());
            }
        }
        keys.sort();
        keys
    }

    /// Waits until the work queue's `(visible, in flight)` are `expected`.
    pub async fn wait_counts(&self, expected: (u64, u64)) {
        let every = Duration::from_millis(200);
        self.aws.wait_for_counts(&self.work_url, expected, SETTLED, every).await.unwrap();
    }

    pub async fn wait_until(&self, what: &str, done: impl Fn(&Self) -> bool) {
        let give_up = tokio::time::Instant::now() + SETTLED;
        while !done(self) {
            assert!(tokio::time::Instant::now() < give_up, "gave up waiting for {what}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}
