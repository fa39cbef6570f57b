//! The one log subscriber of every binary. For the functions and the worker
//! ([`init`]): Lambda's advanced logging controls
//! (`AWS_LAMBDA_LOG_LEVEL`, `AWS_LAMBDA_LOG_FORMAT=JSON`, which the template
//! sets; one plain line per event otherwise) or `RUST_LOG`, as
//! `lambda_runtime::tracing::init_default_subscriber` reads them — with the
//! libraries that can print message bodies held below the levels where they
//! do. At TRACE, `lambda_runtime` logs every raw event (every SQS body in the
//! batch) and the HTTP stacks log what they send; bodies may hold personal
//! data, so no log level may let them through. For a command-line tool
//! ([`init_for_tool`]): text with timestamps, or JSON lines, on the writer it gives.

use std::str::FromStr;

use tracing::{Event, Level, Subscriber};
use tracing_subscriber::filter::{EnvFilter, FilterExt, LevelFilter, Targets};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::layer::{Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt;

/// Crates whose logs are capped, and the most verbose level each may use.
/// The AWS SDK's DEBUG (attempts, retries, timeouts) carries no payload.
pub const CAPPED: &[(&str, Level)] = &[
    ("lambda_runtime", Level::INFO),
    ("lambda_runtime_api_client", Level::INFO),
    ("hyper", Level::INFO),
    ("hyper_util", Level::INFO),
    ("h2", Level::INFO),
    ("rustls", Level::INFO),
    ("aws_smithy_runtime", Level::DEBUG),
    ("aws_smithy_runtime_api", Level::DEBUG),
    ("aws_smithy_http", Level::DEBUG),
    ("aws_smithy_http_client", Level::DEBUG),
    ("aws_smithy_types", Level::DEBUG),
    ("aws_smithy_json", Level::DEBUG),
    ("aws_smithy_cbor", Level::DEBUG),
    ("aws_runtime", Level::DEBUG),
    ("aws_sigv4", Level::DEBUG),
    ("aws_config", Level::DEBUG),
    ("aws_sdk_sqs", Level::DEBUG),
    ("aws_sdk_ecs", Level::DEBUG),
    ("aws_sdk_cloudwatch", Level::DEBUG),
];

/// The filter that holds [`CAPPED`] crates at their caps and lets every
/// other target through (the level filter decides for those).
pub fn caps() -> Targets {
    Targets::new().with_default(LevelFilter::TRACE).with_targets(CAPPED.iter().copied())
}

/// One line per event, `LEVEL message field=value …`, without the span
/// context the default text format repeats on every line: for reading a
/// function's logs in a terminal (`make demo`). In Lambda the JSON format is used.
struct OneLine;

impl<S, N> FormatEvent<S, N> for OneLine
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> std::fmt::Result {
        write!(writer, "{:<5} ", event.metadata().level())?;
        ctx.field_format().format_fields(writer.by_ref(), event)?;
        writeln!(writer)
    }
}

/// Installs the subscriber on stdout. Call once, first thing in `main`.
pub fn init() {
    let level = std::env::var("AWS_LAMBDA_LOG_LEVEL")
        .or_else(|_| std::env::var("RUST_LOG"))
        .ok()
        .and_then(|level| LevelFilter::from_str(&level).ok())
        .unwrap_or(LevelFilter::INFO);
    let levels = EnvFilter::builder().with_default_directive(level.into()).from_env_lossy();
    let json = std::env::var("AWS_LAMBDA_LOG_FORMAT").is_ok_and(|f| f.eq_ignore_ascii_case("json"));
    let format = if json { Format::Json } else { Format::OneLine };
    subscriber(levels, format, std::io::stdout).init();
}

/// Installs the subscriber of a command-line tool on `writer`: `RUST_LOG`,
/// or `default_filter` (`EnvFilter` directives) without it; JSON lines when
/// the variable `json_variable` is `json`, text with timestamps otherwise.
pub fn init_for_tool<W>(writer: W, default_filter: &str, json_variable: &str)
where
    W: for<'w> tracing_subscriber::fmt::MakeWriter<'w> + Send + Sync + 'static,
{
    let levels =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_filter));
    let json = std::env::var(json_variable).is_ok_and(|f| f.eq_ignore_ascii_case("json"));
    let format = if json { Format::JsonTimestamped } else { Format::Timestamped };
    subscriber(levels, format, writer).init();
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// Lambda stamps each line itself: no timestamp of ours.
    Json,
    OneLine,
    JsonTimestamped,
    Timestamped,
}

/// The level and the caps as one filter. Two filters stacked with
/// `with_filter` would each vote on every callsite, and the caps enabling
/// the SDK's DEBUG spans would make every API call build spans the level
/// filter then hides.
fn subscriber<W>(levels: EnvFilter, format: Format, writer: W) -> impl Subscriber + Send + Sync
where
    W: for<'w> tracing_subscriber::fmt::MakeWriter<'w> + Send + Sync + 'static,
{
    let filter = levels.and(caps());
    let layer = tracing_subscriber::fmt::layer().with_target(false).with_writer(writer);
    let layer = match format {
        Format::Json => layer.without_time().json().with_filter(filter).boxed(),
        Format::OneLine => layer.without_time().event_format(OneLine).with_filter(filter).boxed(),
        Format::JsonTimestamped => layer.json().with_filter(filter).boxed(),
        Format::Timestamped => layer.with_ansi(false).with_filter(filter).boxed(),
    };
    tracing_subscriber::registry().with(layer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capped_crates_stay_at_their_caps_and_the_rest_pass() {
        let caps = caps();
        let allows = |target: &str, level: Level| caps.would_enable(target, &level);
        assert!(!allows("lambda_runtime::layers::api_response", Level::TRACE));
        assert!(!allows("lambda_runtime", Level::DEBUG));
        assert!(allows("lambda_runtime", Level::INFO));
        assert!(!allows("aws_smithy_runtime::client::orchestrator", Level::TRACE));
        assert!(allows("aws_smithy_runtime::client::orchestrator", Level::DEBUG));
        assert!(!allows("hyper_util::client", Level::DEBUG));
        assert!(allows("batch_consumer::handler", Level::TRACE));
        assert!(allows("backpressure_batch::engine", Level::TRACE));
    }

    #[test]
    fn spans_below_the_level_are_not_built_even_where_the_caps_allow_them() {
        for json in [Format::Json, Format::OneLine, Format::JsonTimestamped, Format::Timestamped] {
            let subscriber = subscriber(EnvFilter::new("info"), json, std::io::sink);
            tracing::subscriber::with_default(subscriber, || {
                let sdk = tracing::debug_span!(target: "aws_smithy_runtime::client::orchestrator", "invoke");
                let ours = tracing::debug_span!(target: "sqs_worker::worker", "work");
                let shown = tracing::info_span!(target: "sqs_worker::worker", "work");
                assert!(sdk.is_disabled() && ours.is_disabled(), "format: {json:?}");
                assert!(!shown.is_disabled(), "format: {json:?}");
            });
        }
    }
}
