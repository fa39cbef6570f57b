//! The filters every command that reads a queue takes, and what each parses.

use backpressure_core::field::Selector;
use clap::Args;

use crate::reading::fields::EnvelopeChoice;

use super::times;

/// Which records a command acts on. Repeat a filter to accept several values;
/// different filters must all match.
#[derive(Debug, Clone, Default, Args)]
pub struct FilterArgs {
    /// The record's `errorCode` (quarantine records only).
    #[arg(long = "error-code")]
    pub error_codes: Vec<String>,
    /// The message's tenant (where `--tenant-from` says).
    #[arg(long = "tenant")]
    pub tenants: Vec<String>,
    /// Messages with no tenant (none where `--tenant-from` says, or an empty one).
    #[arg(long, conflicts_with = "tenants")]
    pub no_tenant: bool,
    /// Where each message's tenant is, for `--tenant`, `--no-tenant` and `stats`, as `TENANT_FROM`
    /// takes it: a JSON pointer into the original body (`/data/customer`), `attribute:NAME` or
    /// `message-id` [default: a quarantine record's `tenantId`; a raw message's `/tenantId`]
    #[arg(long, value_name = "SELECTOR", value_parser = selector)]
    pub tenant_from: Option<Selector>,
    /// The message's idempotency key (where `--key-from` says).
    #[arg(long = "key")]
    pub keys: Vec<String>,
    /// Where each message's idempotency key is, for `--key`, as `IDEMPOTENCY_KEY_FROM` takes it
    /// [default: the original body's `/idempotencyKey`]
    #[arg(long, value_name = "SELECTOR", value_parser = selector)]
    pub key_from: Option<Selector>,
    /// The wrapper bodies come in, whose message selectors (`--where`, `--tenant-from`,
    /// `--key-from`, the default labels) read and `show`/`export` add as `payload`: sns,
    /// sns-raw, eventbridge, s3, none (the body as it is) or detect (each body's own, when it
    /// is an SNS notification, an EventBridge event or an S3 notification)
    #[arg(long, value_name = "ENVELOPE", default_value = "detect", value_parser = EnvelopeChoice::parse)]
    pub(crate) envelope: EnvelopeChoice,
    /// A field of the original message has this value: SELECTOR=VALUE, the selector a JSON
    /// pointer or `attribute:NAME` (`--where /type=invoice.paid`); a number matches its JSON text
    /// as written. Repeat one selector to accept several values; different selectors must all match.
    #[arg(long = "where", value_name = "SELECTOR=VALUE", value_parser = field_match)]
    pub wheres: Vec<(Selector, String)>,
    /// Messages whose body is not JSON (a dead-lettered `<html>502`, say); a body kept in S3 is
    /// not read for this, and does not match.
    #[arg(long)]
    pub not_json: bool,
    /// Messages whose body is JSON (of any shape); a body kept in S3 does not match.
    #[arg(long, conflicts_with = "not_json")]
    pub only_json: bool,
    /// The message's `operation`.
    #[arg(long = "operation")]
    pub operations: Vec<String>,
    /// The FIFO message group.
    #[arg(long = "group")]
    pub groups: Vec<String>,
    /// The original message id (or the record's own id on the queue).
    #[arg(long = "message-id")]
    pub message_ids: Vec<String>,
    /// Quarantined (records) or sent (raw messages) at or after: a date, or a date and time, in
    /// UTC unless it ends in an offset (2026-12-04, 2026-12-04T10:30, 2026-12-04 10:30:00,
    /// 2026-12-04T10:30:00+01:00), or an age such as `2h`.
    #[arg(long, allow_hyphen_values = true, value_parser = time_or_age)]
    pub since: Option<String>,
    /// Quarantined (records) or sent (raw messages) before: a time as `--since` takes it (a
    /// date or a date and time is UTC unless it ends in an offset), or an age such as `30m`.
    #[arg(long, allow_hyphen_values = true, value_parser = time_or_age)]
    pub until: Option<String>,
}

/// `--since`, `--until`: checked here, resolved against the clock when the command starts.
fn time_or_age(value: &str) -> Result<String, String> {
    if times::parse_time(value, jiff::Timestamp::now()).is_some() {
        Ok(value.to_owned())
    } else if value.contains('[') {
        // This tool has no time-zone database: a named zone is refused, not guessed.
        Err("a zone in brackets is not read (this tool has no time-zone database): give its \
             offset instead, e.g. 2026-12-04T10:30:00+01:00"
            .to_owned())
    } else {
        Err(format!("not a time: give {}", times::TIME_FORMS))
    }
}

/// `--tenant-from`, `--key-from`: where a label is, as the forwarder's variables take it.
fn selector(value: &str) -> Result<Selector, String> {
    Selector::parse(value)
}

/// `--where`: `SELECTOR=VALUE`, split at the first `=`.
fn field_match(value: &str) -> Result<(Selector, String), String> {
    let Some((selector, expected)) = value.split_once('=') else {
        return Err(format!(
            "{value:?} has no '=': give SELECTOR=VALUE, e.g. /type=invoice.paid or attribute:source=billing"
        ));
    };
    match Selector::parse(selector)? {
        Selector::MessageId => {
            Err("--where takes a JSON pointer or attribute:NAME; give --message-id for an id"
                .to_owned())
        }
        selector => Ok((selector, expected.to_owned())),
    }
}
