//! [`RedisStore`]: claims in Redis or Valkey (ElastiCache, MemoryDB, your
//! own), one hash per key with the DynamoDB store's fields (`status`,
//! `expiration` in epoch seconds, `in_progress_expiration` in epoch
//! milliseconds, `validation`, `holder`, `data`). Each rule of
//! [`super::record`] is a Lua script, so a claim's test and its write are one
//! atomic step on the server; the key also expires in Redis at `expiration`,
//! but every script compares the times itself, by the caller's clock, as the
//! DynamoDB store's conditions do.

use std::collections::HashMap;
use std::time::Duration;

use redis::{Client, RedisError, RedisResult, Script};

use super::claim::{ClaimOutcome, Status, StoredRecord, epoch_ms, epoch_s_ceil};
use super::id::redis_key;
use super::redis_link::{Connection, Link};
use super::requests::{ClaimRequest, CompleteRequest, LookupRequest, ReleaseRequest, RenewRequest};
use super::{IdempotencyStore, StoreError};

const FIELDS: [&str; 6] =
    ["status", "expiration", "in_progress_expiration", "validation", "holder", "data"];

/// Written when the key is absent, expired, or in progress past its lease;
/// otherwise the record is returned as it is. A script with flags (Redis 7.0,
/// Valkey 7.2): without `allow-oom`, a server at its `maxmemory` refuses it
/// whole, so no claim lands that could not be completed (a script without
/// flags is checked at its first write, and `DEL` passes that check).
const CLAIM: &str = r"#!lua
local r = redis.call('HMGET', KEYS[1], 'status', 'expiration', 'in_progress_expiration',
                     'validation', 'holder', 'data')
local now_ms = tonumber(ARGV[1])
local expiration = tonumber(r[2])
local lease = tonumber(r[3])
if r[1] == false or (expiration ~= nil and expiration * 1000 <= now_ms)
   or (r[1] == 'INPROGRESS' and lease ~= nil and lease <= now_ms) then
  redis.call('DEL', KEYS[1])
  redis.call('HSET', KEYS[1], 'status', 'INPROGRESS', 'expiration', ARGV[5],
             'in_progress_expiration', ARGV[4], 'validation', ARGV[3], 'holder', ARGV[2])
  redis.call('PEXPIREAT', KEYS[1], tonumber(ARGV[5]) * 1000)
  return 'CLAIMED'
end
return r
";

/// The holder's claim completed until ARGV[2], with ARGV[3] as data if given.
/// Already completed by this holder (a retried call whose answer was lost) is done too.
/// Allowed past `maxmemory`: the work is done, and only claims made before the
/// server filled (at most the consumers' concurrency) can still complete.
const COMPLETE: &str = r"#!lua flags=allow-oom
local status = redis.call('HGET', KEYS[1], 'status')
local holder = redis.call('HGET', KEYS[1], 'holder')
if holder ~= ARGV[1] then return 0 end
if status == 'COMPLETED' then return 1 end
if status ~= 'INPROGRESS' then return 0 end
redis.call('HSET', KEYS[1], 'status', 'COMPLETED', 'expiration', ARGV[2])
if ARGV[3] ~= nil then redis.call('HSET', KEYS[1], 'data', ARGV[3]) end
redis.call('PEXPIREAT', KEYS[1], tonumber(ARGV[2]) * 1000)
return 1
";

/// The holder's lease until ARGV[2] (ms), the record until ARGV[3] (s); it
/// rewrites numbers in place, so it is allowed past `maxmemory`.
const RENEW: &str = r"#!lua flags=allow-oom
if redis.call('HGET', KEYS[1], 'status') ~= 'INPROGRESS'
   or redis.call('HGET', KEYS[1], 'holder') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'in_progress_expiration', ARGV[2], 'expiration', ARGV[3])
redis.call('PEXPIREAT', KEYS[1], tonumber(ARGV[3]) * 1000)
return 1
";

/// The holder's claim removed; already gone (a retried call) is removed too.
/// It frees memory, so it is allowed past `maxmemory`.
const RELEASE: &str = r"#!lua flags=allow-oom
if redis.call('EXISTS', KEYS[1]) == 0 then return 1 end
if redis.call('HGET', KEYS[1], 'status') ~= 'INPROGRESS'
   or redis.call('HGET', KEYS[1], 'holder') ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
";

/// Claims in Redis or Valkey at a `redis://` or `rediss://` (TLS) URL
/// with the AUTH user and password the URL gives
/// (ElastiCache's AUTH token is the password), Redis 7.0 or later or Valkey
/// 7.2 or later. Connects on first use, and makes a new connection after a
/// call on the old one timed out or broke; clones share the connection.
#[derive(Clone)]
pub(crate) struct RedisStore {
    client: Client,
    namespace: String,
    link: Link,
    scripts: std::sync::Arc<Scripts>,
}

struct Scripts {
    claim: Script,
    complete: Script,
    renew: Script,
    release: Script,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let info = self.client.get_connection_info();
        f.debug_struct("RedisStore")
            .field("address", &info.addr().to_string())
            .field("namespace", &self.namespace)
            .finish_non_exhaustive()
    }
}

impl RedisStore {
    fn failed(&self, operation: &'static str, source: RedisError) -> StoreError {
        let address = self.client.get_connection_info().addr().to_string();
        StoreError::Redis { address, operation, source }
    }
}

fn unreadable(id: &str, why: &str) -> StoreError {
    StoreError::Unreadable { id: id.to_owned(), why: why.to_owned() }
}

/// The fields of [`FIELDS`] as a record, or why they cannot be one.
fn parse(id: &str, fields: &[Option<String>]) -> Result<StoredRecord, StoreError> {
    let field = |at: usize| fields.get(at).cloned().flatten();
    let status = field(0).and_then(|s| Status::parse(&s));
    let status =
        status.ok_or_else(|| unreadable(id, "its status is neither INPROGRESS nor COMPLETED"))?;
    Ok(StoredRecord {
        status,
        expiration: field(1)
            .and_then(|e| e.parse().ok())
            .ok_or_else(|| unreadable(id, "it has no numeric expiration"))?,
        in_progress_until: field(2).and_then(|e| e.parse().ok()).unwrap_or(0),
        validation: field(3).unwrap_or_default(),
        holder: field(4).unwrap_or_default(),
        data: field(5),
    })
}

impl RedisStore {
    /// A store at `url`, its keys prefixed with `prefix` (several functions
    /// can share one server), each call given `call_timeout` to connect and
    /// to answer. Nothing is connected yet.
    pub(crate) fn new(
        url: &str,
        namespace: &str,
        call_timeout: Duration,
    ) -> Result<Self, StoreError> {
        let client = Client::open(url).map_err(|source| StoreError::Redis {
            address: backpressure_core::redis_url::without_password(url),
            operation: "open",
            source,
        })?;
        let scripts = Scripts {
            claim: Script::new(CLAIM),
            complete: Script::new(COMPLETE),
            renew: Script::new(RENEW),
            release: Script::new(RELEASE),
        };
        Ok(Self {
            link: Link::new(client.clone(), call_timeout),
            client,
            namespace: namespace.to_owned(),
            scripts: std::sync::Arc::new(scripts),
        })
    }

    async fn connection(&self) -> Result<Connection, StoreError> {
        self.link.get().await.map_err(|source| self.failed("connect", source))
    }

    /// A call's answer; a connection that timed out or broke is dropped.
    fn answered<T>(
        &self,
        used: &Connection,
        operation: &'static str,
        answer: RedisResult<T>,
    ) -> Result<T, StoreError> {
        answer.map_err(|source| {
            self.link.failed(used, &source);
            self.failed(operation, source)
        })
    }

    fn key(&self, id: &str) -> String {
        redis_key(&self.namespace, id)
    }

    async fn held(
        &self,
        operation: &'static str,
        script: &Script,
        id: &str,
        args: &[String],
    ) -> Result<(), StoreError> {
        let mut used = self.connection().await?;
        let mut invocation = script.key(self.key(id));
        for arg in args {
            invocation.arg(arg);
        }
        let answer = invocation.invoke_async::<i64>(&mut used.connection).await;
        match self.answered(&used, operation, answer)? {
            1 => Ok(()),
            _ => Err(StoreError::NotHeld),
        }
    }
}

impl IdempotencyStore for RedisStore {
    /// Connects, sends `PING` and runs a script with flags, so a wrong
    /// address or password, or a server older than Redis 7.0, shows at start-up.
    async fn check(&self) -> Result<(), StoreError> {
        let mut used = self.connection().await?;
        let ping = redis::cmd("PING").query_async::<String>(&mut used.connection).await;
        self.answered(&used, "PING", ping)?;
        let flagged = redis::cmd("EVAL")
            .arg("#!lua flags=no-writes\nreturn 1")
            .arg(0)
            .query_async::<i64>(&mut used.connection)
            .await;
        self.answered(
            &used,
            "a script with flags (Redis 7.0 or later, Valkey 7.2 or later)",
            flagged,
        )
        .map(|_| ())
    }

    async fn completed(
        &self,
        request: &LookupRequest<'_>,
    ) -> Result<HashMap<String, ClaimOutcome>, StoreError> {
        let LookupRequest { ids, now } = *request;
        let mut used = self.connection().await?;
        let mut pipeline = redis::pipe();
        for id in ids {
            pipeline.cmd("HMGET").arg(self.key(id)).arg(&FIELDS[..]);
        }
        let rows = pipeline.query_async::<Vec<Vec<Option<String>>>>(&mut used.connection).await;
        let rows = self.answered(&used, "HMGET", rows)?;
        let mut completed = HashMap::new();
        for (id, fields) in ids.iter().zip(rows) {
            if fields.iter().all(Option::is_none) {
                continue;
            }
            // A record this crate cannot read is left to its claim, which says why.
            let Ok(record) = parse(id, &fields) else { continue };
            if record.status == Status::Completed
                && let Some(found) = record.found(now)
            {
                completed.insert(id.clone(), found);
            }
        }
        Ok(completed)
    }

    async fn claim(&self, request: &ClaimRequest<'_>) -> Result<ClaimOutcome, StoreError> {
        let mut used = self.connection().await?;
        let record = request.record();
        let answer = self
            .scripts
            .claim
            .key(self.key(request.id))
            .arg(epoch_ms(request.now))
            .arg(request.holder)
            .arg(request.validation)
            .arg(record.in_progress_until)
            .arg(record.expiration)
            .invoke_async::<redis::Value>(&mut used.connection)
            .await;
        let answer = self.answered(&used, "claim", answer)?;
        let claimed = match &answer {
            redis::Value::SimpleString(text) => text == "CLAIMED",
            redis::Value::BulkString(bytes) => bytes == b"CLAIMED",
            _ => false,
        };
        if claimed {
            return Ok(ClaimOutcome::Claimed);
        }
        let fields: Vec<Option<String>> =
            redis::from_redis_value(answer).map_err(|e| self.failed("claim", e.into()))?;
        let found = parse(request.id, &fields)?;
        // The script wrote nothing, so the record counts at the caller's now.
        found.found(request.now).ok_or_else(|| unreadable(request.id, "claimable, yet not claimed"))
    }

    async fn complete(&self, request: &CompleteRequest<'_>) -> Result<(), StoreError> {
        let CompleteRequest { id, holder, expiration, data } = *request;
        let mut args = vec![holder.to_owned(), epoch_s_ceil(expiration).to_string()];
        args.extend(data.map(str::to_owned));
        self.held("complete", &self.scripts.complete, id, &args).await
    }

    async fn renew(&self, request: &RenewRequest<'_>) -> Result<(), StoreError> {
        let RenewRequest { id, holder, lease_until } = *request;
        let args = [
            holder.to_owned(),
            epoch_ms(lease_until).to_string(),
            epoch_s_ceil(lease_until).to_string(),
        ];
        self.held("renew", &self.scripts.renew, id, &args).await
    }

    async fn release(&self, request: &ReleaseRequest<'_>) -> Result<(), StoreError> {
        let ReleaseRequest { id, holder } = *request;
        self.held("release", &self.scripts.release, id, &[holder.to_owned()]).await
    }
}
