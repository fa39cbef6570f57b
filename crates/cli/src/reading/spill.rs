//! What a read keeps per message, in memory up to a bound and on disk past it.
//!
//! A scan or a sweep must remember every message it read until it ends (the
//! ids it checks exactly-once against, the receipt handles it releases), and a
//! dead-letter queue after an incident holds hundreds of thousands. Each store
//! here is a private temporary SQLite database: its pages stay in a cache of
//! [`CACHE_KIB`] and go to a file past it, in SQLite's temporary directory
//! (`SQLITE_TMPDIR`, else `TMPDIR`, else `/var/tmp`), which SQLite deletes
//! when the store is dropped. Nothing here needs to survive a crash: a rerun
//! reads the queue again.
//!
//! A failed write (a full disk) makes the store answer as if it held
//! everything it was asked about and keeps the error, which the read returns
//! after the batch at hand ([`Keys::failure`]): a sweep then leaves a message
//! alone rather than act on it twice.

use rusqlite::{Connection, OptionalExtension, params};

/// The most memory one store's pages take (SQLite's page cache), in KiB.
pub const CACHE_KIB: u32 = 4096;

/// The temporary store failed (most often: no space left in its temporary directory).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SpillError(#[from] rusqlite::Error);

/// Writes grouped into one transaction: committing each statement on its own
/// was most of what the stores cost a read (perf of `stats` on 100,000
/// messages: 12 % of the CLI's CPU in the commits' bookkeeping).
const WRITES_PER_TRANSACTION: u32 = 500;

/// A private temporary database, tuned for a store nobody else reads: no
/// journal and no sync, so after a write the disk refused its content is
/// not to be trusted (the store says so, [`Keys::failure`]). It is left in a
/// transaction, which [`wrote`] commits every [`WRITES_PER_TRANSACTION`] writes.
pub(crate) fn open(schema: &str) -> Result<Connection, SpillError> {
    let connection = Connection::open("")?;
    connection.execute_batch(&format!(
        "PRAGMA cache_size = -{CACHE_KIB}; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; \
         PRAGMA temp_store = FILE; {schema} BEGIN;"
    ))?;
    Ok(connection)
}

/// Counts one write to a store from [`open`]; commits and begins the next
/// transaction every [`WRITES_PER_TRANSACTION`].
pub(crate) fn wrote(connection: &Connection, writes: &mut u32) -> rusqlite::Result<()> {
    *writes += 1;
    if *writes < WRITES_PER_TRANSACTION {
        return Ok(());
    }
    *writes = 0;
    // After a failed write SQLite may have ended the transaction itself: begin one either way.
    let committed =
        if connection.is_autocommit() { Ok(()) } else { connection.execute_batch("COMMIT") };
    committed.and(connection.execute_batch("BEGIN"))
}

/// A set of strings, each with an optional string beside it.
#[derive(Debug)]
pub struct Keys {
    connection: Connection,
    len: usize,
    writes: u32,
    failure: Option<SpillError>,
}

impl Keys {
    pub fn new() -> Result<Self, SpillError> {
        let connection =
            open("CREATE TABLE keys (key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;")?;
        Ok(Self { connection, len: 0, writes: 0, failure: None })
    }

    /// Adds `key` (with `value`) unless present: whether it was new.
    pub fn insert(&mut self, key: &str, value: Option<&str>) -> bool {
        let inserted = self
            .connection
            .prepare_cached("INSERT OR IGNORE INTO keys (key, value) VALUES (?1, ?2)")
            .and_then(|mut statement| statement.execute(params![key, value]))
            .and_then(|changed| wrote(&self.connection, &mut self.writes).map(|()| changed));
        match inserted {
            Ok(changed) => {
                self.len += changed;
                changed > 0
            }
            Err(error) => {
                self.failure.get_or_insert(error.into());
                false
            }
        }
    }

    /// Whether `key` is present; `true` once the store has failed.
    pub fn contains(&mut self, key: &str) -> bool {
        self.value(key).is_some()
    }

    /// The value beside `key`: `None` when absent, `Some(None)` when it has none.
    pub fn value(&mut self, key: &str) -> Option<Option<String>> {
        if self.failure.is_some() {
            return Some(None);
        }
        let found = self
            .connection
            .prepare_cached("SELECT value FROM keys WHERE key = ?1")
            .and_then(|mut statement| {
                statement.query_row([key], |row| row.get::<_, Option<String>>(0)).optional()
            });
        match found {
            Ok(found) => found,
            Err(error) => {
                self.failure = Some(error.into());
                Some(None)
            }
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The first error the store met, once; what it answered since is not to be trusted.
    pub fn failure(&mut self) -> Option<SpillError> {
        self.failure.take()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn keys_are_kept_once_with_their_values() {
        let mut keys = Keys::new().unwrap();
        assert!(keys.insert("a", Some("copy-1")));
        assert!(!keys.insert("a", Some("copy-2")), "a key already present is not replaced");
        assert!(keys.insert("b", None));
        assert_eq!(keys.value("a"), Some(Some("copy-1".to_owned())));
        assert_eq!(keys.value("b"), Some(None));
        assert_eq!(keys.value("c"), None);
        assert!(keys.contains("b") && !keys.contains("c"));
        assert_eq!(keys.len(), 2);
        assert!(keys.failure().is_none());
    }

    #[test]
    fn more_keys_than_the_cache_holds_go_to_disk_and_stay_exact() {
        let mut keys = Keys::new().unwrap();
        // ~60 MB of keys against a 4 MiB cache.
        let key = |n: usize| format!("{n:08}-{}", "x".repeat(592));
        for n in 0..100_000 {
            assert!(keys.insert(&key(n), None));
        }
        assert_eq!(keys.len(), 100_000);
        assert!(keys.contains(&key(0)) && keys.contains(&key(99_999)));
        assert!(!keys.contains(&key(100_000)));
        assert!(!keys.insert(&key(42), None));
        assert!(keys.failure().is_none());
    }

    /// A disk that fills, as SQLite meets it: the database may grow no further.
    pub(crate) fn fill_up(connection: &Connection) {
        let pages: i64 = connection.query_row("PRAGMA page_count", [], |row| row.get(0)).unwrap();
        connection.execute_batch(&format!("PRAGMA max_page_count = {}", pages + 2)).unwrap();
    }

    #[test]
    fn a_full_store_answers_that_it_holds_everything_and_keeps_the_first_error() {
        let mut keys = Keys::new().unwrap();
        assert!(keys.insert("before", None));
        fill_up(&keys.connection);
        let key = |n: usize| format!("{n:08}-{}", "x".repeat(592));
        let written = (0..1_000).take_while(|&n| keys.insert(&key(n), None)).count();
        assert!(written < 1_000, "the store filled up after {written} keys");
        // Asked about a key it never had, a failed store says "seen": a sweep leaves it alone.
        assert!(keys.contains("never-inserted"));
        let failure = keys.failure().expect("the error is kept");
        assert!(failure.to_string().contains("full"), "{failure}");
        assert!(keys.failure().is_none(), "the error is handed over once");
    }
}
