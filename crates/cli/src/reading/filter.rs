//! Which entries a command acts on.

use backpressure_core::field::Selector;
use jiff::Timestamp;

use crate::args::FilterArgs;
use crate::args::times::parse_time;
use crate::reading::entry::Entry;
use crate::reading::fields::Fields;
use crate::terminal::error::CliError;

/// The filters of one command, times resolved. Empty lists match everything.
#[derive(Debug, Clone, Default)]
pub(crate) struct Filter {
    error_codes: Vec<String>,
    tenants: Vec<String>,
    no_tenant: bool,
    keys: Vec<String>,
    /// `--where`: each field with the values it may have.
    fields_match: Vec<(Selector, Vec<String>)>,
    not_json: bool,
    only_json: bool,
    operations: Vec<String>,
    groups: Vec<String>,
    message_ids: Vec<String>,
    since: Option<Timestamp>,
    until: Option<Timestamp>,
    fields: Fields,
}

impl Filter {
    /// The filters given on the command line, ages counted back from `now`.
    pub(crate) fn new(args: FilterArgs, now: Timestamp) -> Result<Self, CliError> {
        let time = |flag: &'static str, value: Option<String>| {
            value
                .map(|value| parse_time(&value, now).ok_or(CliError::BadTime { flag, value }))
                .transpose()
        };
        let (since, until) = (time("--since", args.since)?, time("--until", args.until)?);
        if let (Some(since), Some(until)) = (since, until)
            && until <= since
        {
            return Err(CliError::Usage(format!(
                "--until ({until}) is not after --since ({since}): no message could match \
                 (an age counts back from now: --since 3h --until 2h is the hour before the last)"
            )));
        }
        let mut fields_match: Vec<(Selector, Vec<String>)> = Vec::new();
        for (selector, value) in args.wheres {
            match fields_match.iter_mut().find(|(given, _)| *given == selector) {
                Some((_, values)) => values.push(value),
                None => fields_match.push((selector, vec![value])),
            }
        }
        Ok(Self {
            since,
            until,
            error_codes: args.error_codes,
            tenants: args.tenants,
            no_tenant: args.no_tenant,
            keys: args.keys,
            fields_match,
            not_json: args.not_json,
            only_json: args.only_json,
            operations: args.operations,
            groups: args.groups,
            message_ids: args.message_ids,
            fields: Fields {
                tenant: args.tenant_from,
                key: args.key_from,
                envelope: args.envelope,
            },
        })
    }

    /// Where each message's tenant and key are read (`--tenant-from`, `--key-from`).
    pub(crate) fn fields(&self) -> &Fields {
        &self.fields
    }

    /// The filter of one message, by its original or its queue message id.
    pub(crate) fn message_id(id: &str) -> Self {
        Self { message_ids: vec![id.to_owned()], ..Self::default() }
    }

    /// Whether `entry` passes every filter. An entry without the field a
    /// filter names does not pass it (a raw message has no error code).
    pub(crate) fn matches(&self, entry: &Entry) -> bool {
        let one_of = |accepted: &[String], value: Option<&str>| {
            accepted.is_empty() || value.is_some_and(|v| accepted.iter().any(|a| a == v))
        };
        let id_matches = self.message_ids.is_empty()
            || self
                .message_ids
                .iter()
                .any(|id| *id == entry.original_message_id || *id == entry.queue_message_id);
        let in_time = match (self.since, self.until, entry.at) {
            (None, None, _) => true,
            (_, _, None) => false,
            (since, until, Some(at)) => {
                since.is_none_or(|s| at >= s) && until.is_none_or(|u| at < u)
            }
        };
        let tenantless = entry.tenant_id.as_deref().is_none_or(str::is_empty);
        let is_json = |json: bool| {
            entry
                .body
                .as_deref()
                .is_some_and(|body| backpressure_core::field::is_json(body) == json)
        };
        let original = entry.original();
        let fields_match = self.fields_match.iter().all(|(selector, values)| {
            original.select(selector).is_some_and(|found| values.contains(&found))
        });
        one_of(&self.error_codes, entry.error_code.as_deref())
            && one_of(&self.tenants, entry.tenant_id.as_deref())
            && (!self.no_tenant || tenantless)
            && one_of(&self.keys, entry.idempotency_key.as_deref())
            && fields_match
            && (!self.not_json || is_json(false))
            && (!self.only_json || is_json(true))
            && one_of(&self.operations, entry.operation.as_deref())
            && one_of(&self.groups, entry.group_id.as_deref())
            && id_matches
            && in_time
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::collections::BTreeMap;

    use super::*;
    use crate::reading::entry::Kind;

    fn entry(code: Option<&str>, tenant: Option<&str>, at: &str) -> Entry {
        Entry {
            envelope: None,
            inside: None,
            queue_message_id: "q-1".into(),
            received_id: "q-1".into(),
            receipt_handle: "rh".into(),
            kind: Kind::Quarantine,
            original_message_id: "m-1".into(),
            error_code: code.map(Into::into),
            error_detail: None,
            tenant_id: tenant.map(Into::into),
            operation: Some("charge".into()),
            idempotency_key: None,
            source_queue_arn: None,
            group_id: None,
            at: Some(at.parse().unwrap()),
            body: None,
            body_object: None,
            body_problem: None,
            message_attributes: BTreeMap::new(),
            queue_body: String::new(),
            queue_attributes: BTreeMap::new(),
            queue_message_attributes: BTreeMap::new(),
            origin: crate::reading::origin::Origin::default(),
        }
    }

    fn filter(args: FilterArgs) -> Filter {
        Filter::new(args, "2026-11-30T12:00:00Z".parse().unwrap()).unwrap()
    }

    #[test]
    fn values_of_one_filter_are_alternatives_and_filters_combine() {
        let f = filter(FilterArgs {
            error_codes: vec!["invalid_json".into(), "schema_violation".into()],
            tenants: vec!["t-1".into()],
            ..Default::default()
        });
        assert!(f.matches(&entry(Some("invalid_json"), Some("t-1"), "2026-11-30T11:00:00Z")));
        assert!(f.matches(&entry(Some("schema_violation"), Some("t-1"), "2026-11-30T11:00:00Z")));
        assert!(!f.matches(&entry(Some("invalid_json"), Some("t-2"), "2026-11-30T11:00:00Z")));
        assert!(!f.matches(&entry(None, Some("t-1"), "2026-11-30T11:00:00Z")), "no code");
        assert!(filter(FilterArgs::default()).matches(&entry(None, None, "2026-11-30T11:00:00Z")));
    }

    #[test]
    fn ids_match_the_original_or_the_queue_message() {
        for id in ["m-1", "q-1"] {
            let f = filter(FilterArgs { message_ids: vec![id.into()], ..Default::default() });
            assert!(f.matches(&entry(None, None, "2026-11-30T11:00:00Z")), "{id}");
        }
        let f = filter(FilterArgs { message_ids: vec!["m-2".into()], ..Default::default() });
        assert!(!f.matches(&entry(None, None, "2026-11-30T11:00:00Z")));
    }

    #[test]
    fn times_are_instants_or_ages() {
        let f = filter(FilterArgs { since: Some("2h".into()), ..Default::default() });
        assert!(f.matches(&entry(None, None, "2026-11-30T10:00:00Z")), "the bound is inclusive");
        assert!(!f.matches(&entry(None, None, "2026-11-30T09:59:59Z")));
        let f = filter(FilterArgs {
            since: Some("2026-11-29T00:00:00Z".into()),
            until: Some("1d".into()),
            ..Default::default()
        });
        assert!(f.matches(&entry(None, None, "2026-11-29T11:59:59Z")));
        assert!(!f.matches(&entry(None, None, "2026-11-29T12:00:00Z")), "until is exclusive");
        for bad in ["yesterday", "-2h", "2026-13-01T00:00:00Z", "", "9999999999999999d", "-1d"] {
            let args = FilterArgs { until: Some(bad.into()), ..Default::default() };
            let error = Filter::new(args, Timestamp::UNIX_EPOCH).unwrap_err().to_string();
            assert!(error.contains("--until") && error.contains(bad), "{error}");
        }
    }

    #[test]
    fn no_tenant_and_not_json_select_what_no_value_could() {
        let with_body = |tenant: Option<&str>, body: Option<&str>| {
            let mut entry = entry(None, tenant, "2026-11-30T11:00:00Z");
            entry.body = body.map(str::to_owned);
            entry
        };
        let no_tenant = filter(FilterArgs { no_tenant: true, ..Default::default() });
        assert!(no_tenant.matches(&with_body(None, Some("{}"))));
        assert!(no_tenant.matches(&with_body(Some(""), Some("{}"))), "an empty tenant is none");
        assert!(!no_tenant.matches(&with_body(Some("t-1"), Some("{}"))));
        let not_json = filter(FilterArgs { not_json: true, ..Default::default() });
        assert!(not_json.matches(&with_body(None, Some("<html>502</html>"))));
        assert!(not_json.matches(&with_body(None, Some(""))));
        assert!(!not_json.matches(&with_body(None, Some(r#"{"a":[1]}"#))));
        assert!(!not_json.matches(&with_body(None, None)), "a body in S3 is not read for it");
    }
}
