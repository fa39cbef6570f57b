//! The signals a worker follows: SIGTERM (ECS's stop) or SIGINT (a
//! terminal's Ctrl-C), up to three times.

use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::watch;

/// Receivers turning true at the first SIGTERM or SIGINT, the second, and
/// the third.
pub(crate) fn listen() -> std::io::Result<[watch::Receiver<bool>; 3]> {
    let mut term = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    let (first, stop) = watch::channel(false);
    let (second, hurry) = watch::channel(false);
    let (third, quit) = watch::channel(false);
    tokio::spawn(async move {
        for sender in [first, second, third] {
            tokio::select! {
                _ = term.recv() => {}
                _ = interrupt.recv() => {}
            }
            let _ = sender.send(true);
        }
    });
    Ok([stop, hurry, quit])
}
