//! Async work from DataFusion's synchronous callbacks.

use datafusion::error::{DataFusionError, Result as DFResult};

/// Runs `f` to completion on a runtime of its own, on a thread of its own: for the callbacks
/// DataFusion makes synchronously while a statement is planned (a table function, a catalog's
/// table names), outside any async context they could await in.
pub(crate) fn block_on<T: Send>(f: impl std::future::Future<Output = T> + Send) -> DFResult<T> {
    std::thread::scope(|s| {
        s.spawn(|| {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map(|rt| rt.block_on(f))
        })
        .join()
    })
    .map_err(|_| {
        DataFusionError::Internal(
            "a lookup run to completion from synchronous code panicked".into(),
        )
    })?
    .map_err(|e| DataFusionError::External(Box::new(e)))
}
