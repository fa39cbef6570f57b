//! [`RedisStore`]: claims in Redis or Valkey (ElastiCache, MemoryDB, your
//! own), one hash per key with the DynamoDB store's fields (`status`,
//! `expiration` in epoch seconds, `in_progress_expiration` in epoch
//! milliseconds, `validation`, `holder`, `data`). Each rule of
//! [`super::record`] is a Lua script, so a claim's test and its write are one
//! atomic step on the server; the key also expires in Redis at `expiration`,
//! but every script compares the times itself, by the caller's clock, as the
//! DynamoDB store's conditions do.

use std::collections::HashMap;
use std::time::{Duration, SystemTime};

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{Client, RedisError, Script};
use tokio::sync::OnceCell;

use super::record::{ClaimOutcome, ClaimRequest, Status, StoredRecord, epoch_ms, epoch_s_ceil};
use super::{IdempotencyStore, StoreError};

const FIELDS: [&str; 6] =
    ["status", "expiration", "in_progress_expiration", "validation", "holder", "data"];

/// Written when the key is absent, expired, or in progress past its lease;
/// otherwise the record is returned as it is.
const CLAIM: &str = r"
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
const COMPLETE: &str = r"
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

/// The holder's lease until ARGV[2] (ms), the record until ARGV[3] (s).
const RENEW: &str = r"
if redis.call('HGET', KEYS[1], 'status') ~= 'INPROGRESS'
   or redis.call('HGET', KEYS[1], 'holder') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'in_progress_expiration', ARGV[2], 'expiration', ARGV[3])
redis.call('PEXPIREAT', KEYS[1], tonumber(ARGV[3]) * 1000)
return 1
";

/// The holder's claim removed; already gone (a retried call) is removed too.
const RELEASE: &str = r"
if redis.call('EXISTS', KEYS[1]) == 0 then return 1 end
if redis.call('HGET', KEYS[1], 'status') ~= 'INPROGRESS'
   or redis.call('HGET', KEYS[1], 'holder') ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
";

/// Claims in Redis or Valkey at a `redis://` or `rediss://` (TLS) URL
/// (`IDEMPOTENCY_REDIS_URL`), with the AUTH user and password the URL gives
/// (ElastiCache's AUTH token is the password). Connects on first use and
/// reconnects after a lost connection; clones share the connection.
#[derive(Clone)]
pub struct RedisStore {
    client: Client,
    prefix: String,
    call_timeout: Duration,
    connection: std::sync::Arc<OnceCell<ConnectionManager>>,
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
            .field("prefix", &self.prefix)
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
    pub fn new(url: &str, prefix: &str, call_timeout: Duration) -> Result<Self, StoreError> {
        let client = Client::open(url).map_err(|source| StoreError::Redis {
            address: super::config::without_password(url),
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
            client,
            prefix: prefix.to_owned(),
            call_timeout,
            connection: std::sync::Arc::default(),
            scripts: std::sync::Arc::new(scripts),
        })
    }

    /// Connects and sends `PING`, so a wrong address or password shows at start-up.
    pub async fn check(&self) -> Result<(), StoreError> {
        let mut connection = self.connection().await?;
        redis::cmd("PING")
            .query_async::<String>(&mut connection)
            .await
            .map(|_| ())
            .map_err(|source| self.failed("PING", source))
    }

    async fn connection(&self) -> Result<ConnectionManager, StoreError> {
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(self.call_timeout))
            .set_response_timeout(Some(self.call_timeout))
            // One attempt a call: API_CALL_TIMEOUT_MS bounds it; the next call reconnects.
            .set_number_of_retries(0);
        self.connection
            .get_or_try_init(|| ConnectionManager::new_with_config(self.client.clone(), config))
            .await
            .cloned()
            .map_err(|source| self.failed("connect", source))
    }

    fn key(&self, id: &str) -> String {
        format!("{}{id}", self.prefix)
    }

    async fn held(
        &self,
        operation: &'static str,
        script: &Script,
        id: &str,
        args: &[String],
    ) -> Result<(), StoreError> {
        let mut connection = self.connection().await?;
        let mut invocation = script.key(self.key(id));
        for arg in args {
            invocation.arg(arg);
        }
        match invocation.invoke_async::<i64>(&mut connection).await {
            Ok(1) => Ok(()),
            Ok(_) => Err(StoreError::NotHeld),
            Err(source) => Err(self.failed(operation, source)),
        }
    }
}

impl IdempotencyStore for RedisStore {
    async fn completed(
        &self,
        ids: &[String],
        now: SystemTime,
    ) -> Result<HashMap<String, ClaimOutcome>, StoreError> {
        let mut connection = self.connection().await?;
        let mut pipeline = redis::pipe();
        for id in ids {
            pipeline.cmd("HMGET").arg(self.key(id)).arg(&FIELDS[..]);
        }
        let rows: Vec<Vec<Option<String>>> =
            pipeline.query_async(&mut connection).await.map_err(|e| self.failed("HMGET", e))?;
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
        let mut connection = self.connection().await?;
        let record = request.record();
        let answer: redis::Value = self
            .scripts
            .claim
            .key(self.key(request.id))
            .arg(epoch_ms(request.now))
            .arg(request.holder)
            .arg(request.validation)
            .arg(record.in_progress_until)
            .arg(record.expiration)
            .invoke_async(&mut connection)
            .await
            .map_err(|source| self.failed("claim", source))?;
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

    async fn complete(
        &self,
        id: &str,
        holder: &str,
        expiration: SystemTime,
        data: Option<&str>,
    ) -> Result<(), StoreError> {
        let mut args = vec![holder.to_owned(), epoch_s_ceil(expiration).to_string()];
        args.extend(data.map(str::to_owned));
        self.held("complete", &self.scripts.complete, id, &args).await
    }

    async fn renew(
        &self,
        id: &str,
        holder: &str,
        lease_until: SystemTime,
    ) -> Result<(), StoreError> {
        let args = [
            holder.to_owned(),
            epoch_ms(lease_until).to_string(),
            epoch_s_ceil(lease_until).to_string(),
        ];
        self.held("renew", &self.scripts.renew, id, &args).await
    }

    async fn release(&self, id: &str, holder: &str) -> Result<(), StoreError> {
        self.held("release", &self.scripts.release, id, &[holder.to_owned()]).await
    }
}
