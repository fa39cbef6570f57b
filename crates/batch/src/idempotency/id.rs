//! A record's id, and a Redis key: encodings in which no two inputs meet.
//!
//! The key prefix and the scope are each written with their length in bytes
//! before them, so where one ends and the next begins is never a guess (a
//! prefix `r7X` on queue `x-qX` and a prefix `r7Xx-` on queue `qX` once
//! joined into one key). The message's key comes last, after `#` as it is, or
//! after `@` as `sha256:<hex>` when it is too long to store.

use super::body_hash;

/// Keys longer than this are stored by their hash.
pub(crate) const MAX_KEY_BYTES: usize = 1024;

/// `<bytes>:<prefix><bytes>:<scope>`: what every id of one batch begins with.
pub(crate) fn id_head(prefix: &str, scope: &str) -> String {
    format!("{}:{prefix}{}:{scope}", prefix.len(), scope.len())
}

/// The id for `key` after [`id_head`]: `#<key>`, or `@sha256:<hex>` for a key
/// longer than [`MAX_KEY_BYTES`] (DynamoDB's partition key holds 2,048 bytes).
pub(crate) fn id_in(head: &str, key: &str) -> String {
    if key.len() > MAX_KEY_BYTES {
        return format!("{head}@sha256:{}", body_hash(key));
    }
    format!("{head}#{key}")
}

/// The id of the record a message's idempotency key is claimed under:
/// `<bytes>:<prefix><bytes>:<scope>#<key>`, for example `4:fn-a6:orders#k-1`
/// for prefix `fn-a`, scope `orders` and key `k-1`; `0:6:orders#k-1` without
/// a prefix. Distinct (prefix, scope, key) triples never give one id. To find
/// a key's record in the table or in Redis, ask for this id.
pub fn record_id(prefix: &str, scope: &str, key: &str) -> String {
    id_in(&id_head(prefix, scope), key)
}

/// The Redis key of a record id in a store namespace: the id itself without a
/// namespace, `<bytes>:<namespace><id>` with one. An id always goes on with a
/// digit where a scope would end in `#` or `@`, so no namespaced key is
/// another namespace's, or none's.
#[cfg(any(feature = "redis", test))]
pub(crate) fn redis_key(namespace: &str, id: &str) -> String {
    if namespace.is_empty() {
        return id.to_owned();
    }
    format!("{}:{namespace}{id}", namespace.len())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// How an id's key was stored.
    #[derive(Debug, PartialEq)]
    enum Key {
        AsIs(String),
        Hashed(String),
    }

    /// `<bytes>:` and that many bytes, then the rest.
    fn counted(text: &str) -> Option<(&str, &str)> {
        let (length, rest) = text.split_once(':')?;
        if length.is_empty() || (length.len() > 1 && length.starts_with('0')) {
            return None;
        }
        let length: usize = length.parse().ok()?;
        Some((rest.get(..length)?, rest.get(length..)?))
    }

    /// An id read back into its parts: the inverse of [`record_id`].
    fn decode(id: &str) -> Option<(&str, &str, Key)> {
        let (prefix, rest) = counted(id)?;
        let (scope, rest) = counted(rest)?;
        let key = if let Some(key) = rest.strip_prefix('#') {
            Key::AsIs(key.to_owned())
        } else {
            Key::Hashed(rest.strip_prefix("@sha256:")?.to_owned())
        };
        Some((prefix, scope, key))
    }

    /// A Redis key read back into (namespace, id): an id as it is, or a
    /// counted namespace before one.
    fn decode_redis(key: &str) -> Option<(&str, &str)> {
        if decode(key).is_some() {
            return Some(("", key));
        }
        let (namespace, id) = counted(key)?;
        decode(id).map(|_| (namespace, id))
    }

    fn text() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => "[a-z0-9:#@-]{0,12}",
            2 => any::<String>(),
            1 => "[#:@0-9a]{0,3}".prop_map(|s| s.repeat(400)),
        ]
    }

    fn stored_key(key: &str) -> Key {
        if key.len() > MAX_KEY_BYTES {
            Key::Hashed(body_hash(key))
        } else {
            Key::AsIs(key.to_owned())
        }
    }

    #[test]
    fn the_prefixes_that_once_met_give_two_ids() {
        let a = record_id("r7X", "x-qX", "k");
        let b = record_id("r7Xx-", "qX", "k");
        assert_ne!(a, b);
        assert_eq!(a, "3:r7X4:x-qX#k");
        assert_eq!(b, "5:r7Xx-2:qX#k");
    }

    #[test]
    fn a_literal_key_never_meets_a_hashed_one() {
        let long = "k".repeat(MAX_KEY_BYTES + 1);
        let hashed = record_id("", "q", &long);
        let literal = record_id("", "q", &format!("sha256:{}", body_hash(&long)));
        assert_ne!(hashed, literal);
    }

    proptest! {
        #[test]
        fn an_id_reads_back_as_its_prefix_scope_and_key(
            prefix in text(), scope in text(), key in text()
        ) {
            let id = record_id(&prefix, &scope, &key);
            let decoded = decode(&id);
            prop_assert_eq!(decoded, Some((prefix.as_str(), scope.as_str(), stored_key(&key))));
        }

        #[test]
        fn distinct_triples_never_give_one_id(
            a in (text(), text(), text()), b in (text(), text(), text())
        ) {
            prop_assume!(a != b);
            prop_assert_ne!(record_id(&a.0, &a.1, &a.2), record_id(&b.0, &b.1, &b.2));
        }

        #[test]
        fn a_redis_key_reads_back_as_its_namespace_and_id(
            namespace in text(), prefix in text(), scope in text(), key in text()
        ) {
            let id = record_id(&prefix, &scope, &key);
            let redis = redis_key(&namespace, &id);
            prop_assert_eq!(decode_redis(&redis), Some((namespace.as_str(), id.as_str())));
        }
    }
}
