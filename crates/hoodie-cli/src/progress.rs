//! A spinner on stderr for statements that take a while.

use std::io::IsTerminal;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// How long a statement runs before the spinner appears.
pub const SPINNER_DELAY: Duration = Duration::from_secs(1);

/// A spinner that appears on stderr only once `delay` has passed (and only if stderr is a
/// terminal). Dropping the guard removes the spinner before returning, so output printed
/// afterwards is never interleaved with it.
pub struct DelayedSpinner {
    done: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl DelayedSpinner {
    /// Starts the timer; the spinner shows after `delay` unless the guard is dropped first.
    pub fn start(delay: Duration) -> Self {
        if !std::io::stderr().is_terminal() {
            return Self {
                done: None,
                thread: None,
            };
        }
        let (done, rx) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("hoodie-spinner".into())
            .spawn(move || {
                if let Err(RecvTimeoutError::Timeout) = rx.recv_timeout(delay) {
                    let bar = ProgressBar::new_spinner().with_elapsed(delay);
                    if let Ok(style) = ProgressStyle::with_template("{spinner} running… {elapsed}")
                    {
                        bar.set_style(style);
                    }
                    bar.enable_steady_tick(Duration::from_millis(100));
                    // Returns when the guard drops the sender.
                    let _ = rx.recv();
                    bar.finish_and_clear();
                }
            })
            .ok();
        Self {
            done: Some(done),
            thread,
        }
    }
}

impl Drop for DelayedSpinner {
    fn drop(&mut self) {
        drop(self.done.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
