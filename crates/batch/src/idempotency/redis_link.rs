//! The Redis store's one connection: made on first use, shared by every call,
//! and replaced when a call on it fails for the connection's sake.
//!
//! Two rules keep a dead server from costing a batch one budget a claim.
//! Calls that need a connection while one is being made wait for that
//! attempt, not one each in turn; and an attempt's failure answers every call
//! for one budget after it, so a batch's claims fail at once after its
//! pre-check's attempt failed. A call that timed out, or whose connection
//! broke, drops the connection: a half-open peer (a failover, a dropped NAT
//! mapping) answers nothing on it while a new one would work.

use backpressure_core::sync::lock;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::FutureExt;
use futures::future::{BoxFuture, Shared};
use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, Client, RedisError};
use tokio::time::Instant;

type Attempt = Shared<BoxFuture<'static, Result<MultiplexedConnection, RedisError>>>;

enum State {
    Idle,
    Connecting { attempt: Attempt, serial: u64 },
    Up { connection: MultiplexedConnection, serial: u64 },
    Failed { error: RedisError, until: Instant },
}

/// A connection, and which one (to drop only that one).
pub(crate) struct Connection {
    pub(crate) connection: MultiplexedConnection,
    serial: u64,
}

/// The connection calls share.
#[derive(Clone)]
pub(crate) struct Link {
    client: Client,
    config: AsyncConnectionConfig,
    /// How long a failed attempt answers for the calls after it.
    failure_holds: Duration,
    state: Arc<Mutex<(State, u64)>>,
}

/// Whether an error says the connection itself is no good.
fn connection_lost(error: &RedisError) -> bool {
    error.is_timeout() || error.is_io_error() || error.is_connection_dropped()
}

impl Link {
    /// Connections to `client`, each attempt and each answer given `budget`.
    pub(crate) fn new(client: Client, budget: Duration) -> Self {
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(budget))
            .set_response_timeout(Some(budget));
        Self {
            client,
            config,
            failure_holds: budget,
            state: Arc::new(Mutex::new((State::Idle, 0))),
        }
    }

    /// The connection, the attempt under way's, or a new attempt's.
    pub(crate) async fn get(&self) -> Result<Connection, RedisError> {
        let (attempt, serial) = {
            let mut guard = lock(&self.state);
            let (state, serials) = &mut *guard;
            match state {
                State::Up { connection, serial } => {
                    return Ok(Connection { connection: connection.clone(), serial: *serial });
                }
                State::Failed { error, until } if Instant::now() < *until => {
                    return Err(error.clone());
                }
                State::Connecting { attempt, serial } => (attempt.clone(), *serial),
                State::Idle | State::Failed { .. } => {
                    *serials += 1;
                    let (client, config) = (self.client.clone(), self.config.clone());
                    let attempt = async move {
                        client.get_multiplexed_async_connection_with_config(&config).await
                    }
                    .boxed()
                    .shared();
                    *state = State::Connecting { attempt: attempt.clone(), serial: *serials };
                    (attempt, *serials)
                }
            }
        };
        let result = attempt.await;
        let mut guard = lock(&self.state);
        let (state, _) = &mut *guard;
        // The first caller to see the attempt end records it; the rest find it recorded.
        if matches!(state, State::Connecting { serial: current, .. } if *current == serial) {
            *state = match &result {
                Ok(connection) => State::Up { connection: connection.clone(), serial },
                Err(error) => State::Failed {
                    error: error.clone(),
                    until: Instant::now() + self.failure_holds,
                },
            };
        }
        result.map(|connection| Connection { connection, serial })
    }

    /// After a call on `used` failed with `error`: a connection that timed
    /// out or broke is dropped, so the next call makes a new one.
    pub(crate) fn failed(&self, used: &Connection, error: &RedisError) {
        if !connection_lost(error) {
            return;
        }
        let mut guard = lock(&self.state);
        let (state, _) = &mut *guard;
        if matches!(state, State::Up { serial, .. } if *serial == used.serial) {
            *state = State::Idle;
        }
    }
}
