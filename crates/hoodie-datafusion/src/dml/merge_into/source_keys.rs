//! The target rows of a MERGE that no source row can match, dropped where the target is read.
//!
//! A MERGE joins its source to the whole target on the record key, and the rows of the target
//! that no source key matches are dropped by the join (or, earlier, by the dynamic filter the
//! hash join pushes into the target's scan, which hashes each key and probes the join's hash
//! table: most of the MERGE's time when the source is a small fraction of a large table). So
//! the source's keys are also noted, as they pass on their way to the join
//! ([`SourceKeysExec`]), in a small Bloom filter ([`SourceKeys`]); once every source row has
//! passed, the target's scan keeps only the rows whose key may be among them
//! ([`may_match_source`]), a test of one cache line per row. Until then it keeps every row, so
//! a plan whose target is read first (a join that swapped its sides) is only slower, never
//! wrong; a kept row the filter lets through by chance is dropped by the join as before.
//!
//! The keys are hashed as the pass filter hashes them ([`super::passes::udf::key_hashes`]):
//! both sides cast to the type the ON equality compares them in. A MERGE with `WHEN NOT
//! MATCHED BY SOURCE` reads every target row and has no such filter.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering as AtomicOrdering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll};

use datafusion::arrow::array::{ArrayRef, BooleanArray, RecordBatch};
use datafusion::arrow::datatypes::{DataType, SchemaRef};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DFSchemaRef, ScalarValue};
use datafusion::error::Result as DFResult;
use datafusion::execution::memory_pool::{
    MemoryConsumer, MemoryLimit, MemoryPool, MemoryReservation,
};
use datafusion::execution::{RecordBatchStream, SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::{
    ColumnarValue, Expr, LogicalPlan, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    UserDefinedLogicalNodeCore, Volatility,
};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, ExecutionPlanProperties, PlanProperties,
};
use futures::{Stream, StreamExt};

use super::passes::udf::{arg_hashes, key_hashes};

/// 64-bit words of the filter: 1 MiB, about 1% false positives at 200K keys, 8% at 1.2M.
const WORDS: usize = 1 << 17;
const FILTER_BYTES: usize = WORDS * 8;

/// The keys of a MERGE's source, noted as its rows pass, and whether all of them have.
/// Shared by the plan's [`SourceKeysExec`], its target filter and the
/// [`super::passes::MergePassesExec`] that starts each run of the plan ([`SourceKeys::begin`]).
#[derive(Clone)]
pub struct SourceKeys(Arc<Inner>);

struct Inner {
    /// Allocated by the first run, so that a MERGE only planned (EXPLAIN) allocates nothing.
    words: OnceLock<Box<[AtomicU64]>>,
    /// Set once every partition of the run's source has ended: the filter tests keys only then.
    complete: AtomicBool,
    run: Mutex<Run>,
}

/// Which partitions of the source have started and ended in this run.
#[derive(Default)]
struct Run {
    started: Vec<bool>,
    ended: Vec<bool>,
    /// A partition started twice or failed, or the pool had no room for the filter: this
    /// run's keys are never complete.
    spoiled: bool,
    /// The filter's bytes in the session's memory pool, from the run's first partition on.
    reservation: Option<MemoryReservation>,
}

impl Default for SourceKeys {
    fn default() -> Self {
        Self(Arc::new(Inner {
            words: OnceLock::new(),
            complete: AtomicBool::new(false),
            run: Mutex::new(Run::default()),
        }))
    }
}

impl fmt::Debug for SourceKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SourceKeys")
    }
}

impl PartialEq for SourceKeys {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}
impl Eq for SourceKeys {}
impl Hash for SourceKeys {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (Arc::as_ptr(&self.0) as usize).hash(state);
    }
}

/// The word of the filter a key hash sets, and its two bits there. The hash is mixed again
/// first: the keys of one pass share the hash's remainder by the pass count.
fn slot(hash: u64) -> (usize, u64) {
    let m = hash.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let word = (m >> 47) as usize & (WORDS - 1);
    let bits = (1u64 << ((m >> 8) & 63)) | (1u64 << ((m >> 14) & 63));
    (word, bits)
}

impl SourceKeys {
    fn run(&self) -> std::sync::MutexGuard<'_, Run> {
        self.0.run.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn words(&self) -> &[AtomicU64] {
        self.0
            .words
            .get_or_init(|| (0..WORDS).map(|_| AtomicU64::new(0)).collect())
    }

    /// A run of the plan starts: no key noted, none complete.
    pub fn begin(&self) {
        self.0.complete.store(false, AtomicOrdering::SeqCst);
        *self.run() = Run::default();
        for w in self.words() {
            w.store(0, AtomicOrdering::Relaxed);
        }
    }

    fn note(&self, hashes: &[u64]) {
        let words = self.words();
        for h in hashes {
            let (word, bits) = slot(*h);
            words[word].fetch_or(bits, AtomicOrdering::Relaxed);
        }
    }

    /// Partition `partition` of `count` starts; false (and the run spoiled) if it had already,
    /// or if `pool` has no room for the filter.
    fn started(&self, partition: usize, count: usize, pool: &Arc<dyn MemoryPool>) -> bool {
        let mut run = self.run();
        if run.reservation.is_none() {
            let reservation = MemoryConsumer::new("HudiMergeSourceKeys").register(pool);
            // without the filter every target row is kept, as the join alone would: under a
            // pool too small to spare a sixteenth for it the join's build side needs the room
            let spare = match pool.memory_limit() {
                MemoryLimit::Finite(limit) => limit / 16 >= FILTER_BYTES,
                _ => true,
            };
            if !spare || reservation.try_grow(FILTER_BYTES).is_err() {
                run.spoiled = true;
            }
            run.reservation = Some(reservation);
        }
        if run.spoiled {
            return false;
        }
        if run.started.len() != count {
            if run.started.iter().any(|s| *s) {
                run.spoiled = true;
            }
            run.started = vec![false; count];
            run.ended = vec![false; count];
        }
        if partition >= count || run.started[partition] {
            run.spoiled = true;
            return false;
        }
        run.started[partition] = true;
        true
    }

    /// Partition `partition` has passed every row on (noted) or failed.
    fn ended(&self, partition: usize, failed: bool) {
        let mut run = self.run();
        if failed {
            run.spoiled = true;
        }
        if let Some(e) = run.ended.get_mut(partition) {
            *e = true;
        }
        if !run.spoiled && !run.ended.is_empty() && run.ended.iter().all(|e| *e) {
            // the mutex orders the notes of every partition before this store
            self.0.complete.store(true, AtomicOrdering::SeqCst);
        }
    }

    /// Whether every source key of this run has been noted.
    fn complete(&self) -> bool {
        self.0.complete.load(AtomicOrdering::SeqCst)
    }

    fn may_contain(&self, hash: u64) -> bool {
        let (word, bits) = slot(hash);
        self.words()[word].load(AtomicOrdering::Relaxed) & bits == bits
    }
}

/// Marks the source of a MERGE in its plan: its rows pass unchanged, their keys (`keys`, as
/// the pass filter takes them) noted in `noted`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SourceKeysNode {
    input: LogicalPlan,
    keys: Vec<Expr>,
    noted: SourceKeys,
}

impl SourceKeysNode {
    /// `input`, its rows' `keys` noted in `noted`.
    pub fn new(input: LogicalPlan, keys: Vec<Expr>, noted: SourceKeys) -> Self {
        Self { input, keys, noted }
    }

    /// The key expressions, of the input's columns.
    pub fn keys(&self) -> &[Expr] {
        &self.keys
    }

    /// Where the keys are noted.
    pub fn noted(&self) -> &SourceKeys {
        &self.noted
    }
}

impl PartialOrd for SourceKeysNode {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        self.input.partial_cmp(&other.input)
    }
}

impl UserDefinedLogicalNodeCore for SourceKeysNode {
    fn name(&self) -> &str {
        "HudiMergeSourceKeys"
    }
    fn inputs(&self) -> Vec<&LogicalPlan> {
        vec![&self.input]
    }
    fn schema(&self) -> &DFSchemaRef {
        self.input.schema()
    }
    fn expressions(&self) -> Vec<Expr> {
        self.keys.clone()
    }
    fn fmt_for_explain(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "HudiMergeSourceKeys: keys={:?}", self.keys)
    }
    fn with_exprs_and_inputs(
        &self,
        exprs: Vec<Expr>,
        mut inputs: Vec<LogicalPlan>,
    ) -> DFResult<Self> {
        Ok(Self::new(inputs.swap_remove(0), exprs, self.noted.clone()))
    }
    // the rows pass unchanged; the key expressions' columns are added to these
    fn necessary_children_exprs(&self, output_columns: &[usize]) -> Option<Vec<Vec<usize>>> {
        Some(vec![output_columns.to_vec()])
    }
}

/// Passes its input's rows on unchanged, noting their keys; when every partition has ended,
/// the keys are complete.
#[derive(Debug)]
pub struct SourceKeysExec {
    input: Arc<dyn ExecutionPlan>,
    keys: Vec<Arc<dyn PhysicalExpr>>,
    noted: SourceKeys,
}

impl SourceKeysExec {
    /// `input`, its rows' `keys` noted in `noted`.
    pub fn new(
        input: Arc<dyn ExecutionPlan>,
        keys: Vec<Arc<dyn PhysicalExpr>>,
        noted: SourceKeys,
    ) -> Self {
        Self { input, keys, noted }
    }
}

impl DisplayAs for SourceKeysExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let keys: Vec<String> = self.keys.iter().map(|k| k.to_string()).collect();
        write!(
            f,
            "HudiMergeSourceKeysExec: keys=[{}], noted for the target's scan",
            keys.join(", ")
        )
    }
}

impl ExecutionPlan for SourceKeysExec {
    fn name(&self) -> &'static str {
        "HudiMergeSourceKeysExec"
    }
    fn properties(&self) -> &Arc<PlanProperties> {
        self.input.properties()
    }
    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }
    fn maintains_input_order(&self) -> Vec<bool> {
        vec![true]
    }
    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        vec![false]
    }
    fn apply_expressions(
        &self,
        f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> DFResult<TreeNodeRecursion>,
    ) -> DFResult<TreeNodeRecursion> {
        for k in &self.keys {
            if f(k)? == TreeNodeRecursion::Stop {
                return Ok(TreeNodeRecursion::Stop);
            }
        }
        Ok(TreeNodeRecursion::Continue)
    }
    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        Ok(Arc::new(Self::new(
            crate::dml::merge_into::one_child("HudiMergeSourceKeysExec", children)?,
            self.keys.clone(),
            self.noted.clone(),
        )))
    }
    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> DFResult<SendableRecordBatchStream> {
        let count = self.input.output_partitioning().partition_count();
        let noting = self.noted.started(partition, count, context.memory_pool());
        Ok(Box::pin(NotingStream {
            input: self.input.execute(partition, context)?,
            keys: self.keys.clone(),
            noted: self.noted.clone(),
            partition,
            noting,
            failed: false,
        }))
    }
}

struct NotingStream {
    input: SendableRecordBatchStream,
    keys: Vec<Arc<dyn PhysicalExpr>>,
    noted: SourceKeys,
    partition: usize,
    /// False once this partition has ended, or when it cannot complete the run.
    noting: bool,
    failed: bool,
}

impl NotingStream {
    fn note(&self, batch: &RecordBatch) -> DFResult<()> {
        let arrays = self
            .keys
            .iter()
            .map(|k| k.evaluate(batch)?.into_array(batch.num_rows()))
            .collect::<DFResult<Vec<ArrayRef>>>()?;
        self.noted.note(&key_hashes(&arrays, batch.num_rows())?);
        Ok(())
    }
}

impl Stream for NotingStream {
    type Item = DFResult<RecordBatch>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let next = self.input.poll_next_unpin(cx);
        if !self.noting {
            return next;
        }
        match &next {
            Poll::Ready(Some(Ok(batch))) => {
                if let Err(e) = self.note(batch) {
                    self.failed = true;
                    return Poll::Ready(Some(Err(e)));
                }
            }
            Poll::Ready(Some(Err(_))) => self.failed = true,
            Poll::Ready(None) => {
                self.noting = false;
                self.noted.ended(self.partition, self.failed);
            }
            Poll::Pending => {}
        }
        next
    }
}

impl RecordBatchStream for NotingStream {
    fn schema(&self) -> SchemaRef {
        self.input.schema()
    }
}

/// `hoodie_merge_source_may_have(k1, k2, ...)`: false for a target key no source row of the
/// run has (once all have been noted), true otherwise.
#[derive(Debug, PartialEq, Eq, Hash)]
struct MayMatchSource {
    noted: SourceKeys,
    signature: Signature,
}

impl ScalarUDFImpl for MayMatchSource {
    fn name(&self) -> &str {
        "hoodie_merge_source_may_have"
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, _arg_types: &[DataType]) -> DFResult<DataType> {
        Ok(DataType::Boolean)
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DFResult<ColumnarValue> {
        if !self.noted.complete() {
            return Ok(ColumnarValue::Scalar(ScalarValue::Boolean(Some(true))));
        }
        let hashes = arg_hashes(&args)?;
        let keep: BooleanArray = hashes
            .iter()
            .map(|h| Some(self.noted.may_contain(*h)))
            .collect();
        Ok(ColumnarValue::Array(Arc::new(keep)))
    }
}

/// The predicate on the target's key columns (cast as the pass filter casts them) that keeps
/// the rows whose key some source row of the run may have.
pub fn may_match_source(keys: Vec<Expr>, noted: &SourceKeys) -> Expr {
    ScalarUDF::from(MayMatchSource {
        noted: noted.clone(),
        // its value changes between runs of the plan, never within one
        signature: Signature::variadic_any(Volatility::Immutable),
    })
    .call(keys)
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::Int64Array;
    use datafusion::execution::memory_pool::{GreedyMemoryPool, UnboundedMemoryPool};

    fn pool() -> Arc<dyn MemoryPool> {
        Arc::new(UnboundedMemoryPool::default())
    }

    #[test]
    fn the_filter_is_held_in_the_pool_and_a_small_pool_keeps_every_row() {
        let keys = SourceKeys::default();
        let roomy: Arc<dyn MemoryPool> = Arc::new(GreedyMemoryPool::new(64 << 20));
        keys.begin();
        assert!(keys.started(0, 1, &roomy));
        assert_eq!(roomy.reserved(), FILTER_BYTES);
        keys.ended(0, false);
        assert!(keys.complete());
        keys.begin();
        assert_eq!(
            roomy.reserved(),
            0,
            "a new run gives the last one's room back"
        );

        // a pool that could hold the filter but not spare a sixteenth of itself for it
        let tight: Arc<dyn MemoryPool> = Arc::new(GreedyMemoryPool::new(8 << 20));
        assert!(
            !keys.started(0, 1, &tight),
            "no room: the keys are not noted"
        );
        assert_eq!(tight.reserved(), 0);
        keys.ended(0, false);
        assert!(
            !keys.complete(),
            "and never complete, so every target row is kept"
        );
    }

    fn hashes(ids: impl Iterator<Item = i64>) -> Vec<u64> {
        let a: ArrayRef = Arc::new(Int64Array::from(ids.collect::<Vec<_>>()));
        let n = a.len();
        key_hashes(&[a], n).unwrap()
    }

    #[test]
    fn keys_are_complete_only_when_every_partition_has_ended() {
        let keys = SourceKeys::default();
        keys.begin();
        assert!(keys.started(0, 2, &pool()) && keys.started(1, 2, &pool()));
        keys.note(&hashes(0..1000));
        keys.ended(0, false);
        assert!(!keys.complete(), "partition 1 has not ended");
        keys.ended(1, false);
        assert!(keys.complete());
        keys.begin();
        assert!(!keys.complete(), "a new run starts incomplete");
    }

    #[test]
    fn a_partition_that_starts_twice_or_fails_never_completes_the_run() {
        let keys = SourceKeys::default();
        keys.begin();
        assert!(keys.started(0, 1, &pool()));
        assert!(!keys.started(0, 1, &pool()));
        keys.ended(0, false);
        assert!(!keys.complete());
        keys.begin();
        assert!(keys.started(0, 1, &pool()));
        keys.ended(0, true);
        assert!(!keys.complete());
    }

    #[test]
    fn every_noted_key_may_match_and_most_others_do_not() {
        let keys = SourceKeys::default();
        keys.begin();
        keys.note(&hashes((0..200_000).map(|i| i * 7)));
        assert!(hashes((0..200_000).map(|i| i * 7))
            .iter()
            .all(|h| keys.may_contain(*h)));
        let others = hashes((0..1_000_000).map(|i| i * 7 + 3));
        let passed = others.iter().filter(|h| keys.may_contain(**h)).count();
        assert!(passed < 30_000, "{passed} of 1M other keys passed");
        keys.begin();
        let passed = others.iter().filter(|h| keys.may_contain(**h)).count();
        assert_eq!(passed, 0, "a new run forgets the keys");
    }
}
