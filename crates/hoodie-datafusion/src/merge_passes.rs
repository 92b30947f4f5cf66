//! A MERGE's join in passes, so that it runs inside a bounded memory pool.
//!
//! DataFusion's hash join holds its build side (the source, usually) in memory and cannot
//! spill; its sort-merge join can fail inside its external sort (apache/datafusion#16979). So a
//! MERGE on a table with a record key splits the join, the way a grace hash join does: pass `i`
//! of `n` joins the source rows whose record key hashes to `i` with the target rows whose key
//! hashes to `i`. A source row and the target row it matches have equal keys, so they meet in
//! the same pass; a target row no source row matches is seen, unmatched, in exactly one pass (so
//! `WHEN NOT MATCHED BY SOURCE` holds). The passes run one after another ([`MergePassesExec`])
//! into the one sink and the one commit; each pass re-reads the source and the target's key
//! column, and holds a hash table of 1/n of the source.
//!
//! How many: `hoodie.merge.join.passes` (a number, or `auto`: one pass under an unbounded pool,
//! else as many as fit the source's estimated size into a quarter of the pool). Tables without
//! a record key join on any ON condition, so they always run in one pass.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, UInt32Array};
use datafusion::arrow::datatypes::DataType;
use datafusion::catalog::Session;
use datafusion::common::hash_utils::{create_hashes, RandomState};
use datafusion::common::stats::Precision;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::error::Result as DFResult;
use datafusion::execution::memory_pool::MemoryLimit;
use datafusion::execution::session_state::SessionState;
use datafusion::logical_expr::dml::{DmlStatement, WriteOp};
use datafusion::logical_expr::{
    lit, ColumnarValue, Expr, LogicalPlan, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};
use datafusion::physical_plan::statistics::{StatisticsArgs, StatisticsContext};
use datafusion::physical_plan::ExecutionPlan;
use hoodie_format::config;

use crate::error::HoodieError;
use crate::merge_passes_exec::MergePassesExec;
use crate::options::WriteOptions;
use crate::provider::HudiTableProvider;

/// Pass `index` of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pass {
    /// Which pass (0-based).
    pub index: u32,
    /// How many passes.
    pub count: u32,
}

/// The most passes `auto` chooses (each pass re-reads the source and the target's keys).
const MAX_AUTO_PASSES: u32 = 64;

/// Seed of the pass hash: not the one DataFusion's repartitioning uses, so that the rows of
/// one pass still spread over every partition of its join.
const PASS_SEED: u64 = 0x6f6f_6469_6550_6173;

/// `hoodie_merge_pass(k1, k2, ...)`: the pass (0..count) of a record key given as its columns,
/// by a hash that depends only on the values (NULL included) and their types.
#[derive(Debug, PartialEq, Eq, Hash)]
struct PassOf {
    count: u32,
    signature: Signature,
}

impl ScalarUDFImpl for PassOf {
    fn name(&self) -> &str {
        "hoodie_merge_pass"
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, _arg_types: &[DataType]) -> DFResult<DataType> {
        Ok(DataType::UInt32)
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DFResult<ColumnarValue> {
        let n = args.number_rows;
        let arrays: Vec<ArrayRef> = args
            .args
            .iter()
            .map(|a| a.to_array(n))
            .collect::<DFResult<_>>()?;
        let mut hashes = vec![0u64; n];
        create_hashes(&arrays, &RandomState::with_seed(PASS_SEED), &mut hashes)?;
        let count = u64::from(self.count);
        let passes = UInt32Array::from_iter_values(hashes.iter().map(|h| (h % count) as u32));
        Ok(ColumnarValue::Array(Arc::new(passes)))
    }
}

/// The predicate that keeps the rows of `pass`, given the key columns (cast to one type per
/// key column on both sides of the join).
pub fn pass_filter(keys: Vec<Expr>, pass: Pass) -> Expr {
    let udf = ScalarUDF::from(PassOf {
        count: pass.count,
        signature: Signature::variadic_any(Volatility::Immutable),
    });
    udf.call(keys).eq(lit(pass.index))
}

/// What `hoodie.merge.join.passes` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PassSetting {
    /// Chosen from the memory pool and the source's estimated size.
    Auto,
    /// This many.
    Fixed(u32),
}

impl PassSetting {
    /// Reads the option (session over table over default).
    pub fn from_options(options: &WriteOptions) -> Result<Self, HoodieError> {
        let key = config::MERGE_JOIN_PASSES;
        let v = options.get(&key).unwrap_or_default();
        let v = v.trim();
        if v.eq_ignore_ascii_case("auto") {
            return Ok(PassSetting::Auto);
        }
        match v.parse::<u32>() {
            Ok(n) if n >= 1 => Ok(PassSetting::Fixed(n)),
            _ => Err(HoodieError::Invalid {
                message: format!(
                    "{} must be auto or a whole number of at least 1, got {v:?}",
                    key.key
                ),
            }),
        }
    }
}

/// How many passes `auto` takes: enough that 1.5x a pass's share of the source (its batches
/// plus the hash table) fits a quarter of the pool. While the passes run, the sink keeps at
/// most another quarter of rows in memory (it spills beyond); the rest is left to the probe
/// side, the repartitioning buffers and the routing columns.
pub fn auto_passes(limit: &MemoryLimit, source_bytes: Option<usize>) -> u32 {
    let (MemoryLimit::Finite(limit), Some(bytes)) = (limit, source_bytes) else {
        return 1;
    };
    let per_pass = (*limit / 4).max(1) as u128;
    let need = bytes as u128 * 3 / 2;
    need.div_ceil(per_pass)
        .clamp(1, u128::from(MAX_AUTO_PASSES)) as u32
}

/// The estimated in-memory size of a plan's output: its byte size when the plan knows it,
/// else its row count times the row width its schema suggests.
fn estimated_bytes(plan: &Arc<dyn ExecutionPlan>) -> Option<usize> {
    let stats = StatisticsContext::new()
        .compute(plan.as_ref(), &StatisticsArgs::new())
        .ok()?;
    if let Some(b) = stats.total_byte_size.get_value() {
        return Some(*b);
    }
    let rows = match stats.num_rows {
        Precision::Exact(n) | Precision::Inexact(n) => n,
        Precision::Absent => return None,
    };
    let width: usize = plan
        .schema()
        .fields()
        .iter()
        .map(|f| f.data_type().primitive_width().unwrap_or(32))
        .sum();
    Some(rows.saturating_mul(width.max(1)))
}

/// Whether a plan (its subqueries included) calls a volatile function.
fn calls_volatile(plan: &LogicalPlan) -> bool {
    let mut volatile = false;
    let _ = plan.apply_with_subqueries(|node| {
        node.apply_expressions(|e| {
            volatile |= e.is_volatile();
            Ok(TreeNodeRecursion::Continue)
        })?;
        Ok(if volatile {
            TreeNodeRecursion::Stop
        } else {
            TreeNodeRecursion::Continue
        })
    });
    volatile
}

/// The input of a MERGE's sink: the change-set plan already planned (one pass), or the passes
/// `hoodie.merge.join.passes` asks for, each planned on its own; and the cap on the rows the
/// sink keeps in memory while they run (a quarter of the pool when there are several passes,
/// so that a later pass's join finds room; lifted when the input has ended).
pub async fn merge_input(
    dml: &DmlStatement,
    hudi: &HudiTableProvider,
    provider: Arc<dyn datafusion::datasource::TableProvider>,
    planned: Arc<dyn ExecutionPlan>,
    session: &dyn Session,
) -> DFResult<(Arc<dyn ExecutionPlan>, Option<usize>)> {
    let WriteOp::MergeInto(merge) = &dml.op else {
        return Ok((planned, None));
    };
    let limit = session.runtime_env().memory_pool.memory_limit();
    let keyed = !hudi.table().config().record_key_fields().is_empty();
    let setting =
        PassSetting::from_options(&hudi.write_options()).map_err(HoodieError::into_datafusion)?;
    let state = session.as_any().downcast_ref::<SessionState>();
    // each pass reads the source again: one that calls volatile functions must be read once
    let volatile = calls_volatile(&dml.input);
    if let (true, true, PassSetting::Fixed(n)) = (keyed, volatile, setting) {
        if n > 1 {
            return Err(HoodieError::Invalid {
                message: format!("{} = {n} reads the MERGE's source once per pass, and this source calls volatile functions (such as random()), which would give every pass other rows: set it to 1 or auto", config::MERGE_JOIN_PASSES.key),
            }
            .into_datafusion());
        }
    }
    let count = match (keyed && !volatile, setting, state) {
        (false, _, _) | (_, _, None) => 1,
        (true, PassSetting::Fixed(n), _) => n,
        (true, PassSetting::Auto, Some(state)) => match limit {
            MemoryLimit::Finite(_) => {
                let source = state.create_physical_plan(&dml.input).await?;
                auto_passes(&limit, estimated_bytes(&source))
            }
            _ => 1,
        },
    };
    let Some(state) = state.filter(|_| count > 1) else {
        return Ok((Arc::new(MergePassesExec::new(vec![planned], keyed)), None));
    };
    let mut passes = Vec::with_capacity(count as usize);
    for index in 0..count {
        let pass = Pass { index, count };
        let plan = crate::merge::plan_merge_pass(dml, merge, provider.clone(), hudi, Some(pass))?;
        passes.push(state.create_physical_plan(&plan).await?);
    }
    let cap = match limit {
        MemoryLimit::Finite(l) => Some(l / 4),
        _ => None,
    };
    Ok((Arc::new(MergePassesExec::new(passes, keyed)), cap))
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Int64Array, StringArray};
    use datafusion::arrow::datatypes::Field;

    fn passes_of(arrays: Vec<ArrayRef>, count: u32) -> Vec<u32> {
        let n = arrays[0].len();
        let udf = PassOf {
            count,
            signature: Signature::variadic_any(Volatility::Immutable),
        };
        let fields = arrays
            .iter()
            .map(|a| Arc::new(Field::new("k", a.data_type().clone(), true)))
            .collect();
        let out = udf
            .invoke_with_args(ScalarFunctionArgs {
                args: arrays.into_iter().map(ColumnarValue::Array).collect(),
                arg_fields: fields,
                number_rows: n,
                return_field: Arc::new(Field::new("p", DataType::UInt32, false)),
                config_options: Arc::new(Default::default()),
            })
            .unwrap()
            .to_array(n)
            .unwrap();
        out.as_any()
            .downcast_ref::<UInt32Array>()
            .unwrap()
            .values()
            .to_vec()
    }

    #[test]
    fn equal_keys_meet_in_the_same_pass_and_every_pass_gets_rows() {
        let ids: Vec<i64> = (0..10_000).collect();
        let a = passes_of(vec![Arc::new(Int64Array::from(ids.clone()))], 8);
        // the same values in another batch, another order
        let rev: Vec<i64> = ids.iter().rev().copied().collect();
        let b = passes_of(vec![Arc::new(Int64Array::from(rev))], 8);
        for (i, p) in a.iter().enumerate() {
            assert_eq!(*p, b[ids.len() - 1 - i]);
            assert!(*p < 8);
        }
        for pass in 0..8 {
            let n = a.iter().filter(|p| **p == pass).count();
            assert!(
                (1000..1500).contains(&n),
                "pass {pass} has {n} of 10000 rows"
            );
        }
    }

    #[test]
    fn composite_keys_and_nulls_have_one_pass_each() {
        let a: ArrayRef = Arc::new(Int64Array::from(vec![Some(1), Some(1), None, None]));
        let b: ArrayRef = Arc::new(StringArray::from(vec![Some("x"), Some("y"), None, None]));
        let p = passes_of(vec![a, b], 16);
        assert_eq!(p[2], p[3], "NULL keys are in one pass");
        let one = passes_of(
            vec![
                Arc::new(Int64Array::from(vec![1])),
                Arc::new(StringArray::from(vec!["y"])),
            ],
            16,
        );
        assert_eq!(one[0], p[1]);
    }

    #[test]
    fn auto_takes_one_pass_without_a_bound_or_an_estimate() {
        assert_eq!(auto_passes(&MemoryLimit::Infinite, Some(1 << 30)), 1);
        assert_eq!(auto_passes(&MemoryLimit::Finite(1 << 20), None), 1);
        // 12 MB under 8 MiB: 18 MB needed, 2 MiB a pass
        assert_eq!(
            auto_passes(&MemoryLimit::Finite(8 << 20), Some(12_000_000)),
            9
        );
        assert_eq!(auto_passes(&MemoryLimit::Finite(1 << 30), Some(1 << 20)), 1);
        assert_eq!(
            auto_passes(&MemoryLimit::Finite(1 << 10), Some(1 << 30)),
            MAX_AUTO_PASSES
        );
    }
}
