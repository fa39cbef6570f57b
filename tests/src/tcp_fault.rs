//! A TCP proxy on loopback between a consumer and a server that speaks a
//! request-reply protocol (Redis): it passes every byte, or, for the request
//! whose bytes contain a given text (a Lua script's SHA, a command's name),
//! never answers it, or forwards it and then loses the reply by closing the
//! client's connection: the write landed, the caller cannot know. It can also
//! silence the connections already open while new ones pass: a half-open
//! peer (a failover, a dropped NAT mapping).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use backpressure_core::sync::lock;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// What happens to a matching request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TcpFault {
    /// Read and never answered.
    Hang,
    /// Forwarded, its reply read from the server and dropped, the client's
    /// connection closed.
    LoseReply,
    /// Not forwarded; answered with a Redis error reply (`-ERR …`): the
    /// server refusing a command, its 5xx.
    ErrorReply,
}

#[derive(Debug, Default)]
struct Rule {
    contains: Vec<u8>,
    fault: Option<TcpFault>,
    skip: u64,
    times: u64,
}

/// One proxy; dropped, it stops listening.
#[derive(Debug)]
pub struct TcpFaultProxy {
    address: std::net::SocketAddr,
    rule: Arc<Mutex<Rule>>,
    hits: Arc<AtomicU64>,
    /// Connections numbered below this pass nothing either way.
    silenced_below: Arc<AtomicU64>,
    opened: Arc<AtomicU64>,
    server: JoinHandle<()>,
}

impl TcpFaultProxy {
    /// A proxy to `upstream` (`host:port`), passing everything.
    pub async fn start(upstream: &str) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let address = listener.local_addr()?;
        let rule: Arc<Mutex<Rule>> = Arc::default();
        let hits = Arc::new(AtomicU64::new(0));
        let (silenced_below, opened) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
        let (shared, counted, upstream) = (rule.clone(), hits.clone(), upstream.to_owned());
        let (silenced, numbering) = (silenced_below.clone(), opened.clone());
        let server = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let (rule, hits, upstream) = (shared.clone(), counted.clone(), upstream.clone());
                let serial = numbering.fetch_add(1, Ordering::SeqCst);
                let silent = Silent { serial, below: silenced.clone() };
                tokio::spawn(async move {
                    if let Ok(server) = TcpStream::connect(&upstream).await {
                        let _ = relay(client, server, rule, hits, silent).await;
                    }
                });
            }
        });
        Ok(Self { address, rule, hits, silenced_below, opened, server })
    }

    /// `host:port` to connect to instead of the server.
    pub fn address(&self) -> String {
        self.address.to_string()
    }

    /// Of the requests containing `text`, the first `skip` pass and the next
    /// `times` get `fault`.
    pub fn inject(&self, text: &str, fault: TcpFault, skip: u64, times: u64) {
        let contains = text.as_bytes().to_vec();
        *lock(&self.rule) = Rule { contains, fault: Some(fault), skip, times };
    }

    /// Everything passes again.
    pub fn clear(&self) {
        *lock(&self.rule) = Rule::default();
    }

    /// Every connection open now stops passing bytes, either way, and stays
    /// open; connections made later pass.
    pub fn silence_open_connections(&self) {
        self.silenced_below.store(self.opened.load(Ordering::SeqCst), Ordering::SeqCst);
    }

    /// How many connections were made through the proxy.
    pub fn connections(&self) -> u64 {
        self.opened.load(Ordering::SeqCst)
    }

    /// How many requests a fault was applied to.
    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::SeqCst)
    }
}

impl Drop for TcpFaultProxy {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// The fault for this chunk of a request, if a rule still applies to it.
fn fault_for(chunk: &[u8], rule: &Mutex<Rule>) -> Option<TcpFault> {
    let mut rule = lock(rule);
    let matches = !rule.contains.is_empty()
        && rule.times > 0
        && chunk.windows(rule.contains.len()).any(|w| w == rule.contains.as_slice());
    if !matches {
        return None;
    }
    if rule.skip > 0 {
        rule.skip -= 1;
        return None;
    }
    rule.times -= 1;
    rule.fault
}

/// Whether one connection has been silenced.
#[derive(Debug, Clone)]
struct Silent {
    serial: u64,
    below: Arc<AtomicU64>,
}

impl Silent {
    fn now(&self) -> bool {
        self.serial < self.below.load(Ordering::SeqCst)
    }
}

/// Passes bytes both ways. A request that matches the rule is never sent
/// (`Hang`), or is sent with the way back cut first (`LoseReply`): the
/// server's answer is read and dropped, and the client's connection closed.
async fn relay(
    client: TcpStream,
    server: TcpStream,
    rule: Arc<Mutex<Rule>>,
    hits: Arc<AtomicU64>,
    silent: Silent,
) -> std::io::Result<()> {
    let (mut from_client, to_client) = client.into_split();
    let to_client = Arc::new(tokio::sync::Mutex::new(to_client));
    let replies = to_client.clone();
    let (mut from_server, mut to_server) = server.into_split();
    let lose = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let losing = lose.clone();
    let silent_back = silent.clone();
    let back = tokio::spawn(async move {
        let mut reply = vec![0u8; 64 * 1024];
        loop {
            let read = from_server.read(&mut reply).await?;
            if read == 0 || losing.load(Ordering::SeqCst) {
                return replies.lock().await.shutdown().await;
            }
            if silent_back.now() {
                continue;
            }
            replies.lock().await.write_all(&reply[..read]).await?;
        }
    });
    let mut request = vec![0u8; 64 * 1024];
    let outcome = loop {
        let read = from_client.read(&mut request).await?;
        if read == 0 {
            break Ok(());
        }
        let chunk = &request[..read];
        if silent.now() {
            continue;
        }
        match fault_for(chunk, &rule) {
            Some(TcpFault::Hang) => {
                hits.fetch_add(1, Ordering::SeqCst);
                // Held open and unanswered until the client gives up.
                while from_client.read(&mut request).await? > 0 {}
                break Ok(());
            }
            Some(TcpFault::LoseReply) => {
                hits.fetch_add(1, Ordering::SeqCst);
                lose.store(true, Ordering::SeqCst);
                to_server.write_all(chunk).await?;
                // The connection stays up until the server has answered (and the
                // answer was dropped): the write landed.
                let _ = back.await;
                return Ok(());
            }
            Some(TcpFault::ErrorReply) => {
                hits.fetch_add(1, Ordering::SeqCst);
                to_client.lock().await.write_all(b"-ERR injected by the test's proxy\r\n").await?;
            }
            None => to_server.write_all(chunk).await?,
        }
    };
    back.abort();
    outcome
}
