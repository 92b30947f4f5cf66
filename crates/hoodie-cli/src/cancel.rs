//! Cancelling the running statement on Ctrl-C, SIGINT and SIGTERM.
//!
//! One task ([`listen`]) receives the signals for the whole process. While a statement runs
//! (inside [`cancellable`]) a signal is handed to it: its future is dropped, which abandons its
//! write (`hoodie_format::write::rollback_abandoned_writes`), and [`roll_back_cancelled`] rolls that write back
//! before anything else happens, so the table is as before. The interactive shell then
//! returns to the prompt on SIGINT (Ctrl-C); everything else exits with 128 + the signal's
//! number. A signal while no statement runs (the shell at its prompt, where Ctrl-C is a key
//! rustyline reads, not a signal) exits the same way at once.

use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;

use hoodie_datafusion::HoodieContext;
use hoodie_format::write::{rollback_abandoned_writes, wait_for_no_writes};
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::oneshot;

/// A signal that stops the running statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// SIGINT (Ctrl-C).
    Interrupt,
    /// SIGTERM.
    Terminate,
}

impl Signal {
    /// The exit status of a process that stops on this signal: 128 + its number, as shells
    /// report a process the signal killed.
    pub fn exit_status(self) -> u8 {
        match self {
            Signal::Interrupt => 130,
            Signal::Terminate => 143,
        }
    }

    /// The signal's name.
    pub fn name(self) -> &'static str {
        match self {
            Signal::Interrupt => "SIGINT",
            Signal::Terminate => "SIGTERM",
        }
    }
}

/// Where a signal goes while a statement runs.
static RUNNING: Mutex<Option<oneshot::Sender<Signal>>> = Mutex::new(None);

fn running() -> std::sync::MutexGuard<'static, Option<oneshot::Sender<Signal>>> {
    RUNNING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Takes over SIGINT and SIGTERM for the process (inside the runtime, once).
pub fn listen() -> std::io::Result<()> {
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    tokio::spawn(async move {
        loop {
            let received = tokio::select! {
                _ = interrupt.recv() => Signal::Interrupt,
                _ = terminate.recv() => Signal::Terminate,
            };
            deliver(received).await;
        }
    });
    Ok(())
}

/// Hands `signal` to the running statement, or, when none runs, exits the process.
pub async fn deliver(signal: Signal) {
    if hand_to_statement(signal) {
        return;
    }
    eprintln!("hoodie: {} received, exiting", signal.name());
    // a write abandoned by a statement that failed meanwhile is rolled back first
    let _ = roll_back_abandoned().await;
    std::process::exit(i32::from(signal.exit_status()));
}

/// Tests that run statements through [`cancellable`] share the process's one slot for the
/// running statement: they take turns, or a signal one test sends reaches another's statement
/// (or none, once the other's statement ended and cleared the slot).
#[cfg(test)]
pub(crate) async fn one_statement_at_a_time() -> tokio::sync::MutexGuard<'static, ()> {
    static TURN: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    TURN.lock().await
}

/// Hands `signal` to the running statement; false when none runs.
pub fn hand_to_statement(signal: Signal) -> bool {
    let statement = running().take();
    statement.is_some_and(|cancel| cancel.send(signal).is_ok())
}

/// Runs `statement` until it finishes or a signal arrives; on a signal the statement's future
/// is dropped (cancelled mid-way) and the signal returned.
pub async fn cancellable<F: Future>(statement: F) -> Result<F::Output, Signal> {
    let (cancel, cancelled) = oneshot::channel();
    *running() = Some(cancel);
    let outcome = tokio::select! {
        biased;
        Ok(signal) = cancelled => Err(signal),
        output = statement => Ok(output),
    };
    running().take();
    outcome
}

/// After a statement was cancelled: waits for its write to stop and rolls it back, telling
/// on stderr what was rolled back.
pub async fn roll_back_cancelled(ctx: &HoodieContext) {
    if !wait_for_no_writes(Duration::from_secs(30)).await {
        eprintln!(
            "hoodie: the cancelled write did not stop within 30 s; rolling back what stopped"
        );
    }
    match ctx.rollback_abandoned().await {
        Ok(done) => {
            for write in done {
                eprintln!(
                    "hoodie: rolled back the cancelled write {} of {}",
                    write.instant, write.table
                );
            }
        }
        Err(e) => eprintln!(
            "hoodie: could not roll back the cancelled write ({e}); the next write to the table rolls it back"
        ),
    }
}

async fn roll_back_abandoned() -> hoodie_format::Result<()> {
    wait_for_no_writes(Duration::from_secs(30)).await;
    rollback_abandoned_writes().await.map(|_| ())
}
