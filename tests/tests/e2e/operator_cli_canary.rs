//! A replay's canary stopped by Ctrl-C: during its wait, and in the last
//! receive of its check, which finds none back. Either way nothing more is
//! replayed, and what it says is what the canary did: never that it passed
//! and the rest is being replayed.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use e2e_tests::fault_proxy::{Fault, FaultProxy, Rule};
use e2e_tests::fixtures::{Aws, binary};
use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{Child, ChildStderr};

use crate::operator_cli::{audit_lines, replayable, untimed};

/// A replay of a dead-letter queue of one message, with a canary of one,
/// every SQS call through `proxy`, its stderr read line by line.
struct Canary {
    aws: Aws,
    dlq: String,
    work: String,
    audit: PathBuf,
    child: Child,
    stderr: Lines<BufReader<ChildStderr>>,
    said: String,
}

impl Canary {
    async fn start(proxy: &FaultProxy, canary_wait: &str) -> Self {
        let (aws, dlq, _, work, audit) = replayable(1).await;
        let mut child = tokio::process::Command::new(binary("sqs-backpressure").unwrap())
            .args(["replay", "--queue-url", &dlq, "--to", &work, "--yes", "--wait-seconds", "1"])
            .args(["--canary", "1", "--canary-wait", canary_wait, "--call-timeout", "60"])
            // The work queue has no redrive policy: nothing could come back to tell.
            .arg("--canary-unproven")
            .arg("--audit")
            .arg(&audit)
            .env("AWS_ENDPOINT_URL_SQS", proxy.url())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = BufReader::new(child.stderr.take().unwrap()).lines();
        Self { aws, dlq, work, audit, child, stderr, said: String::new() }
    }

    /// Reads stderr up to the line starting with `prefix`.
    async fn read_until(&mut self, prefix: &str) {
        loop {
            let line = self.stderr.next_line().await.unwrap();
            let line = line.unwrap_or_else(|| panic!("ended before {prefix:?}:\n{}", self.said));
            self.said.push_str(&line);
            self.said.push('\n');
            if line.starts_with(prefix) {
                return;
            }
        }
    }

    /// Returns once `proxy` has seen `receives` receives.
    async fn until_received(&mut self, proxy: &FaultProxy, receives: u64) {
        while proxy.counts().get("ReceiveMessage").copied().unwrap_or(0) < receives {
            let ended = self.child.try_wait().unwrap();
            assert!(ended.is_none(), "ended before receive {receives}:\n{}", self.said);
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Ctrl-C, then the exit code and all it said, the run's names masked;
    /// checks that nothing more than the canary was replayed.
    async fn interrupt(mut self) -> (Option<i32>, String) {
        let pid = self.child.id().unwrap().to_string();
        let kill = tokio::process::Command::new("kill").args(["-INT", &pid]).status().await;
        assert!(kill.unwrap().success());
        while let Some(line) = self.stderr.next_line().await.unwrap() {
            self.said.push_str(&line);
            self.said.push('\n');
        }
        let code = self.child.wait().await.unwrap().code();
        let lines = audit_lines(&self.audit);
        let results: Vec<&str> = lines.iter().map(|l| l["result"].as_str().unwrap()).collect();
        assert_eq!(results, ["replayed"], "the canary alone:\n{}", self.said);
        assert_eq!(self.aws.counts(&self.work).await.unwrap(), (1, 0), "{}", self.said);
        assert_eq!(self.aws.counts(&self.dlq).await.unwrap(), (0, 0), "{}", self.said);
        let masked = untimed(&self.said)
            .replace(&self.dlq, "[DLQ]")
            .replace(&self.work, "[WORK]")
            .replace(self.audit.to_str().unwrap(), "[AUDIT]");
        (code, masked)
    }
}

fn proxy_endpoint() -> String {
    std::env::var("AWS_ENDPOINT_URL_SQS").unwrap()
}

#[tokio::test]
async fn ctrl_c_in_the_canary_wait_stops_it_there_and_replays_nothing_more() {
    let proxy = FaultProxy::start(&proxy_endpoint()).await.unwrap();
    // A wait far longer than the test: a signal that did not cut it short would show.
    let mut canary = Canary::start(&proxy, "600").await;
    canary.read_until("canary: ").await;
    let (code, said) = canary.interrupt().await;
    assert_eq!(code, Some(130), "{said}");
    insta::assert_snapshot!("ctrl_c_in_the_canary_wait", said);
}

/// The signal comes while the check's last receive (held back by the proxy)
/// is under way: the read is whole and found none back, but the rest must
/// not be replayed, nor said to be.
#[tokio::test]
async fn ctrl_c_in_the_canary_check_says_what_it_found_and_replays_nothing_more() {
    let proxy = FaultProxy::start(&proxy_endpoint()).await.unwrap();
    proxy.inject(Rule::new("ReceiveMessage", Fault::Delay(Duration::from_secs(5))));
    let mut canary = Canary::start(&proxy, "0").await;
    canary.read_until("canary: ").await;
    // The canary's own receive was the first; the check's is the second.
    canary.until_received(&proxy, 2).await;
    let (code, said) = canary.interrupt().await;
    assert_eq!(code, Some(130), "{said}");
    insta::assert_snapshot!("ctrl_c_in_the_canary_check", said);
}
