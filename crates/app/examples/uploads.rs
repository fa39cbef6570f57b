//! Indexing uploads from S3 event notifications (`ENVELOPE=s3`): one processor of the library's
//! `S3Notification` type, run as a Lambda function under the Lambda runtime and as an ECS worker
//! elsewhere. S3's test event never reaches it; an object it refuses is quarantined with its code.
use std::{convert::Infallible, process::ExitCode};

use backpressure_app::{healthcheck, run_worker, serve};
use backpressure_batch::envelope::S3Notification;
use backpressure_batch::{ErrorCode, Message, Processor, Verdict};

struct Uploads;

impl Processor<S3Notification> for Uploads {
    async fn process(&self, message: &Message<'_, S3Notification>) -> Verdict {
        for object in &message.decoded.records {
            if object.key.ends_with(".exe") {
                return Verdict::permanent(ErrorCode::Custom("refused_type".into()), "executable");
            }
            let size = object.size.unwrap_or_default();
            tracing::info!(bucket = object.bucket, key = object.key, size, "upload indexed");
        }
        Verdict::Done
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    if let Some("healthcheck") = std::env::args().nth(1).as_deref() {
        return healthcheck(std::env::args().nth(2).as_deref());
    }
    let uploads = |_: &backpressure_app::Env| Ok::<_, Infallible>(Uploads);
    // The Lambda runtime sets AWS_LAMBDA_RUNTIME_API; anywhere else this is a worker.
    if std::env::var_os("AWS_LAMBDA_RUNTIME_API").is_some() {
        serve("uploads", "1.0", uploads).await
    } else {
        run_worker("uploads", "1.0", uploads).await
    }
}
