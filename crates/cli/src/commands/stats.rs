//! `stats`: counts of the matching messages by error code, tenant, source
//! queue, operation and age, as tables or one JSON document.

use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;
use std::ops::ControlFlow;

use jiff::{SignedDuration, Timestamp};
use serde::Serialize;

use crate::aws::queue::Queue;
use crate::commands::read_report::{closing, finish, headline, print};
use crate::reading::entry::Entry;
use crate::reading::filter::Filter;
use crate::reading::scan::{mover_for, scan};
use crate::terminal::error::CliError;
use crate::terminal::exit_status::Finish;
use crate::terminal::printable::printable;

/// The age buckets below their upper bound in hours, youngest first; older is `OLDEST`.
const AGES: [(&str, i64); 4] = [("< 1h", 1), ("1h–6h", 6), ("6h–24h", 24), ("1d–7d", 168)];
const OLDEST: &str = "≥ 7d";
/// The buckets' keys in `--json`, which `jq` takes as they are (`.byAge.under1h`).
const JSON_AGES: [(&str, &str); 6] = [
    ("< 1h", "under1h"),
    ("1h–6h", "from1hTo6h"),
    ("6h–24h", "from6hTo24h"),
    ("1d–7d", "from1dTo7d"),
    (OLDEST, "over7d"),
    ("(unknown)", "unknown"),
];

/// Counts of the matching messages, printed as tables or one JSON document;
/// `identity` is the reader's ARN, or why STS would not name it.
pub(crate) async fn stats(
    queue: &Queue,
    filter: &Filter,
    json: bool,
    identity: Result<String, String>,
) -> Result<Finish, CliError> {
    let now = Timestamp::now();
    let mut stats = Stats {
        tenant_from: filter.fields().tenant.as_ref().map(ToString::to_string),
        ..Stats::default()
    };
    let mover = mover_for(queue).await?;
    let scanned = scan(queue, mover.as_ref(), |entry| {
        if filter.matches(&entry) {
            stats.add(&entry, now);
        }
        ControlFlow::Continue(())
    })
    .await?;
    let shortfall = scanned.shortfall(&queue.url);
    let out = if json {
        let mut value = serde_json::to_value(&stats).unwrap_or_default();
        value["read"] = scanned.read.into();
        value["queueCounted"] = scanned.counted.into();
        value["inFlight"] = scanned.in_flight.into();
        value["moved"] = scanned.moved.into();
        value["lapsed"] = scanned.lapsed.into();
        value["complete"] = shortfall.is_none().into();
        value["unread"] = shortfall.as_ref().map_or(0, |s| s.unread).into();
        match identity {
            Ok(arn) => value["readAs"] = arn.into(),
            Err(why) => {
                value["readAs"] = serde_json::Value::Null;
                value["readAsError"] = why.into();
            }
        }
        format!("{value}\n")
    } else {
        let identity =
            identity.unwrap_or_else(|why| format!("an identity STS would not name ({why})"));
        format!(
            "{}{}\n{}Read as {identity}.\n",
            headline(&scanned, shortfall.is_some(), None),
            stats.render(),
            closing(queue, &scanned)
        )
    };
    print(&out)?;
    Ok(finish(shortfall))
}

/// The counts of one scan.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Stats {
    pub(crate) total: u64,
    pub(crate) by_error_code: BTreeMap<String, u64>,
    pub(crate) by_tenant: BTreeMap<String, u64>,
    /// Where `byTenant`'s tenants were read (`--tenant-from`); absent: each message's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) tenant_from: Option<String>,
    pub(crate) by_source_queue: BTreeMap<String, u64>,
    pub(crate) by_operation: BTreeMap<String, u64>,
    #[serde(serialize_with = "age_keys")]
    pub(crate) by_age: BTreeMap<String, u64>,
    /// Records of a source message counted already ([`Entry::source_key`]):
    /// a quarantine write retried after its answer was lost, or one message
    /// quarantined again when SQS delivered its batch twice. Replay sends
    /// each source message once.
    pub(crate) duplicates: u64,
    /// The source messages counted, by the first 16 bytes of their key's SHA-256.
    #[serde(skip)]
    sources: HashSet<u128>,
}

fn age_keys<S: serde::Serializer>(ages: &BTreeMap<String, u64>, out: S) -> Result<S::Ok, S::Error> {
    let keyed: BTreeMap<&str, u64> = ages
        .iter()
        .map(|(label, n)| {
            let key = JSON_AGES.iter().find(|(l, _)| l == label).map_or(label.as_str(), |(_, k)| k);
            (key, *n)
        })
        .collect();
    serde::Serialize::serialize(&keyed, out)
}

const NONE: &str = "(none)";

impl Stats {
    /// Counts `entry`, its age taken at `now`.
    pub(crate) fn add(&mut self, entry: &Entry, now: Timestamp) {
        let key = |value: &Option<String>| value.clone().unwrap_or_else(|| NONE.to_owned());
        self.total += 1;
        let digest = backpressure_core::quarantine::body_hash(&entry.source_key());
        let first = digest.get(..32).and_then(|hex| u128::from_str_radix(hex, 16).ok());
        if !self.sources.insert(first.unwrap_or_default()) {
            self.duplicates += 1;
        }
        *self.by_error_code.entry(key(&entry.error_code)).or_default() += 1;
        *self.by_tenant.entry(key(&entry.tenant_id)).or_default() += 1;
        *self.by_source_queue.entry(key(&entry.source_queue_arn)).or_default() += 1;
        *self.by_operation.entry(key(&entry.operation)).or_default() += 1;
        *self.by_age.entry(age_bucket(entry.at, now).to_owned()).or_default() += 1;
    }

    /// One table per dimension, largest count first.
    pub(crate) fn render(&self) -> String {
        let mut out = format!("{} message(s)\n", self.total);
        if self.duplicates > 0 {
            let _ = writeln!(
                out,
                "{} of them second records of a source message already counted (a quarantine \
                 write retried after its answer was lost, or a batch SQS delivered twice, each \
                 copy quarantined); replay sends each source message once",
                self.duplicates
            );
        }
        let tenant = match &self.tenant_from {
            Some(field) => format!("TENANT ({field})"),
            None => "TENANT".to_owned(),
        };
        let tables = [
            ("ERROR CODE", &self.by_error_code),
            (tenant.as_str(), &self.by_tenant),
            ("SOURCE QUEUE", &self.by_source_queue),
            ("OPERATION", &self.by_operation),
        ];
        for (title, counts) in tables {
            let mut rows: Vec<(&String, &u64)> = counts.iter().collect();
            rows.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
            table(&mut out, title, rows.into_iter().map(|(k, v)| (printable(k, 80), *v)));
        }
        let names = AGES.iter().map(|(name, _)| *name).chain([OLDEST, "(unknown)"]);
        let ages = names.filter_map(|name| self.by_age.get(name).map(|n| (name.to_owned(), *n)));
        table(&mut out, "AGE", ages);
        out
    }
}

fn table(out: &mut String, title: &str, rows: impl Iterator<Item = (String, u64)>) {
    let rows: Vec<(String, u64)> = rows.collect();
    let width = rows.iter().map(|(k, _)| k.chars().count()).chain([title.len()]).max().unwrap_or(0);
    let _ = writeln!(out, "\n{title:<width$}  COUNT");
    for (key, count) in rows {
        let _ = writeln!(out, "{key:<width$}  {count:>5}");
    }
}

/// The bucket of a message quarantined (or sent) at `at`.
pub(crate) fn age_bucket(at: Option<Timestamp>, now: Timestamp) -> &'static str {
    let Some(at) = at else { return "(unknown)" };
    let age = now.duration_since(at);
    AGES.iter()
        .find(|(_, hours)| age < SignedDuration::from_hours(*hours))
        .map_or(OLDEST, |(name, _)| name)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn ages_fall_in_their_buckets() {
        let now: Timestamp = "2026-11-30T12:00:00Z".parse().unwrap();
        let at = |s: &str| Some(s.parse::<Timestamp>().unwrap());
        assert_eq!(age_bucket(at("2026-11-30T11:30:00Z"), now), "< 1h");
        assert_eq!(age_bucket(at("2026-11-30T11:00:00Z"), now), "1h–6h");
        assert_eq!(age_bucket(at("2026-11-29T13:00:00Z"), now), "6h–24h");
        assert_eq!(age_bucket(at("2026-11-25T12:00:00Z"), now), "1d–7d");
        assert_eq!(age_bucket(at("2020-01-01T00:00:00Z"), now), "≥ 7d");
        assert_eq!(age_bucket(at("2027-01-01T00:00:00Z"), now), "< 1h", "a clock ahead");
        assert_eq!(age_bucket(None, now), "(unknown)");
    }

    #[test]
    fn json_age_keys_are_plain_identifiers() {
        let mut stats = Stats::default();
        for (label, _) in JSON_AGES {
            stats.by_age.insert(label.to_owned(), 1);
        }
        let json = serde_json::to_value(&stats).unwrap();
        for key in json["byAge"].as_object().unwrap().keys() {
            assert!(key.chars().all(|c| c.is_ascii_alphanumeric()), "{key}");
        }
        assert_eq!(json["byAge"].as_object().unwrap().len(), 6);
    }
}
