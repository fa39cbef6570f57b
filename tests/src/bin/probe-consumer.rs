//! A function for the tests of concurrent invocations: `serve` with a
//! processor that panics on a message whose `action` is `panic` and holds
//! every other one for 200 ms, so invocations sent together overlap.

use std::convert::Infallible;
use std::process::ExitCode;
use std::time::Duration;

use backpressure_app::{Env, serve, tokio_runtime};
use backpressure_batch::{JsonBody, Message, Processor, Verdict};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
struct Probe {
    action: String,
}

impl JsonBody for Probe {}

struct Hold;

impl Processor<Probe> for Hold {
    async fn process(&self, message: &Message<'_, Probe>) -> Verdict {
        if message.decoded.action == "panic" {
            panic!("the probe was asked to panic on {}", message.message_id);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        Verdict::Done
    }
}

fn main() -> ExitCode {
    #[allow(clippy::expect_used)]
    let runtime = tokio_runtime().expect("cannot start the Tokio runtime");
    runtime.block_on(serve("probe-consumer", "1.0", |_: &Env| Ok::<_, Infallible>(Hold)))
}
