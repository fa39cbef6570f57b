//! What a read holds, and the heartbeat that keeps holding it.
//!
//! A scan or a sweep holds every message it read and has not deleted, so the
//! next receive returns new ones. A queue that takes longer to read than
//! `--visibility-timeout` would hand the first messages out again half-way,
//! so the heartbeat extends each lease before it ends (batched
//! `ChangeMessageVisibilityBatch`, as sqs-worker's heartbeat does). A lease
//! that lapses anyway shows when its message is received again: counted, and
//! said with the flag that gives more time.

use std::convert::Infallible;
use std::time::Duration;

use futures::StreamExt;
use rusqlite::{Connection, OptionalExtension, params};
use tokio::time::{Instant, sleep};

use crate::aws::queue::Queue;
use crate::reading::spill::{self, SpillError};
use crate::terminal::error::CliError;

/// Lease extensions in flight at once (ten messages each).
const RENEWALS_AT_ONCE: usize = 32;

/// Handles released per page read from the store.
const RELEASED_AT_ONCE: usize = 1000;

/// A lease due for renewal: its row, the received id, the handle.
type Due = (i64, String, String);

/// Every message held, by the id SQS gave the copy received: the newest
/// receipt handle (an older one stops working once a message is received
/// again). Kept in a [`spill`] store: a holding of 100,000 SQS-sized handles
/// (~40 MB) costs the store's cache in memory, the rest on disk.
#[derive(Debug)]
pub struct Holding {
    connection: Connection,
    /// Leases are kept as milliseconds after this.
    origin: Instant,
    /// Messages received again while held: their lease ran out.
    pub lapsed: usize,
    /// Writes since the store's last commit ([`spill::wrote`]).
    writes: u32,
    failure: Option<SpillError>,
}

impl Holding {
    pub fn new() -> Result<Self, SpillError> {
        let connection = spill::open(
            "CREATE TABLE leases (id TEXT NOT NULL UNIQUE, handle TEXT NOT NULL, \
             expires INTEGER NOT NULL); CREATE INDEX leases_by_expiry ON leases (expires);",
        )?;
        Ok(Self { connection, origin: Instant::now(), lapsed: 0, writes: 0, failure: None })
    }

    fn millis(&self, at: Instant) -> i64 {
        i64::try_from(at.saturating_duration_since(self.origin).as_millis()).unwrap_or(i64::MAX)
    }

    fn note<T>(&mut self, result: rusqlite::Result<T>) -> Option<T> {
        result.map_err(|error| self.failure.get_or_insert(error.into())).ok()
    }

    /// Notes the result of a write, counted towards the store's next commit.
    fn note_write(&mut self, result: rusqlite::Result<usize>) {
        let counted = result.and_then(|_| spill::wrote(&self.connection, &mut self.writes));
        self.note(counted);
    }

    /// Up to [`RELEASED_AT_ONCE`] held handles after row `after`, by row.
    fn page(&self, after: i64) -> rusqlite::Result<Vec<(i64, String)>> {
        self.connection
            .prepare_cached(
                "SELECT rowid, handle FROM leases WHERE rowid > ?1 ORDER BY rowid LIMIT ?2",
            )?
            .query_map(params![after, RELEASED_AT_ONCE as i64], |row| {
                Ok((row.get(0)?, row.get(1)?))
            })?
            .collect()
    }

    /// Holds a copy received before `expires` (the receive's start plus the lease).
    pub fn hold(&mut self, received_id: &str, receipt_handle: &str, expires: Instant) {
        let expires = self.millis(expires);
        let held = self
            .connection
            .prepare_cached(
                "INSERT INTO leases (id, handle, expires) VALUES (?1, ?2, ?3) \
                 ON CONFLICT (id) DO UPDATE SET handle = excluded.handle, expires = excluded.expires",
            )
            .and_then(|mut statement| statement.execute(params![received_id, receipt_handle, expires]));
        self.note_write(held);
    }

    /// Whether this copy is held (`true` once the store has failed).
    pub fn holds(&mut self, received_id: &str) -> bool {
        self.failure.is_some() || self.handle(received_id).is_some()
    }

    /// The newest handle of a held copy.
    pub fn handle(&mut self, received_id: &str) -> Option<String> {
        let found =
            self.connection.prepare_cached("SELECT handle FROM leases WHERE id = ?1").and_then(
                |mut statement| statement.query_row([received_id], |row| row.get(0)).optional(),
            );
        self.note(found).flatten()
    }

    /// A held copy received again: its lease had run out. Keeps the new handle.
    pub fn received_again(&mut self, received_id: &str, receipt_handle: &str, expires: Instant) {
        self.lapsed += 1;
        self.hold(received_id, receipt_handle, expires);
    }

    /// No longer held (deleted, moved or released).
    pub fn forget(&mut self, received_id: &str) {
        let forgotten = self
            .connection
            .prepare_cached("DELETE FROM leases WHERE id = ?1")
            .and_then(|mut statement| statement.execute([received_id]));
        self.note_write(forgotten);
    }

    /// Messages held.
    pub fn len(&mut self) -> usize {
        let counted = self
            .connection
            .query_row("SELECT count(*) FROM leases", [], |row| row.get::<_, i64>(0));
        self.note(counted).map_or(0, |n| usize::try_from(n).unwrap_or(0))
    }

    pub fn is_empty(&mut self) -> bool {
        self.len() == 0
    }

    /// The first error the store met, once: what it held since may be incomplete.
    pub fn failure(&mut self) -> Option<SpillError> {
        self.failure.take()
    }

    /// Releases (visibility 0) every message held, a page at a time, and holds
    /// nothing afterwards: how many were held, and how many SQS refused. It
    /// only reads the store until the end, so a disk that filled stops it
    /// only when a page can no longer be read.
    pub async fn release_all(&mut self, queue: &Queue) -> (usize, Result<usize, CliError>) {
        let held = self.len();
        let mut refused = 0;
        let mut after = 0;
        loop {
            let page = match self.page(after) {
                Ok(page) => page,
                Err(error) => return (held, Err(CliError::Spill(error.into()))),
            };
            let Some(&(last, _)) = page.last() else { break };
            let handles: Vec<&str> = page.iter().map(|(_, handle)| handle.as_str()).collect();
            match queue.release(&handles).await {
                Ok(n) => refused += n,
                Err(error) => return (held, Err(error)),
            }
            after = last;
        }
        let emptied = self.connection.execute("DELETE FROM leases", []);
        self.note_write(emptied);
        (held, Ok(refused))
    }

    /// Up to `limit` copies whose lease ends before `horizon`, after row `after`.
    fn due(&mut self, horizon: Instant, after: i64, limit: usize) -> Vec<Due> {
        let horizon = self.millis(horizon);
        let found = self
            .connection
            .prepare_cached(
                "SELECT rowid, id, handle FROM leases WHERE expires <= ?1 AND rowid > ?2 \
                 ORDER BY rowid LIMIT ?3",
            )
            .and_then(|mut statement| {
                statement
                    .query_map(params![horizon, after, limit as i64], |row| {
                        Ok((row.get(0)?, row.get(1)?, row.get(2)?))
                    })?
                    .collect::<rusqlite::Result<Vec<Due>>>()
            });
        self.note(found).unwrap_or_default()
    }

    /// Renewed until `expires`, unless refused or received again meanwhile.
    fn renewed(&mut self, renewed: &[Due], refused: &[usize], expires: Instant) {
        let expires = self.millis(expires);
        for (index, (_, id, handle)) in renewed.iter().enumerate() {
            if refused.contains(&index) {
                continue;
            }
            let updated = self
                .connection
                .prepare_cached("UPDATE leases SET expires = ?1 WHERE id = ?2 AND handle = ?3")
                .and_then(|mut statement| statement.execute(params![expires, id, handle]));
            self.note_write(updated);
        }
    }
}

/// How long a lease lasts, from `--visibility-timeout`.
pub fn lease_of(queue: &Queue) -> Duration {
    Duration::from_secs(queue.lease.unsigned_abs().into())
}

/// Extends, for one more lease, every lease `holding` keeps that would end
/// within half a lease; forever, so it runs beside the read it serves.
/// `with` gives it the holding for a moment, never across a call.
pub async fn keep(queue: &Queue, with: impl Fn(&mut dyn FnMut(&mut Holding))) -> Infallible {
    let lease = lease_of(queue);
    let beat = (lease / 4).max(Duration::from_millis(250));
    loop {
        sleep(beat).await;
        let horizon = Instant::now() + lease / 2;
        // Many at once: one call after another would let the last leases of
        // a large holding lapse while the first are renewed; a bound keeps a
        // holding of 100,000 from opening 10,000 calls at a time, and pages
        // keep it from reading every handle into memory at once.
        let mut after = 0;
        loop {
            let mut page = Vec::new();
            with(&mut |holding| page = holding.due(horizon, after, RENEWALS_AT_ONCE * 10));
            let Some((last, _, _)) = page.last() else { break };
            after = *last;
            let renewals = page.chunks(10).map(|chunk| async move {
                let sent = Instant::now();
                let handles: Vec<&str> =
                    chunk.iter().map(|(_, _, handle)| handle.as_str()).collect();
                (chunk, sent, queue.change_visibility(&handles, queue.lease).await)
            });
            let answers: Vec<_> =
                futures::stream::iter(renewals).buffer_unordered(RENEWALS_AT_ONCE).collect().await;
            for (chunk, sent, answer) in answers {
                match answer {
                    Ok(refused) => {
                        with(&mut |holding| holding.renewed(chunk, &refused, sent + lease))
                    }
                    // A renewal that fails is tried again on the next beat; a lease
                    // that lapses meanwhile shows when its message comes back.
                    Err(error) => tracing::debug!(error = %error, "a lease extension failed"),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn due_leases_are_renewed_unless_refused_or_received_again() {
        let now = Instant::now();
        let mut holding = Holding::new().unwrap();
        holding.hold("a", "ha", now + Duration::from_secs(1));
        holding.hold("b", "hb", now + Duration::from_secs(1));
        holding.hold("c", "hc", now + Duration::from_secs(100));
        let due = holding.due(now + Duration::from_secs(2), 0, 10);
        let pairs = |due: &[Due]| -> Vec<(String, String)> {
            due.iter().map(|(_, id, handle)| (id.clone(), handle.clone())).collect()
        };
        assert_eq!(pairs(&due), [("a".into(), "ha".into()), ("b".into(), "hb".into())]);
        let (first, rest) = (holding.due(now + Duration::from_secs(2), 0, 1), due[0].0);
        assert_eq!(pairs(&first), [("a".into(), "ha".into())], "a page at a time");
        assert_eq!(
            pairs(&holding.due(now + Duration::from_secs(2), rest, 10)),
            [("b".into(), "hb".into())]
        );
        holding.received_again("a", "ha2", now + Duration::from_secs(1));
        holding.renewed(&due, &[1], now + Duration::from_secs(50));
        // "a" has a new handle the renewal did not carry; "b" was refused.
        let still = holding.due(now + Duration::from_secs(2), 0, 10);
        assert_eq!(pairs(&still), [("a".into(), "ha2".into()), ("b".into(), "hb".into())]);
        assert_eq!(holding.lapsed, 1);
        assert_eq!(holding.handle("c").as_deref(), Some("hc"));
        holding.forget("c");
        assert!(!holding.holds("c"));
        assert_eq!(holding.len(), 2);
        assert!(holding.failure().is_none());
    }

    #[test]
    fn a_full_holding_says_it_holds_what_it_cannot_look_up_and_keeps_the_error() {
        let expires = Instant::now() + Duration::from_secs(60);
        let mut holding = Holding::new().unwrap();
        holding.hold("first", "h-first", expires);
        crate::reading::spill::tests::fill_up(&holding.connection);
        let handle = "h".repeat(400);
        for n in 0..1_000 {
            holding.hold(&format!("id-{n}"), &handle, expires);
        }
        // A copy received again is never taken for a new message once the store failed.
        assert!(holding.holds("never-held"));
        let failure = holding.failure().expect("the error is kept");
        assert!(failure.to_string().contains("full"), "{failure}");
    }
}
