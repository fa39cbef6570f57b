//! Ctrl-C and SIGTERM. The first asks the command to stop at its next safe
//! point — after the call in progress, never between a confirmed send and its
//! audit line — and release everything it holds; the second ends the process
//! at once (exit 130), leaving what is held to come back at its lease's end.
//! SIGXFSZ (a file-size limit reached) does not end it: the write fails with
//! EFBIG instead, and the command stops with its sentence about space.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::Notify;

/// The exit code of a command stopped by a signal (128 + SIGINT), as shells use.
pub const EXIT_INTERRUPTED: u8 = 130;

static REQUESTED: AtomicBool = AtomicBool::new(false);

fn notify() -> &'static Notify {
    static NOTIFY: OnceLock<Notify> = OnceLock::new();
    NOTIFY.get_or_init(Notify::new)
}

/// Listens for SIGINT and SIGTERM for the rest of the process, and takes
/// SIGXFSZ's default action (ending the process) away.
pub fn listen() -> std::io::Result<()> {
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    // Tokio's handler replaces the default action for the rest of the process;
    // what it receives is never read.
    drop(signal(SignalKind::from_raw(libc::SIGXFSZ))?);
    tokio::spawn(async move {
        for second in [false, true] {
            tokio::select! {
                _ = interrupt.recv() => {}
                _ = terminate.recv() => {}
            }
            if second {
                eprintln!(
                    "second signal: stopped at once; messages still held are visible again when \
                     their lease (--visibility-timeout) ends"
                );
                std::process::exit(EXIT_INTERRUPTED.into());
            }
            eprintln!(
                "signal received: stopping after the call in progress and releasing what is held \
                 (a second signal stops at once)"
            );
            REQUESTED.store(true, Ordering::SeqCst);
            notify().notify_waiters();
        }
    });
    Ok(())
}

/// Whether a signal asked the command to stop.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}

/// Returns once a signal asked the command to stop.
pub async fn wait() {
    loop {
        let notified = notify().notified();
        if requested() {
            return;
        }
        notified.await;
    }
}
