//! The idempotency store the environment chooses: a DynamoDB table
//! (`IDEMPOTENCY_TABLE`) or Redis/Valkey (`IDEMPOTENCY_REDIS_URL`), never
//! both, with the settings every store shares.

use std::time::Duration;

use backpressure_core::config::variables::{
    IDEMPOTENCY_KEY_PREFIX, IDEMPOTENCY_MISSING_KEY, IDEMPOTENCY_REDIS_URL, IDEMPOTENCY_TABLE,
    IDEMPOTENCY_TTL_SECONDS,
};
use backpressure_core::config::{ConfigError, Vars};
use backpressure_core::redis_url::without_password;

use backpressure_batch::idempotency::{Idempotency, MissingKey};

/// The longest `IDEMPOTENCY_KEY_PREFIX`: a key of up to 1,024 bytes behind
/// it stays within DynamoDB's 2,048-byte partition key.
pub(crate) const MAX_KEY_PREFIX_BYTES: usize = 256;

/// Where claims are written.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreChoice {
    /// `IDEMPOTENCY_TABLE`: a DynamoDB table.
    DynamoDb {
        /// The table's name.
        table: String,
    },
    /// `IDEMPOTENCY_REDIS_URL`: Redis or Valkey.
    Redis {
        /// `redis://` or `rediss://` (TLS), with the AUTH user and password if any.
        url: String,
    },
}

impl StoreChoice {
    /// For logs and errors: the table, or the Redis URL without its password.
    pub fn describe(&self) -> String {
        match self {
            Self::DynamoDb { table } => format!("DynamoDB table {table} (IDEMPOTENCY_TABLE)"),
            Self::Redis { url } => {
                format!("Redis at {} (IDEMPOTENCY_REDIS_URL)", without_password(url))
            }
        }
    }
}

/// The idempotency settings from the environment.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct IdempotencyConfig {
    /// The store.
    pub store: StoreChoice,
    /// `IDEMPOTENCY_KEY_PREFIX`: put before every record's id.
    pub key_prefix: String,
    /// `IDEMPOTENCY_TTL_SECONDS` (60–31,536,000, default 3,600): how long a
    /// completed key is remembered.
    pub ttl: Duration,
    /// `IDEMPOTENCY_MISSING_KEY` (`process`, the default, or `quarantine`).
    pub missing_key: MissingKey,
}

impl IdempotencyConfig {
    /// These settings on `store`.
    pub fn settings(&self, store: Idempotency) -> Idempotency {
        store.ttl(self.ttl).missing_key(self.missing_key).key_prefix(&self.key_prefix)
    }

    /// Reads the variables into `errors`; `None` when no store is set.
    pub fn from_vars<F: Fn(&str) -> Option<String>>(
        vars: &Vars<F>,
        errors: &mut Vec<ConfigError>,
    ) -> Option<Self> {
        let ttl = vars.whole_or(&IDEMPOTENCY_TTL_SECONDS, errors);
        let missing_key = match vars.get(IDEMPOTENCY_MISSING_KEY.name).as_deref() {
            None | Some("process") => MissingKey::ProcessUnclaimed,
            Some("quarantine") => MissingKey::Quarantine,
            Some(other) => {
                errors.push(ConfigError::invalid(
                    IDEMPOTENCY_MISSING_KEY.name,
                    other,
                    "expected process or quarantine",
                ));
                MissingKey::ProcessUnclaimed
            }
        };
        let key_prefix = vars.get(IDEMPOTENCY_KEY_PREFIX.name).unwrap_or_default();
        if key_prefix.len() > MAX_KEY_PREFIX_BYTES {
            errors.push(ConfigError::invalid(
                IDEMPOTENCY_KEY_PREFIX.name,
                &key_prefix,
                format!("it is {} bytes; at most {MAX_KEY_PREFIX_BYTES}", key_prefix.len()),
            ));
        }
        let table = vars.get(IDEMPOTENCY_TABLE.name);
        let url = vars.get(IDEMPOTENCY_REDIS_URL.name);
        if let Some(url) = &url
            && let Some(problem) = redis_url_problem(url)
        {
            errors.push(ConfigError::invalid(
                IDEMPOTENCY_REDIS_URL.name,
                &without_password(url),
                problem,
            ));
        }
        let store = match (table, url) {
            (None, None) => return None,
            (Some(table), None) => StoreChoice::DynamoDb { table },
            (None, Some(url)) => StoreChoice::Redis { url },
            (Some(table), Some(_)) => {
                errors.push(ConfigError::invalid(
                    IDEMPOTENCY_REDIS_URL.name,
                    "(set)",
                    format!(
                        "{} is set too ({table}): one idempotency store, unset one of them",
                        IDEMPOTENCY_TABLE.name
                    ),
                ));
                StoreChoice::DynamoDb { table }
            }
        };
        let left_out = match &store {
            StoreChoice::DynamoDb { table } if !cfg!(feature = "dynamodb") => {
                Some((IDEMPOTENCY_TABLE.name, table.clone(), "dynamodb"))
            }
            StoreChoice::Redis { url } if !cfg!(feature = "redis") => {
                Some((IDEMPOTENCY_REDIS_URL.name, without_password(url), "redis"))
            }
            _ => None,
        };
        if let Some((name, value, feature)) = left_out {
            errors.push(ConfigError::invalid(
                name,
                &value,
                format!("this build has no such store: build backpressure-app with the feature `{feature}`"),
            ));
        }
        Some(Self { store, key_prefix, ttl: Duration::from_secs(ttl), missing_key })
    }
}

/// Why `url` cannot name a Redis server, if it cannot.
fn redis_url_problem(url: &str) -> Option<&'static str> {
    let Some((scheme, rest)) = url.split_once("://") else {
        return Some("expected redis://host:port or rediss://host:port (TLS)");
    };
    if !matches!(scheme, "redis" | "rediss" | "valkey" | "valkeys") {
        return Some(
            "the scheme is redis://, or rediss:// for TLS (ElastiCache's in-transit encryption)",
        );
    }
    let host = rest.rsplit_once('@').map_or(rest, |(_, host)| host);
    if host.is_empty() || host.starts_with('/') || host.starts_with(':') {
        return Some("it names no host");
    }
    #[cfg(feature = "redis")]
    if Idempotency::redis(url, "", Duration::from_secs(1)).is_err() {
        return Some(
            "the client cannot read it: percent-encode any / # ? @ : or % in the user or the password \
             (%2F %23 %3F %40 %3A %25)",
        );
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(pairs: &[(&str, &str)]) -> (Option<IdempotencyConfig>, Vec<String>) {
        let pairs: Vec<(String, String)> =
            pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        let vars = Vars::new(move |name: &str| {
            pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
        });
        let mut errors = Vec::new();
        let config = IdempotencyConfig::from_vars(&vars, &mut errors);
        (config, errors.iter().map(ToString::to_string).collect())
    }

    #[test]
    fn one_store_from_its_variable() {
        let (config, errors) =
            read(&[("IDEMPOTENCY_REDIS_URL", "rediss://:tok@cache.example:6379")]);
        assert!(errors.is_empty(), "{errors:?}");
        let config = config.unwrap();
        assert_eq!(
            config.store.describe(),
            "Redis at rediss://:****@cache.example:6379 (IDEMPOTENCY_REDIS_URL)"
        );
        assert_eq!(
            without_password("redis://cache:6379/0?password=s3cret&protocol=resp3"),
            "redis://cache:6379/0?password=****&protocol=resp3"
        );
        let (config, _) =
            read(&[("IDEMPOTENCY_TABLE", "claims"), ("IDEMPOTENCY_KEY_PREFIX", "fn-a:")]);
        let config = config.unwrap();
        assert_eq!(config.store, StoreChoice::DynamoDb { table: "claims".into() });
        assert_eq!(config.key_prefix, "fn-a:");
        assert_eq!(read(&[]).0, None);
    }

    #[test]
    fn both_stores_a_bad_url_or_a_long_prefix_are_refused_without_the_password() {
        let long = "p".repeat(MAX_KEY_PREFIX_BYTES + 1);
        let (_, errors) = read(&[
            ("IDEMPOTENCY_TABLE", "claims"),
            ("IDEMPOTENCY_REDIS_URL", "http://user:hunter2@cache:6379"),
            ("IDEMPOTENCY_KEY_PREFIX", &long),
        ]);
        let all = errors.join("\n");
        assert_eq!(errors.len(), 3, "{all}");
        assert!(all.contains("IDEMPOTENCY_TABLE is set too (claims)"), "{all}");
        assert!(all.contains("the scheme is redis://"), "{all}");
        assert!(all.contains("at most 256"), "{all}");
        assert!(!all.contains("hunter2"), "{all}");
        let (_, errors) = read(&[("IDEMPOTENCY_REDIS_URL", "redis://")]);
        assert!(errors[0].contains("it names no host"), "{errors:?}");
        let (_, errors) = read(&[("IDEMPOTENCY_REDIS_URL", "redis://:pa/ss#word@cache:6379")]);
        assert!(errors[0].contains("percent-encode"), "{errors:?}");
        assert!(!errors[0].contains("ss#word"), "{errors:?}");
    }
}
