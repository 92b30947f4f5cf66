//! Struct values written into struct columns field by field, by position, as Spark's store
//! assignment does: `insert into t select 1, named_struct('x1', 'v', 'x2', ...)` into a column
//! `nested struct<a1: string, a2: ...>` puts `x1` into `a1`. DataFusion casts a struct to a
//! struct only when their fields have the same names, so the cast its planner puts on an
//! INSERT's values (or hoodie's MERGE on its assignments) becomes a new struct of the target's
//! field names built from the value's fields in order; a NULL struct stays NULL.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, StructArray};
use datafusion::arrow::compute as arrow_cast;
use datafusion::arrow::datatypes::{DataType, Fields};
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{internal_err, DFSchema, Result, ScalarValue};
use datafusion::logical_expr::{
    cast, Cast, ColumnarValue, Expr, ExprSchemable, LogicalPlan, ScalarFunctionArgs, ScalarUDF,
    ScalarUDFImpl, Signature, Volatility,
};

/// `plan` with every cast of a struct to a struct of other field names in its projections and
/// VALUES lists rebuilt by position.
pub(crate) fn by_position_in_plan(plan: LogicalPlan) -> Result<LogicalPlan> {
    plan.transform_up(|node| {
        // the expressions of a projection read its input; a VALUES list's read nothing
        let schema = match &node {
            LogicalPlan::Projection(p) => p.input.schema().as_ref().clone(),
            LogicalPlan::Values(_) => DFSchema::empty(),
            _ => return Ok(Transformed::no(node)),
        };
        node.map_expressions(|e| by_position_in_expr(e, &schema))
    })
    .map(|t| t.data)
}

/// `expr` with its casts of structs to structs of other field names rebuilt by position.
pub(crate) fn by_position_in_expr(expr: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    expr.transform_up(|e| {
        let Expr::Cast(Cast { expr, field }) = &e else {
            return Ok(Transformed::no(e));
        };
        let from = expr.get_type(schema)?;
        match positional(expr.as_ref().clone(), &from, field.data_type()) {
            Some(rebuilt) => Ok(Transformed::yes(rebuilt)),
            None => Ok(Transformed::no(e)),
        }
    })
}

/// `value` (of type `to`'s counterpart `from`) as `to`: by position where both are structs of
/// as many fields under other names, else a plain cast.
pub(crate) fn cast_by_position(value: Expr, from: &DataType, to: &DataType) -> Expr {
    positional(value.clone(), from, to).unwrap_or_else(|| cast(value, to.clone()))
}

/// `value` as the struct `to` by position, when `from` and `to` are structs of as many fields
/// whose names differ (None: DataFusion's cast does it, or nothing can).
fn positional(value: Expr, from: &DataType, to: &DataType) -> Option<Expr> {
    let (DataType::Struct(f), DataType::Struct(t)) = (from, to) else {
        return None;
    };
    if f.len() != t.len() || same_names(f, t) {
        return None;
    }
    let target = Expr::Literal(ScalarValue::try_from(to).ok()?, None);
    Some(ScalarUDF::from(ByPosition::default()).call(vec![value, target]))
}

fn same_names(a: &Fields, b: &Fields) -> bool {
    a.iter()
        .zip(b.iter())
        .all(|(x, y)| x.name().eq_ignore_ascii_case(y.name()))
}

/// `hoodie_struct_by_position(v, target)`: the struct `v` as the type of `target` (a NULL of
/// it), field by field in order. Built on the arrays rather than as `CASE WHEN v IS NULL ...
/// ELSE named_struct(...)` because the struct's own validity has to carry over as it is: a
/// NULL struct stays NULL, a struct of NULL fields stays a struct. Its type is an argument,
/// so that a worker of a cluster runs it by its name.
#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct ByPosition {
    signature: Signature,
}

impl Default for ByPosition {
    fn default() -> Self {
        Self {
            signature: Signature::any(2, Volatility::Immutable),
        }
    }
}

impl ScalarUDFImpl for ByPosition {
    fn name(&self) -> &str {
        "hoodie_struct_by_position"
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        match arg_types {
            [_, to] => Ok(to.clone()),
            _ => internal_err!("hoodie_struct_by_position takes two arguments"),
        }
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let [value, target] = args.args.as_slice() else {
            return internal_err!("hoodie_struct_by_position takes two arguments");
        };
        let rows = args.number_rows;
        let array = value.to_array(rows)?;
        Ok(ColumnarValue::Array(array_by_position(
            &array,
            &target.data_type(),
        )?))
    }
}

/// `array` as `to`: structs of as many fields by position (their validity kept), anything
/// else by Arrow's cast.
fn array_by_position(array: &ArrayRef, to: &DataType) -> Result<ArrayRef> {
    match (array.data_type(), to) {
        (DataType::Struct(f), DataType::Struct(t)) if f.len() == t.len() => {
            let s = array.as_struct();
            let columns = s
                .columns()
                .iter()
                .zip(t.iter())
                .map(|(c, tf)| array_by_position(c, tf.data_type()))
                .collect::<Result<Vec<_>>>()?;
            Ok(Arc::new(StructArray::try_new(
                t.clone(),
                columns,
                s.nulls().cloned(),
            )?))
        }
        _ => Ok(arrow_cast::cast(array, to)?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::datatypes::Field;
    use datafusion::logical_expr::lit;
    use datafusion::prelude::SessionContext;

    fn st(fields: Vec<(&str, DataType)>) -> DataType {
        DataType::Struct(
            fields
                .into_iter()
                .map(|(n, t)| Arc::new(Field::new(n, t, true)))
                .collect(),
        )
    }

    #[tokio::test]
    async fn a_struct_of_other_field_names_is_cast_by_position_and_null_stays_null() {
        let ctx = SessionContext::new();
        let target = st(vec![
            ("a1", DataType::Utf8),
            (
                "a2",
                st(vec![("b1", DataType::Int32), ("b2", DataType::Utf8)]),
            ),
        ]);
        let source = "named_struct('x1', 'v', 'x2', named_struct('y1', 5, 'y2', 'w'))";
        let df = ctx
            .sql(&format!(
                "SELECT {source} AS s UNION ALL SELECT CAST(NULL AS STRUCT<x1: STRING, x2: STRUCT<y1: BIGINT, y2: STRING>>)"
            ))
            .await
            .unwrap();
        let schema = df.schema().clone();
        let from = schema.field(0).data_type().clone();
        let e = cast_by_position(Expr::Column(schema.columns()[0].clone()), &from, &target);
        let out = df
            .select(vec![e.alias("t")])
            .unwrap()
            .collect()
            .await
            .unwrap();
        let text = datafusion::arrow::util::pretty::pretty_format_batches(&out)
            .unwrap()
            .to_string();
        assert!(text.contains("{a1: v, a2: {b1: 5, b2: w}}"), "{text}");
        assert_eq!(out[0].schema().field(0).data_type(), &target);
        let nulls: usize = out.iter().map(|b| b.column(0).null_count()).sum();
        assert_eq!(nulls, 1, "{text}");
        // fields of the same names, or of another count, are left to DataFusion's cast
        assert!(positional(lit(1), &target, &target).is_none());
        let fewer = st(vec![("x1", DataType::Utf8)]);
        assert!(positional(lit(1), &fewer, &target).is_none());
    }
}
