//! Logs to stderr, structured (`key=value`, or JSON lines with
//! `SQS_BACKPRESSURE_LOG_FORMAT=json`), drawn around the progress bar.
//! Warnings by default (a failed send, delete or release among them); `-v`
//! adds each audit line (target `audit`, DEBUG) and this tool's notes, `-vv`
//! all of its DEBUG; the SDK's logs never, unless `RUST_LOG` says otherwise.

use std::io::Write;
use std::sync::Mutex;

use indicatif::ProgressBar;

static PROGRESS: Mutex<Option<ProgressBar>> = Mutex::new(None);

pub fn init(verbose: u8) {
    // The SDK's own warnings carry Debug dumps of its errors; what matters of
    // them reaches the operator as the command's one-line error. RUST_LOG
    // brings them back for a bug report.
    let ours = match verbose {
        0 => "warn",
        1 => "warn,audit=debug,sqs_backpressure=info",
        _ => "warn,audit=debug,sqs_backpressure=debug",
    };
    let sdk = "aws_config=off,aws_runtime=off,aws_smithy_runtime=off,aws_smithy_http_client=off,\
               aws_sdk_sqs=off,aws_sdk_sts=off,aws_sdk_s3=off";
    let filter = format!("{ours},{sdk}");
    backpressure_startup::logging::init_for_tool(|| Stderr, &filter, "SQS_BACKPRESSURE_LOG_FORMAT");
}

/// Draws log lines above `bar` instead of through it.
pub fn attach(bar: &ProgressBar) {
    if let Ok(mut progress) = PROGRESS.lock() {
        *progress = Some(bar.clone());
    }
}

struct Stderr;

impl Write for Stderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let bar = PROGRESS.lock().ok().and_then(|p| p.clone());
        match bar {
            Some(bar) if !bar.is_hidden() => bar.suspend(|| std::io::stderr().write(buf)),
            _ => std::io::stderr().write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}
