//! An ECS worker making thumbnails: its own body type and processor. Long polls, the lease
//! heartbeat, quarantine, idempotency, FIFO order, the SIGTERM drain and task protection come with
//! the library, and their settings from the variables template.yaml's task definition gives it.
use std::{io, process::ExitCode, time::Duration};

use backpressure_app::{Env, healthcheck, run_worker};
use backpressure_batch::{ErrorCode, JsonBody, Message, Processor, Verdict};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
struct Thumbnail {
    image: String,
    width: u32,
    #[serde(default, rename = "workMs")]
    work_ms: u64,
}

impl JsonBody for Thumbnail {} // every shape that decodes is valid

struct Thumbnails {
    max_width: u32,
}

impl Processor<Thumbnail> for Thumbnails {
    async fn process(&self, message: &Message<'_, Thumbnail>) -> Verdict {
        if message.decoded.width > self.max_width {
            return Verdict::permanent(ErrorCode::Custom("too_wide".into()), "too wide");
        }
        tokio::time::sleep(Duration::from_millis(message.decoded.work_ms)).await;
        let (id, image) = (message.message_id, &message.decoded.image);
        tracing::info!(message_id = id, image, "thumbnail made");
        Verdict::Done
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    // The task definition's health check runs `<this binary> healthcheck`.
    if let Some("healthcheck") = std::env::args().nth(1).as_deref() {
        return healthcheck(std::env::args().nth(2).as_deref());
    }
    // The processor's own setting; the template's variables are read by run_worker.
    let thumbnails = |env: &Env| match env.get("MAX_WIDTH") {
        None => Ok(Thumbnails { max_width: 4096 }),
        Some(width) => width.parse().map(|max_width| Thumbnails { max_width }).map_err(|_| {
            io::Error::other(format!("MAX_WIDTH={width:?}: give the widest image in pixels"))
        }),
    };
    run_worker("thumbnails", "1.0", thumbnails).await
}
