//! An ECS worker making thumbnails: its own body type and processor; long polls, the lease
//! heartbeat, quarantine, FIFO order, the SIGTERM drain and task protection come with the library.
use backpressure_batch::sqs::{QueueRef, SqsQuarantine};
use backpressure_batch::worker::{Ended, Worker, default_health_file, health_check};
use backpressure_batch::{BatchProcessor, ErrorCode, Message, Processor, Validate, Verdict};
use serde::Deserialize;
use std::{env::var, process::ExitCode, time::Duration};

#[derive(Debug, Deserialize)]
struct Thumbnail {
    image: String,
    width: u32,
    #[serde(default, rename = "workMs")]
    work_ms: u64,
}

impl Validate for Thumbnail {} // every shape that decodes is valid
struct Thumbnails;
impl Processor<Thumbnail> for Thumbnails {
    async fn process(&self, message: &Message<'_, Thumbnail>) -> Verdict {
        if message.request.width > 4096 {
            return Verdict::permanent(ErrorCode::Custom("too_wide".into()), "wider than 4096");
        }
        tokio::time::sleep(Duration::from_millis(message.request.work_ms)).await;
        let (id, image) = (message.message_id, &message.request.image);
        tracing::info!(message_id = id, image, "thumbnail made");
        Verdict::Done
    }
}

fn setting(name: &str, default: Option<&str>) -> Result<String, String> {
    var(name).ok().or(default.map(str::to_owned)).ok_or_else(|| format!("{name} is required"))
}
fn secs(name: &str, default: &str) -> Result<Duration, String> {
    let value = setting(name, Some(default))?;
    value.parse().map(Duration::from_secs).map_err(|_| format!("{name}={value:?}: give seconds"))
}

#[tokio::main]
async fn main() -> Result<ExitCode, Box<dyn std::error::Error>> {
    tracing_subscriber::fmt().init();
    let health = var("HEALTH_FILE").map_or_else(|_| default_health_file(1), Into::into);
    if std::env::args().nth(1).as_deref() == Some("healthcheck") {
        let unhealthy = health_check(&health, Duration::from_secs(120)).is_err();
        return Ok(ExitCode::from(u8::from(unhealthy)));
    }
    let sqs = aws_sdk_sqs::Client::new(&aws_config::load_from_env().await);
    let quarantine = QueueRef::parse(&setting("QUARANTINE_QUEUE_URL", None)?)?;
    let quarantine = SqsQuarantine::new(sqs.clone(), quarantine, 262_144);
    let batch = BatchProcessor::builder(Thumbnails).quarantine(quarantine);
    let mut worker = Worker::builder(batch, sqs, QueueRef::parse(&setting("QUEUE_URL", None)?)?)
        .receive_wait(secs("RECEIVE_WAIT_SECONDS", "20")?)
        .visibility_timeout(secs("VISIBILITY_TIMEOUT_SECONDS", "60")?)
        .drain(secs("DRAIN_SECONDS", "90")?)
        .health_file(health);
    if let Ok(agent) = var("ECS_AGENT_URI") {
        worker = worker.task_protection(agent, secs("PROTECTION_IDLE_SECONDS", "60")?);
    }
    Ok(ExitCode::from(u8::from(worker.build().await?.run().await? != Ended::Drained)))
}
