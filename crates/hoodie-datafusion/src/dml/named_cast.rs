//! Casts into a table's columns that name the column when a value does not fit. DataFusion's
//! planner casts an INSERT's (or an UPDATE's) values to the target's column types in the
//! projection under the write; a value computed at run time that the cast refuses then fails
//! with Arrow's words alone (`Cannot cast string 'x' to value of Int32 type`), which a user of
//! a wide table cannot place. Literals are checked before planning (`sql::write`); this is
//! the rest, and MERGE's assignments (literal or not), whose casts hoodie's MERGE planning
//! writes.

use std::sync::Arc;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::format::DEFAULT_CAST_OPTIONS;
use datafusion::common::{internal_err, Result, ScalarValue};
use datafusion::logical_expr::expr::Alias;
use datafusion::logical_expr::{
    lit, Cast, ColumnarValue, Expr, LogicalPlan, Projection, ScalarFunctionArgs, ScalarUDF,
    ScalarUDFImpl, Signature, Volatility,
};

use crate::error::{HoodieError, ValueDoesNotFit};

/// `input` (a write's input) with the casts of its top projection, each aliased to a column
/// of `table`, made to name that column when they fail.
pub(crate) fn name_columns(input: LogicalPlan, table: &str) -> Result<LogicalPlan> {
    let LogicalPlan::Projection(projection) = input else {
        return Ok(input);
    };
    let Projection {
        expr, input: below, ..
    } = projection;
    let expr = expr
        .into_iter()
        .map(|e| match e {
            Expr::Alias(a) => {
                let column = a.name.clone();
                Ok(Expr::Alias(Alias {
                    expr: Box::new(named(*a.expr, &column, table)?),
                    ..a
                }))
            }
            other => Ok(other),
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(LogicalPlan::Projection(Projection::try_new(expr, below)?))
}

/// `expr`, written into `column` of `table`, with its cast made to name the column: a cast
/// at its top, or the one on the value of a scalar subquery (where DataFusion's UPDATE puts
/// it).
pub(crate) fn named(expr: Expr, column: &str, table: &str) -> Result<Expr> {
    Ok(match expr {
        Expr::Cast(Cast { expr: value, field }) => {
            // a cast to the same type beneath (DataFusion's MERGE planning casts an assigned
            // value, hoodie's casts it again) is the one that can fail
            let mut value = value;
            while let Expr::Cast(inner) = value.as_ref() {
                if inner.field.data_type() != field.data_type() {
                    break;
                }
                value = inner.expr.clone();
            }
            let target = Expr::Literal(ScalarValue::try_from(field.data_type())?, None);
            ScalarUDF::from(StoreCast::default()).call(vec![
                *value,
                target,
                lit(column),
                lit(table),
            ])
        }
        Expr::ScalarSubquery(mut query) => {
            let plan = Arc::unwrap_or_clone(query.subquery);
            query.subquery = Arc::new(name_value(plan, column, table)?);
            Expr::ScalarSubquery(query)
        }
        other => other,
    })
}

/// A scalar subquery's `plan` with the cast of the one value it projects named.
fn name_value(plan: LogicalPlan, column: &str, table: &str) -> Result<LogicalPlan> {
    let LogicalPlan::Projection(projection) = plan else {
        return Ok(plan);
    };
    if projection.expr.len() != 1 {
        return Ok(LogicalPlan::Projection(projection));
    }
    let Projection {
        mut expr,
        input: below,
        ..
    } = projection;
    let value = expr.remove(0);
    // the value keeps its name: the query above reads it by that name
    let name = value.schema_name().to_string();
    let value = match value {
        Expr::Alias(a) => Expr::Alias(Alias {
            expr: Box::new(named(*a.expr, column, table)?),
            ..a
        }),
        other => named(other, column, table)?.alias(name),
    };
    Ok(LogicalPlan::Projection(Projection::try_new(
        vec![value],
        below,
    )?))
}

/// `hoodie_store_cast(v, target, column, table)`: `v` cast to the type of `target` (a NULL of
/// that type) as DataFusion's `CAST` does, failing with the column (`column` of `table`) the
/// value was written into. Its settings are its arguments, so that a worker of a cluster runs
/// it by its name.
#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct StoreCast {
    signature: Signature,
}

impl Default for StoreCast {
    fn default() -> Self {
        Self {
            signature: Signature::any(4, Volatility::Immutable),
        }
    }
}

impl ScalarUDFImpl for StoreCast {
    fn name(&self) -> &str {
        "hoodie_store_cast"
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        match arg_types {
            [_, to, _, _] => Ok(to.clone()),
            _ => internal_err!("hoodie_store_cast takes four arguments"),
        }
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let [value, target, column, table] = args.args.as_slice() else {
            return internal_err!("hoodie_store_cast takes four arguments");
        };
        let to = target.data_type();
        let text = |v: &ColumnarValue| match v {
            ColumnarValue::Scalar(ScalarValue::Utf8(Some(s))) => s.clone(),
            _ => "?".to_string(),
        };
        value
            .cast_to(&to, Some(&DEFAULT_CAST_OPTIONS))
            .map_err(|e| {
                HoodieError::ValueDoesNotFit(Box::new(ValueDoesNotFit {
                    value: "a value".into(),
                    column: text(column),
                    table: text(table),
                    to: to.to_string(),
                    detail: crate::error::df_message(&e),
                }))
                .into_datafusion()
            })
    }
}

/// Whether `expr` is a cast [`name_columns`] made.
#[cfg(test)]
fn is_store_cast(expr: &Expr) -> bool {
    matches!(expr, Expr::Alias(a) if matches!(a.expr.as_ref(),
        Expr::ScalarFunction(f) if f.func.name() == "hoodie_store_cast"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::prelude::SessionContext;

    #[tokio::test]
    async fn a_value_that_does_not_fit_names_its_column_and_the_others_are_cast_as_before() {
        let ctx = SessionContext::new();
        ctx.sql("CREATE TABLE src AS VALUES ('1', 'a'), ('x', 'b')")
            .await
            .unwrap();
        let df = ctx
            .sql("SELECT CAST(column1 AS INT) AS id, column2 AS v FROM src")
            .await
            .unwrap();
        let plan = name_columns(df.logical_plan().clone(), "t").unwrap();
        let LogicalPlan::Projection(p) = &plan else {
            panic!("{plan}")
        };
        assert!(
            is_store_cast(&p.expr[0]) && !is_store_cast(&p.expr[1]),
            "{plan}"
        );
        let err = ctx
            .execute_logical_plan(plan)
            .await
            .unwrap()
            .collect()
            .await
            .unwrap_err();
        let text = crate::error::df_message(&err);
        assert!(
            text.starts_with("cannot write a value into column id of t (Int32): ")
                && text.contains("Cannot cast string 'x'"),
            "{text}"
        );
        // values that fit are cast as DataFusion's CAST casts them
        let ok = ctx
            .sql("SELECT CAST(column1 AS INT) AS id FROM src WHERE column1 = '1'")
            .await
            .unwrap();
        let plan = name_columns(ok.logical_plan().clone(), "t").unwrap();
        let out = ctx
            .execute_logical_plan(plan)
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        assert_eq!(out[0].schema().field(0).data_type(), &DataType::Int32);
        assert_eq!(
            out[0]
                .column(0)
                .as_any()
                .downcast_ref::<datafusion::arrow::array::Int32Array>()
                .unwrap()
                .value(0),
            1
        );
    }
}
