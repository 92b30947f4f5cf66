//! `hoodie_merge_pass`: the pass a record key belongs to.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, UInt32Array};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::hash_utils::{create_hashes, RandomState};
use datafusion::error::Result as DFResult;
use datafusion::logical_expr::{
    lit, ColumnarValue, Expr, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};

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

impl PassOf {
    fn new(count: u32) -> Self {
        Self {
            count,
            signature: Signature::variadic_any(Volatility::Immutable),
        }
    }
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

/// Pass `index` of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pass {
    /// Which pass (0-based).
    pub index: u32,
    /// How many passes.
    pub count: u32,
}

/// The predicate that keeps the rows of `pass`, given the key columns (cast to one type per
/// key column on both sides of the join).
pub fn pass_filter(keys: Vec<Expr>, pass: Pass) -> Expr {
    ScalarUDF::from(PassOf::new(pass.count))
        .call(keys)
        .eq(lit(pass.index))
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Int64Array, StringArray};
    use datafusion::arrow::datatypes::Field;

    fn passes_of(arrays: Vec<ArrayRef>, count: u32) -> Vec<u32> {
        let n = arrays[0].len();
        let fields = arrays
            .iter()
            .map(|a| Arc::new(Field::new("k", a.data_type().clone(), true)))
            .collect();
        let out = PassOf::new(count)
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
}
