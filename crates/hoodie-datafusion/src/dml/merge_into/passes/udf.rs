//! `hoodie_merge_pass`: the pass a record key belongs to.

use std::sync::Arc;

use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};

use datafusion::arrow::array::{ArrayRef, BooleanArray};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::hash_utils::{create_hashes, RandomState};
use datafusion::common::ScalarValue;
use datafusion::error::Result as DFResult;
use datafusion::logical_expr::{
    ColumnarValue, Expr, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};

/// Seed of the pass hash: not the one DataFusion's repartitioning uses, so that the rows of
/// one pass still spread over every partition of its join.
const PASS_SEED: u64 = 0x6f6f_6469_6550_6173;

/// Which pass runs now: shared by the pass filters of a MERGE's one change-set plan and the
/// [`super::MergePassesExec`] that runs the plan once per pass, setting the pass before each.
#[derive(Debug, Clone)]
pub struct PassSelector(Arc<AtomicU64>);

impl Default for PassSelector {
    fn default() -> Self {
        Self(Arc::new(AtomicU64::new(encode(Pass {
            index: 0,
            count: 1,
        }))))
    }
}

fn encode(pass: Pass) -> u64 {
    (u64::from(pass.count) << 32) | u64::from(pass.index)
}

impl PassSelector {
    /// The pass the next run of the plan is.
    pub fn set(&self, pass: Pass) {
        self.0.store(encode(pass), AtomicOrdering::SeqCst);
    }

    /// The pass that runs now.
    pub fn get(&self) -> Pass {
        let v = self.0.load(AtomicOrdering::SeqCst);
        Pass {
            index: v as u32,
            count: (v >> 32) as u32,
        }
    }
}

impl PartialEq for PassSelector {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}
impl Eq for PassSelector {}
impl Hash for PassSelector {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (Arc::as_ptr(&self.0) as usize).hash(state);
    }
}

/// `hoodie_in_merge_pass(k1, k2, ...)`: whether a record key, given as its columns, is in the
/// pass that runs now, by a hash that depends only on the values (NULL included) and their
/// types. In one pass every key is.
#[derive(Debug, PartialEq, Eq, Hash)]
struct InPass {
    selector: PassSelector,
    signature: Signature,
}

impl InPass {
    fn new(selector: PassSelector) -> Self {
        Self {
            selector,
            // its value changes between runs of the plan, never within one
            signature: Signature::variadic_any(Volatility::Immutable),
        }
    }
}

/// The hash of each key given as its columns, which only its values (NULL included) and
/// their types decide.
pub(crate) fn key_hashes(arrays: &[ArrayRef], rows: usize) -> DFResult<Vec<u64>> {
    let mut hashes = vec![0u64; rows];
    create_hashes(arrays, &RandomState::with_seed(PASS_SEED), &mut hashes)?;
    Ok(hashes)
}

/// The key hashes ([`key_hashes`]) of a key UDF's arguments, the key's columns.
pub(crate) fn arg_hashes(args: &ScalarFunctionArgs) -> DFResult<Vec<u64>> {
    let n = args.number_rows;
    let arrays: Vec<ArrayRef> = args
        .args
        .iter()
        .map(|a| a.to_array(n))
        .collect::<DFResult<_>>()?;
    key_hashes(&arrays, n)
}

/// The pass (0..count) of each key hash.
fn passes_of(hashes: &[u64], count: u32) -> Vec<u32> {
    let count = u64::from(count.max(1));
    hashes.iter().map(|h| (h % count) as u32).collect()
}

impl ScalarUDFImpl for InPass {
    fn name(&self) -> &str {
        "hoodie_in_merge_pass"
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, _arg_types: &[DataType]) -> DFResult<DataType> {
        Ok(DataType::Boolean)
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DFResult<ColumnarValue> {
        let pass = self.selector.get();
        if pass.count <= 1 {
            return Ok(ColumnarValue::Scalar(ScalarValue::Boolean(Some(true))));
        }
        let passes = passes_of(&arg_hashes(&args)?, pass.count);
        let keep = BooleanArray::from_iter(passes.iter().map(|p| Some(*p == pass.index)));
        Ok(ColumnarValue::Array(Arc::new(keep)))
    }
}

/// Pass `index` of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pass {
    /// Which pass (0-based).
    pub index: u32,
    /// How many passes.
    pub count: u32,
}

/// The predicate that keeps the rows of the pass `selector` names when the plan runs, given
/// the key columns (cast to one type per key column on both sides of the join).
pub fn pass_filter(keys: Vec<Expr>, selector: &PassSelector) -> Expr {
    ScalarUDF::from(InPass::new(selector.clone())).call(keys)
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Int64Array, StringArray};

    fn passes(arrays: Vec<ArrayRef>, count: u32) -> Vec<u32> {
        let n = arrays[0].len();
        passes_of(&key_hashes(&arrays, n).unwrap(), count)
    }

    #[test]
    fn the_filter_keeps_the_rows_of_the_pass_that_runs_now() {
        use datafusion::arrow::datatypes::Field;
        let selector = PassSelector::default();
        let udf = InPass::new(selector.clone());
        let keys: ArrayRef = Arc::new(Int64Array::from((0..100).collect::<Vec<i64>>()));
        let run = || {
            udf.invoke_with_args(ScalarFunctionArgs {
                args: vec![ColumnarValue::Array(keys.clone())],
                arg_fields: vec![Arc::new(Field::new("k", DataType::Int64, true))],
                number_rows: 100,
                return_field: Arc::new(Field::new("p", DataType::Boolean, false)),
                config_options: Arc::new(Default::default()),
            })
            .unwrap()
            .to_array(100)
            .unwrap()
        };
        let kept = |a: ArrayRef| {
            let b = a.as_any().downcast_ref::<BooleanArray>().unwrap().clone();
            b.true_count()
        };
        assert_eq!(kept(run()), 100, "one pass keeps every row");
        let mut total = 0;
        for index in 0..4 {
            selector.set(Pass { index, count: 4 });
            total += kept(run());
        }
        assert_eq!(total, 100, "each row is in exactly one of the passes");
    }

    #[test]
    fn equal_keys_meet_in_the_same_pass_and_every_pass_gets_rows() {
        let ids: Vec<i64> = (0..10_000).collect();
        let a = passes(vec![Arc::new(Int64Array::from(ids.clone()))], 8);
        // the same values in another batch, another order
        let rev: Vec<i64> = ids.iter().rev().copied().collect();
        let b = passes(vec![Arc::new(Int64Array::from(rev))], 8);
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
        let p = passes(vec![a, b], 16);
        assert_eq!(p[2], p[3], "NULL keys are in one pass");
        let one = passes(
            vec![
                Arc::new(Int64Array::from(vec![1])),
                Arc::new(StringArray::from(vec!["y"])),
            ],
            16,
        );
        assert_eq!(one[0], p[1]);
    }
}
