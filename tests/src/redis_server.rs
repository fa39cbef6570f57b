//! A redis-server of a test's own (Debian's, at `E2E_REDIS_SERVER`), on a
//! free loopback port, without persistence: for the tests that restart a
//! server or change its settings, which the shared one at `E2E_REDIS_URL`
//! must not see.

use std::time::Duration;

use tokio::process::{Child, Command};

use crate::fixtures::BoxError;

/// One server; dropped, it is killed.
#[derive(Debug)]
pub struct RedisServer {
    port: u16,
    child: Child,
}

impl RedisServer {
    /// A server on a free port, with `settings` (`["--maxmemory", "1mb"]`, say).
    pub async fn start(settings: &[&str]) -> Result<Self, BoxError> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        Self::start_on(port, settings).await
    }

    /// A server on `port` (a restarted one: the same address, nothing kept).
    pub async fn start_on(port: u16, settings: &[&str]) -> Result<Self, BoxError> {
        let binary = std::env::var("E2E_REDIS_SERVER")
            .map_err(|_| "E2E_REDIS_SERVER is not set: run the tests with `make test`")?;
        let port_text = port.to_string();
        let mut args =
            vec!["--bind", "127.0.0.1", "--port", &port_text, "--save", "", "--appendonly", "no"];
        args.extend_from_slice(settings);
        let child = Command::new(&binary)
            .args(&args)
            .stdout(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()?;
        for _ in 0..100 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
                return Ok(Self { port, child });
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Err(format!("redis-server did not listen on {port}").into())
    }

    /// `127.0.0.1:<port>`.
    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Killed, and waited for.
    pub async fn kill(mut self) -> std::io::Result<()> {
        self.child.kill().await
    }
}
