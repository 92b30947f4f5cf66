//! Several files at once: each of `jobs` threads runs whole files, one after another, on a
//! runtime of its own. Spark answers a statement in tens of milliseconds to seconds, mostly
//! waiting on its own scheduling rather than on the CPU, so two sessions at once take about two
//! thirds of the time of one; hoodie's files are fast enough one at a time.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};

use crate::runner::{collect_reporting, run_file, Engine, Event, Summary};

/// Runs the files under `paths` on `engine`, `jobs` files at a time, calling `report` for each
/// failure of a file once that file is done. With `jobs` 1 the files run in order, as
/// [`run_paths_with`](crate::run_paths_with) runs them.
pub fn run_paths_in_parallel(
    paths: &[PathBuf],
    engine: &Engine,
    jobs: usize,
    mut report: impl FnMut(Event<'_>),
) -> Summary {
    let mut summary = Summary::default();
    let files = Arc::new(collect_reporting(paths, &mut summary, &mut report));
    let next = Arc::new(AtomicUsize::new(0));
    let (done, results) = mpsc::channel::<Summary>();
    let workers: Vec<_> = (0..jobs.clamp(1, files.len().max(1)))
        .map(|_| {
            let (files, next, done, engine) =
                (files.clone(), next.clone(), done.clone(), engine.clone());
            std::thread::Builder::new()
                .stack_size(STATEMENT_STACK)
                .spawn(move || run_files(&files, &next, &engine, &done))
                .expect("hoodie-slt: cannot start a worker thread")
        })
        .collect();
    drop(done);
    for file in results {
        for failure in &file.failures {
            report(Event::Failure(failure));
        }
        for error in &file.file_errors {
            report(Event::FileError(error));
        }
        summary.passed += file.passed;
        summary.failed += file.failed;
        summary.skipped += file.skipped;
        summary.failures.extend(file.failures);
        summary.file_errors.extend(file.file_errors);
    }
    for worker in workers {
        // a worker that panicked outside a record has lost its file's tally: count it failed
        if worker.join().is_err() {
            summary.failed += 1;
        }
    }
    summary
}

/// The stack of the threads that run statements, as the `hoodie` shell's: deep statements
/// are planned by recursion (only the pages used are touched).
const STATEMENT_STACK: usize = 256 * 1024 * 1024;

/// One worker: takes the next file until none is left, sending each file's tally.
fn run_files(files: &[PathBuf], next: &AtomicUsize, engine: &Engine, done: &mpsc::Sender<Summary>) {
    // multi-threaded (of one worker): the Spark engine blocks in place on its socket
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_stack_size(STATEMENT_STACK)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => panic!("hoodie-slt: cannot start a runtime for a worker: {e}"),
    };
    loop {
        let n = next.fetch_add(1, Ordering::SeqCst);
        let Some(file) = files.get(n) else {
            return;
        };
        let mut summary = Summary::default();
        let outcome = runtime.block_on(run_file(file, n, engine, &mut summary, &mut |_| {}));
        if let Err(error) = outcome {
            summary.file_errors.push(error);
        }
        if done.send(summary).is_err() {
            return;
        }
    }
}
